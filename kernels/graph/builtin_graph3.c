/* The graph template's level-3 ops, one float kernel per node (as
 * problems/gen/level2/refcu3.py does in double): index maps (permute, slice,
 * expand, pad, masked_fill, concat: one copy per operand), cumsum (a thread
 * per line, double sum), batched matmul (16x16 tiles) and rnn (per layer:
 * one GEMM of each direction's input projection over all steps, then one
 * launch per step for both directions in a launch-block loop). Each head
 * ends in the group's epilogue but rnn, which takes none. */
#include "kernels/graph/builtin_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/builtin_util.h"
#include "kernels/emit/builtin_epi.h"
#include "gen/graph3_cuh.h"

static int dim_of(const struct gr_plan *p, int k, const char *key)
{
	long long d = gr_int(p->n[k].j, key, 0, 0);
	int r = p->t[p->n[k].in[0]].rank;

	return (int)(d < 0 ? d + r : d);
}

static void strides(const struct gr_tensor *t, long long *st)
{
	long long a = 1;

	for (int d = t->rank - 1; d >= 0; d--) {
		st[d] = a;
		a *= t->shape[d];
	}
}

static int same_shape(const struct gr_tensor *a, const struct gr_tensor *b)
{
	if (a->rank != b->rank)
		return 0;
	for (int d = 0; d < a->rank; d++)
		if (a->shape[d] != b->shape[d])
			return 0;
	return 1;
}

static int rnn_gates(const char *kind)
{
	return !strcmp(kind, "lstm") ? 4 : !strcmp(kind, "gru") ? 3 :
	       (!strcmp(kind, "rnn_tanh") || !strcmp(kind, "rnn_relu")) ? 1 : 0;
}

static int check_rnn(const struct gr_plan *p, int k, struct buf *err)
{
	const struct gr_node *n = &p->n[k];
	const json_t *j = n->j;
	const struct gr_tensor *x = &p->t[n->in[0]], *o = &p->t[n->out];
	long long L = gr_int(j, "layers", 0, 0), H = gr_int(j, "hidden", 0, 0), T, B, I;
	int G = rnn_gates(gr_str(j, "kind")), D = json_is_true(json_object_get(j, "bidirectional")) ? 2 : 1;
	int bf = json_is_true(json_object_get(j, "batch_first")), bias = json_is_true(json_object_get(j, "bias"));
	int h0 = json_is_true(json_object_get(j, "h0")), c0 = json_is_true(json_object_get(j, "c0"));
	int a = 1 + h0 + c0, per = bias ? 4 : 2;
	const char *mode = gr_str(j, "output");

	if (!G || L < 1 || L > 64 || H < 1 || H > 65536 || x->rank != 3 || (c0 && G != 4))
		return kf_err(err, "graph: rnn '%s': unsupported", o->name);
	T = x->shape[bf ? 1 : 0];
	B = x->shape[bf ? 0 : 1];
	I = x->shape[2];
	if (n->n_in != a + L * D * per || T > (1 << 20))
		return kf_err(err, "graph: rnn '%s': %d operands", o->name, n->n_in);
	for (int s = 1; s < a; s++)
		if (p->t[n->in[s]].numel != L * D * B * H)
			return kf_err(err, "graph: rnn '%s': initial state shape", o->name);
	for (long long l = 0; l < L; l++)
		for (int d = 0; d < D; d++) {
			const int *w = &n->in[a + (l * D + d) * per];
			long long il = l ? D * H : I;
			if (p->t[w[0]].numel != G * H * il || p->t[w[1]].numel != G * H * H ||
			    (bias && (p->t[w[2]].numel != G * H || p->t[w[3]].numel != G * H)))
				return kf_err(err, "graph: rnn '%s': weight shapes", o->name);
		}
	if (!strcmp(mode, "output")) {
		if (o->numel != T * B * D * H)
			return kf_err(err, "graph: rnn '%s': output shape", o->name);
	} else if (!strcmp(mode, "h_n") || (!strcmp(mode, "c_n") && G == 4)) {
		if (o->numel != L * D * B * H)
			return kf_err(err, "graph: rnn '%s': state shape", o->name);
	} else {
		return kf_err(err, "graph: rnn '%s': output '%s'", o->name, mode);
	}
	return 0;
}

int gr_check3(const struct gr_plan *p, int k, struct buf *err)
{
	const struct gr_node *n = &p->n[k];
	const struct gr_tensor *x = &p->t[n->in[0]], *o = &p->t[n->out];
	const char *op = n->op;
	int d = 0;

	for (int a = 0; a < n->n_in; a++)
		if (p->t[n->in[a]].is_bool && strcmp(op, "dropout"))
			return kf_err(err, "graph: node %d: a bool operand outside dropout", k);
	if (!strcmp(op, "const")) {
		const json_t *v = json_object_get(n->j, "values");
		if (n->n_in || !json_is_array(v) || (long long)json_array_size(v) != o->numel || o->numel > 4096)
			return kf_err(err, "graph: const '%s': bad values", o->name);
		for (size_t i = 0; i < json_array_size(v); i++)
			if (!json_is_number(json_array_get(v, i)))
				return kf_err(err, "graph: const '%s': bad values", o->name);
		return 0;
	}
	if (!n->n_in)
		return kf_err(err, "graph: node %d has no operand", k);
	if (!strcmp(op, "take")) {
		const json_t *ix = json_object_get(n->j, "index");
		if (!json_is_array(ix) || o->rank != x->rank || (long long)json_array_size(ix) != o->shape[0] ||
		    json_array_size(ix) > 65536)
			return kf_err(err, "graph: take '%s': bad index", o->name);
		for (d = 1; d < x->rank; d++)
			if (o->shape[d] != x->shape[d])
				return kf_err(err, "graph: take '%s': bad shape", o->name);
		for (size_t i = 0; i < json_array_size(ix); i++) {
			const json_t *e = json_array_get(ix, i);
			if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) >= x->shape[0])
				return kf_err(err, "graph: take '%s': index out of range", o->name);
		}
	} else if (!strcmp(op, "roll")) {
		const json_t *sh = json_object_get(n->j, "shifts"), *dm = json_object_get(n->j, "dims");
		if (!same_shape(x, o) || !json_is_array(sh) || !json_is_array(dm) ||
		    json_array_size(sh) != json_array_size(dm) || json_array_size(dm) > GR_MAX_RANK)
			return kf_err(err, "graph: roll '%s': bad shifts", o->name);
		for (size_t i = 0; i < json_array_size(dm); i++) {
			long long q = gr_int(n->j, "dims", (int)i, -99), sv = gr_int(n->j, "shifts", (int)i, -1);
			if (q < 0)
				q += x->rank;
			if (q < 0 || q >= x->rank || sv < 0 || sv >= x->shape[q])
				return kf_err(err, "graph: roll '%s': bad shifts", o->name);
		}
	} else if (!strcmp(op, "compare")) {
		if (!same_shape(x, o) || n->n_in != 1 || !json_is_number(json_object_get(n->j, "const")) ||
		    (strcmp(gr_str(n->j, "fn"), "ne") && strcmp(gr_str(n->j, "fn"), "eq")))
			return kf_err(err, "graph: compare '%s': bad node", o->name);
	} else if (!strcmp(op, "masked_fill") && n->n_in == 2) {
		const struct gr_tensor *m = &p->t[n->in[1]];
		if (!same_shape(x, o) || m->rank > o->rank)
			return kf_err(err, "graph: masked_fill '%s': bad mask", o->name);
		for (d = 0; d < m->rank; d++)
			if (m->shape[d] != 1 && m->shape[d] != o->shape[o->rank - m->rank + d])
				return kf_err(err, "graph: masked_fill '%s': bad mask", o->name);
	} else if (!strcmp(op, "permute")) {
		const json_t *perm = json_object_get(n->j, "perm");
		unsigned seen = 0;
		if (!json_is_array(perm) || (int)json_array_size(perm) != x->rank || o->rank != x->rank)
			return kf_err(err, "graph: permute '%s': bad perm", o->name);
		for (d = 0; d < x->rank; d++) {
			long long q = gr_int(n->j, "perm", d, -1);
			if (q < 0 || q >= x->rank || (seen & (1u << q)) || o->shape[d] != x->shape[q])
				return kf_err(err, "graph: permute '%s': bad perm", o->name);
			seen |= 1u << q;
		}
	} else if (!strcmp(op, "slice")) {
		long long st = gr_int(n->j, "start", 0, -1), sp = gr_int(n->j, "stop", 0, -1),
			  step = gr_int(n->j, "step", 0, 1);
		d = dim_of(p, k, "dim");
		if (d < 0 || d >= x->rank || o->rank != x->rank || step < 1 || st < 0 || sp > x->shape[d] ||
		    sp <= st || o->shape[d] != (sp - st + step - 1) / step)
			return kf_err(err, "graph: slice '%s': bad bounds", o->name);
		for (int e = 0; e < x->rank; e++)
			if (e != d && o->shape[e] != x->shape[e])
				return kf_err(err, "graph: slice '%s': bad shape", o->name);
	} else if (!strcmp(op, "expand")) {
		int lead = o->rank - x->rank;
		if (lead < 0)
			return kf_err(err, "graph: expand '%s': bad rank", o->name);
		for (d = 0; d < x->rank; d++)
			if (x->shape[d] != 1 && x->shape[d] != o->shape[lead + d])
				return kf_err(err, "graph: expand '%s': bad shape", o->name);
	} else if (!strcmp(op, "pad")) {
		if (o->rank != x->rank)
			return kf_err(err, "graph: pad '%s': bad rank", o->name);
		for (d = 0; d < x->rank; d++) {
			long long b = gr_int(n->j, "before", d, -1), a = gr_int(n->j, "after", d, -1);
			if (b < 0 || a < 0 || o->shape[d] != x->shape[d] + a + b)
				return kf_err(err, "graph: pad '%s': bad padding", o->name);
		}
	} else if (!strcmp(op, "cumsum") || !strcmp(op, "masked_fill")) {
		d = dim_of(p, k, "dim");
		if (!same_shape(x, o) || n->n_in != 1 || (!strcmp(op, "cumsum") && (d < 0 || d >= x->rank)) ||
		    (!strcmp(op, "masked_fill") && (x->rank < 2 || (strcmp(gr_str(n->j, "where"), "upper") &&
								    strcmp(gr_str(n->j, "where"), "lower")))))
			return kf_err(err, "graph: %s '%s': bad shape", op, o->name);
	} else if (!strcmp(op, "concat")) {
		long long sum = 0;
		d = dim_of(p, k, "dim");
		if (d < 0 || d >= x->rank || o->rank != x->rank)
			return kf_err(err, "graph: concat '%s': bad dim", o->name);
		for (int a = 0; a < n->n_in; a++) {
			const struct gr_tensor *t = &p->t[n->in[a]];
			if (t->rank != o->rank)
				return kf_err(err, "graph: concat '%s': bad operand", o->name);
			for (int e = 0; e < o->rank; e++)
				if (e != d && t->shape[e] != o->shape[e])
					return kf_err(err, "graph: concat '%s': bad operand", o->name);
			sum += t->shape[d];
		}
		if (sum != o->shape[d])
			return kf_err(err, "graph: concat '%s': bad size", o->name);
	} else if (!strcmp(op, "matmul")) {
		const struct gr_tensor *b = &p->t[n->in[1]];
		int r = o->rank;
		if (n->n_in != 2 || x->rank < 2 || b->rank < 2 || r < 2 || r < x->rank || r < b->rank ||
		    o->shape[r - 2] != x->shape[x->rank - 2] || o->shape[r - 1] != b->shape[b->rank - 1] ||
		    x->shape[x->rank - 1] != b->shape[b->rank - 2])
			return kf_err(err, "graph: matmul '%s': bad shapes", o->name);
		for (d = 0; d < r - 2; d++) {
			long long ad = d - (r - x->rank) >= 0 ? x->shape[d - (r - x->rank)] : 1;
			long long bd = d - (r - b->rank) >= 0 ? b->shape[d - (r - b->rank)] : 1;
			if ((ad != 1 && ad != o->shape[d]) || (bd != 1 && bd != o->shape[d]))
				return kf_err(err, "graph: matmul '%s': bad batch", o->name);
		}
	} else if (!strcmp(op, "rnn")) {
		return check_rnn(p, k, err);
	}
	return 0;
}

/* The kernel of one head: body over `i` < numel (one thread each). */
static int map_kernel(struct gr_plan *p, int gi, const char *tag, const char *in_params,
		      const char *in_args, const char *body, long long numel, struct gr_epi *e,
		      struct buf *err)
{
	struct buf b = BUF_INIT, sig = BUF_INIT, args = BUF_INIT, grid = BUF_INIT;
	char name[48];
	int rc;

	buf_addf(&b, "    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
		     "    if (i >= %lldLL) return;\n%s", numel, body);
	gr_sig(&sig, p, in_params, e);
	gr_args(&args, p, gi, in_args, e);
	buf_addf(&grid, "%lld", (numel + p->block - 1) / p->block);
	snprintf(name, sizeof(name), "g%d_%s", gi, tag);
	rc = gr_kernel(p, name, sig.s, b.s, grid.s, p->block, args.s, err);
	buf_release(&b);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}

/* permute, slice, expand, pad, masked_fill: out element i reads x[s]. */
static int map_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_node *n = &p->n[p->g[gi].head];
	const struct gr_tensor *x = &p->t[n->in[0]], *o = &p->t[n->out];
	long long xs[GR_MAX_RANK];
	struct buf body = BUF_INIT, a = BUF_INIT;
	const char *op = n->op, *val = "x[s]";
	char xn[80], tk[32];
	int rc, lead = o->rank - x->rank, sd = dim_of(p, p->g[gi].head, "dim");

	strides(x, xs);
	if (!strcmp(op, "take")) {
		const json_t *ix = json_object_get(n->j, "index");
		for (size_t q = 0; q < json_array_size(ix); q++)
			buf_addf(&a, "%s%lld", q ? (q % 16 ? ", " : ",\n") : "",
				 (long long)json_integer_value(json_array_get(ix, q)));
		rc = gr_array(p, "int", "take", gi, json_array_size(ix), a.s, tk, sizeof(tk), err);
		buf_reset(&a);
		if (rc) {
			buf_release(&a);
			return rc;
		}
	}
	buf_adds(&body, "    long long r = i, s = 0, c, ms = 0;\n    bool in = true;\n");
	for (int d = o->rank - 1; d >= 0; d--) {
		buf_addf(&body, "    c = r %% %lldLL; r /= %lldLL;\n", o->shape[d], o->shape[d]);
		if (!strcmp(op, "permute")) {
			buf_addf(&body, "    s += c * %lldLL;\n", xs[gr_int(n->j, "perm", d, 0)]);
		} else if (!strcmp(op, "take")) {
			if (!d)
				buf_addf(&body, "    c = %s[c];\n", tk);
			buf_addf(&body, "    s += c * %lldLL;\n", xs[d]);
		} else if (!strcmp(op, "roll")) {
			for (size_t q = 0; q < json_array_size(json_object_get(n->j, "dims")); q++) {
				long long dq = gr_int(n->j, "dims", (int)q, 0);
				if ((dq < 0 ? dq + o->rank : dq) == d)
					buf_addf(&body, "    c = (c + %lldLL) %% %lldLL;\n",
						 o->shape[d] - gr_int(n->j, "shifts", (int)q, 0), o->shape[d]);
			}
			buf_addf(&body, "    s += c * %lldLL;\n", xs[d]);
		} else if (!strcmp(op, "compare")) {
			/* elementwise: s = i below */
		} else if (!strcmp(op, "masked_fill") && n->n_in == 2) {
			const struct gr_tensor *m = &p->t[n->in[1]];
			int dm = d - (o->rank - m->rank);
			if (dm >= 0 && m->shape[dm] != 1) {
				long long mst = 1;
				for (int q = dm + 1; q < m->rank; q++)
					mst *= m->shape[q];
				buf_addf(&body, "    ms += c * %lldLL;\n", mst);
			}
		} else if (!strcmp(op, "slice")) {
			if (d == sd)
				buf_addf(&body, "    c = %lldLL + c * %lldLL;\n", gr_int(n->j, "start", 0, 0),
					 gr_int(n->j, "step", 0, 1));
			buf_addf(&body, "    s += c * %lldLL;\n", xs[d]);
		} else if (!strcmp(op, "expand")) {
			if (d >= lead && x->shape[d - lead] != 1)
				buf_addf(&body, "    s += c * %lldLL;\n", xs[d - lead]);
		} else if (!strcmp(op, "pad")) {
			buf_addf(&body, "    c -= %lldLL;\n    in = in && c >= 0 && c < %lldLL;\n"
				    "    s += c * %lldLL;\n", gr_int(n->j, "before", d, 0), x->shape[d], xs[d]);
		} else {	/* masked_fill: the last two coordinates */
			if (d == o->rank - 1)
				buf_adds(&body, "    const long long mj = c;\n");
			if (d == o->rank - 2)
				buf_adds(&body, "    const long long mi = c;\n");
		}
	}
	if (!strcmp(op, "pad")) {
		val = "in ? x[s] : 0.0f";
	} else if (!strcmp(op, "compare")) {
		buf_adds(&body, "    s = i;\n    const float cv = ");
		if (gr_lit(&body, gr_num(n->j, "const", 0), err)) {
			buf_release(&body);
			return -1;
		}
		buf_adds(&body, ";\n");
		val = strcmp(gr_str(n->j, "fn"), "ne") ? "x[s] == cv ? 1.0f : 0.0f" : "x[s] != cv ? 1.0f : 0.0f";
	} else if (!strcmp(op, "masked_fill")) {
		/* the mask an operand, or a triangle of the last two dims */
		const json_t *v = json_object_get(n->j, "value");
		if (n->n_in == 2)
			buf_adds(&body, "    const bool m = mk[ms] != 0.0f;\n    float fill = ");
		else
			buf_addf(&body, "    const bool m = mj - mi %s %lldLL;\n    float fill = ",
				 strcmp(gr_str(n->j, "where"), "upper") ? "<=" : ">=", gr_int(n->j, "diagonal", 0, 0));
		if (json_is_string(v) && !strcmp(json_string_value(v), "-inf"))
			buf_adds(&body, "__int_as_float(-8388608)");
		else if (json_is_string(v) && !strcmp(json_string_value(v), "inf"))
			buf_adds(&body, "__int_as_float(2139095040)");
		else if (!json_is_number(v) || gr_lit(&body, json_number_value(v), err)) {
			buf_release(&body);
			return kf_err(err, "graph: masked_fill '%s': bad value", o->name);
		}
		buf_adds(&body, ";\n    s = i;\n");
		val = "m ? fill : x[s]";
	}
	buf_adds(&body, "    (void)in;\n    (void)ms;\n");
	gr_store_elem(&body, "    ", "i", val, e);
	buf_addf(&a, "%s, ", gr_store(p, n->in[0], xn, sizeof(xn)));
	if (n->n_in == 2)
		buf_addf(&a, "%s, ", gr_store(p, n->in[1], xn, sizeof(xn)));
	rc = map_kernel(p, gi, op, n->n_in == 2 ? "const float* __restrict__ x, const float* __restrict__ mk, " :
			"const float* __restrict__ x, ", a.s, body.s, o->numel, e, err);
	buf_release(&body);
	buf_release(&a);
	return rc;
}

/* A concat whose leading operands are an earlier concat's, in order and
 * along the same dim, reads that concat's result in their place (DenseNet's
 * growing feature list: k copy launches a layer become 2, the same bytes;
 * DenseNet201's 1,803 copies took most of its source). The earlier lists
 * are compared as written, so the nodes are visited from the last. */
void gr_concat_prefix(struct gr_plan *p)
{
	for (int k = p->nn - 1; k > 0; k--) {
		struct gr_node *n = &p->n[k];
		int best = -1, bm = 1;

		if (strcmp(n->op, "concat") || n->n_in < 3)
			continue;
		for (int j = 0; j < k; j++) {
			const struct gr_node *m = &p->n[j];
			if (!strcmp(m->op, "concat") && m->n_in > bm && m->n_in < n->n_in &&
			    dim_of(p, j, "dim") == dim_of(p, k, "dim") &&
			    !memcmp(m->in, n->in, sizeof(m->in[0]) * (size_t)m->n_in)) {
				best = j;
				bm = m->n_in;
			}
		}
		if (best < 0)
			continue;
		n->in[0] = p->n[best].out;
		memmove(n->in + 1, n->in + bm, sizeof(n->in[0]) * (size_t)(n->n_in - bm));
		n->n_in -= bm - 1;
	}
}

/* concat: one copy kernel per operand into its slice of the result. */
static int concat_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_node *n = &p->n[p->g[gi].head];
	const struct gr_tensor *o = &p->t[n->out];
	int d = dim_of(p, p->g[gi].head, "dim"), rc = 0;
	long long inner = 1, off = 0;

	for (int k = d + 1; k < o->rank; k++)
		inner *= o->shape[k];
	for (int a = 0; a < n->n_in && !rc; a++) {
		const struct gr_tensor *t = &p->t[n->in[a]];
		long long L = t->shape[d];
		struct buf body = BUF_INIT, args = BUF_INIT;
		char xn[80], tag[32];
		buf_addf(&body, "    const long long o = i / %lldLL, c = i / %lldLL %% %lldLL, q = i %% %lldLL;\n",
			 L * inner, inner, L, inner);
		buf_addf(&body, "    const long long w = (o * %lldLL + %lldLL + c) * %lldLL + q;\n",
			 o->shape[d], off, inner);
		gr_store_elem(&body, "    ", "w", "x[i]", e);
		buf_addf(&args, "%s, ", gr_store(p, n->in[a], xn, sizeof(xn)));
		snprintf(tag, sizeof(tag), "cat%d", a);
		rc = map_kernel(p, gi, tag, "const float* __restrict__ x, ", args.s, body.s, t->numel, e, err);
		buf_release(&body);
		buf_release(&args);
		off += L;
	}
	return rc;
}

static int cumsum_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_node *n = &p->n[p->g[gi].head];
	const struct gr_tensor *o = &p->t[n->out];
	int d = dim_of(p, p->g[gi].head, "dim"), rc;
	long long inner = 1, L = o->shape[d];
	struct buf body = BUF_INIT, a = BUF_INIT;
	char xn[80];

	for (int k = d + 1; k < o->rank; k++)
		inner *= o->shape[k];
	buf_addf(&body, "    const long long base = i / %lldLL * %lldLL + i %% %lldLL;\n"
		    "    double acc = 0.0;\n    for (long long c = 0; c < %lldLL; c++) {\n"
		    "        acc += (double)x[base + c * %lldLL];\n",
		 inner, L * inner, inner, L, inner);
	{
		char idx[64];
		snprintf(idx, sizeof(idx), "base + c * %lldLL", inner);
		gr_store_elem(&body, "        ", idx, "(float)acc", e);
	}
	buf_adds(&body, "    }\n");
	buf_addf(&a, "%s, ", gr_store(p, n->in[0], xn, sizeof(xn)));
	rc = map_kernel(p, gi, "cumsum", "const float* __restrict__ x, ", a.s, body.s,
			o->numel / L, e, err);
	buf_release(&body);
	buf_release(&a);
	return rc;
}

/* A 16x16-tiled GEMM body: C[z][m][n] = sum_k A(m, k) B(k, n), A at
 * a[aoff + m * SAM + k * SAK], B at b[boff + k * SBK + n * SBN]; `boffs`
 * sets aoff and boff from z; `st` the store of acc at (m, n). */
static void mm_body(struct buf *b, long long M, long long N, long long K, long long sam, long long sak,
		    long long sbk, long long sbn, const char *boffs, const char *st)
{
	bt_cuh_fill(b, graph3_cuh, "mm_body", "BOFFS", boffs, "K", BT_INT(K), "M", BT_INT(M),
		    "SAM", BT_INT(sam), "SAK", BT_INT(sak), "N", BT_INT(N), "SBK", BT_INT(sbk),
		    "SBN", BT_INT(sbn), "STORE", st, NULL);
}

/* Whether t's dims before the last two are o's (every batch its own
 * matrix: 1) or all 1 (one matrix for every batch: 0); else -1. */
static int batched(const struct gr_tensor *t, const struct gr_tensor *o)
{
	long long n = 1;

	for (int d = 0; d < t->rank - 2; d++)
		n *= t->shape[d];
	if (n == 1)
		return 0;
	if (t->rank != o->rank)
		return -1;
	for (int d = 0; d < t->rank - 2; d++)
		if (t->shape[d] != o->shape[d])
			return -1;
	return 1;
}

/* A matmul on the tensor-core GEMM emitter where it fits: each operand
 * batched like the result or shared by every batch. 1: not taken. */
static int matmul_tc(struct gr_plan *p, int gi, struct gr_epi *e, long long M, long long N, long long K,
		     long long Z, struct buf *err)
{
	const struct gr_node *n = &p->n[p->g[gi].head];
	const struct gr_tensor *x = &p->t[n->in[0]], *w = &p->t[n->in[1]];
	int ba = batched(x, &p->t[n->out]), bb = batched(w, &p->t[n->out]), rc;
	struct gemm_shape sh = { Z, M, N, K, 0, 0, ba == 0, bb == 0, { NULL, NULL, NULL, NULL } };
	struct epi ep = { e->params.s, e->args.s, NULL };
	struct buf code = BUF_INIT;
	char an[80], bn[80], yn[80], name[48];

	if (!gr_tc_fits(p) || ba < 0 || bb < 0 || x->rank < 2 || w->rank < 2)
		return 1;
	buf_addf(&code, "{\n        const long long ei = (b * %lldLL + m) * %lldLL + n;\n%s        }\n", M, N,
		 e->code.s ? e->code.s : "");
	ep.code = code.s;
	snprintf(name, sizeof(name), "g%d_matmul_tc", gi);
	rc = gr_gemm_tc(p, name, &sh, gr_store(p, n->in[0], an, sizeof(an)), gr_store(p, n->in[1], bn, sizeof(bn)),
			gr_store(p, p->g[gi].out, yn, sizeof(yn)), &ep, err);
	buf_release(&code);
	return rc;
}

static int matmul_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_node *n = &p->n[p->g[gi].head];
	const struct gr_tensor *x = &p->t[n->in[0]], *w = &p->t[n->in[1]], *o = &p->t[n->out];
	long long M = o->shape[o->rank - 2], N = o->shape[o->rank - 1], K = x->shape[x->rank - 1];
	long long Z = o->numel / (M * N), as[GR_MAX_RANK], bs[GR_MAX_RANK];
	struct buf body = BUF_INIT, offs = BUF_INIT, st = BUF_INIT, sig = BUF_INIT, args = BUF_INIT,
		   grid = BUF_INIT, pre = BUF_INIT;
	char an[80], bn[80], name[48];
	int rc, r = o->rank;

	if (Z >= 65536 || (M + 15) / 16 >= 65536)
		return kf_err(err, "graph: matmul '%s': %lld batches of %lld rows", o->name, Z, M);
	if ((rc = matmul_tc(p, gi, e, M, N, K, Z, err)) <= 0)
		return rc;
	strides(x, as);
	strides(w, bs);
	buf_adds(&offs, "    { long long r = z, c;\n");
	for (int d = r - 3; d >= 0; d--) {
		int da = d - (r - x->rank), db = d - (r - w->rank);
		buf_addf(&offs, "      c = r %% %lldLL; r /= %lldLL;\n", o->shape[d], o->shape[d]);
		if (da >= 0 && x->shape[da] != 1)
			buf_addf(&offs, "      aoff += c * %lldLL;\n", as[da]);
		if (db >= 0 && w->shape[db] != 1)
			buf_addf(&offs, "      boff += c * %lldLL;\n", bs[db]);
	}
	buf_adds(&offs, "      (void)c; }\n");
	rc = gr_dmma_mm(p, gi, e, M, N, K, Z, offs.s, gr_store(p, n->in[0], an, sizeof(an)),
			gr_store(p, n->in[1], bn, sizeof(bn)), err);
	if (rc <= 0) {
		buf_release(&offs);
		return rc;
	}
	gr_store_elem(&st, "        ", "(z * M_ + m) * N_ + n", "acc", e);
	mm_body(&body, M, N, K, K, 1, N, 1, offs.s, st.s);
	gr_sig(&sig, p, "const float* __restrict__ a, const float* __restrict__ b, ", e);
	buf_addf(&args, "%s, %s, ", gr_store(p, n->in[0], an, sizeof(an)), gr_store(p, n->in[1], bn, sizeof(bn)));
	gr_args(&args, p, gi, "", e);
	buf_addf(&grid, "dim3(%lld, %lld, %lld)", (N + 15) / 16, (M + 15) / 16, Z);
	snprintf(name, sizeof(name), "g%d_matmul", gi);
	buf_addf(&pre, "#define M_ %lldLL\n#define N_ %lldLL\n", M, N);
	p->pre = pre.s;
	p->post = "#undef M_\n#undef N_\n";
	rc = gr_kernel(p, name, sig.s, body.s, grid.s, 256, args.s, err);
	buf_release(&pre);
	buf_release(&body);
	buf_release(&offs);
	buf_release(&st);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}

/* rnn, per layer: per direction gx = x W_ih^T + b_ih over all steps (one
 * GEMM, tensor cores where they fit), then T launches of the step, both
 * directions in one: a warp per hidden unit sums its gates' rows of W_hh
 * (lanes split k, coalesced) against up to 8 batch rows of the previous h
 * held in shared memory, reduced across the warp; lane q updates row b0+q. */
static int rnn_proj(struct gr_plan *p, int gi, long long l, int d, long long M, long long N, long long K,
		    const char *xn, const char *wih, const char *bih, const char *yo, struct buf *err)
{
	struct buf body = BUF_INIT, st = BUF_INIT, args = BUF_INIT, grid = BUF_INIT;
	char name[64];
	int rc;

	snprintf(name, sizeof(name), "g%d_rnn_proj_l%lld_d%d", gi, l, d);
	if (gr_tc_fits(p)) {
		struct gemm_shape sh = { 1, M, N, K, 0, 1, 0, 0, { NULL, NULL, NULL, NULL } };
		struct epi ep = { bih ? ", const float* __restrict__ e0" : "", "", bih ? "v += e0[n];\n" : "" };
		char ea[96];

		snprintf(ea, sizeof(ea), ", %s", bih ? bih : "");
		ep.args = bih ? ea : "";
		if ((rc = gr_gemm_tc(p, name, &sh, xn, wih, yo, &ep, err)) <= 0)
			return rc;
	}
	buf_addf(&st, "        y[m * %lldLL + n] = acc%s;\n", N, bih ? " + bias[n]" : "");
	mm_body(&body, M, N, K, K, 1, 1, K, "", st.s);
	buf_addf(&args, "%s, %s, %s%s%s", xn, wih, yo, bih ? ", " : "", bih ? bih : "");
	buf_addf(&grid, "dim3(%lld, %lld, 1)", (N + 15) / 16, (M + 15) / 16);
	rc = gr_kernel(p, name, bih ? "const float* __restrict__ a, const float* __restrict__ b, "
				      "float* __restrict__ y, const float* __restrict__ bias"
				    : "const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y",
		       body.s, grid.s, 256, args.s, err);
	buf_release(&body);
	buf_release(&st);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}

/* Batch rows per step block: at most 8, as even as B allows, and the
 * previous h of those rows within 40 KiB of shared memory. */
static long long rnn_rows(long long B, long long H)
{
	long long chunks = (B + 7) / 8, nb = (B + chunks - 1) / chunks;

	while (nb > 1 && nb * H > 10240) {
		chunks++;
		nb = (B + chunks - 1) / chunks;
	}
	return nb;
}

static int rnn_head(struct gr_plan *p, int gi, struct buf *err)
{
	const struct gr_node *n = &p->n[p->g[gi].head];
	const json_t *j = n->j;
	const struct gr_tensor *x = &p->t[n->in[0]];
	int G = rnn_gates(gr_str(j, "kind")), D = json_is_true(json_object_get(j, "bidirectional")) ? 2 : 1;
	int bf = json_is_true(json_object_get(j, "batch_first")), bias = json_is_true(json_object_get(j, "bias"));
	int h0 = json_is_true(json_object_get(j, "h0")), c0 = json_is_true(json_object_get(j, "c0"));
	int a0 = 1 + h0 + c0, per = bias ? 4 : 2, rc = 0, prev = -1, gxb[2] = { -1, -1 }, cb = -1;
	long long L = gr_int(j, "layers", 0, 0), H = gr_int(j, "hidden", 0, 0);
	long long T = x->shape[bf ? 1 : 0], B = x->shape[bf ? 0 : 1], I = x->shape[2];
	long long NB = rnn_rows(B, H);
	const char *mode = gr_str(j, "output"), *kind = gr_str(j, "kind");
	int out_mode = !strcmp(mode, "output"), cn_mode = !strcmp(mode, "c_n");
	char yn[80], xn[80], hn[80], cn[80], gn[2][80], wn[2][4][80], cs[80];

	if (NB * H > 10240)
		return kf_err(err, "graph: rnn '%s': hidden size %lld over the step's shared memory",
			      p->t[n->out].name, H);
	gr_store(p, n->out, yn, sizeof(yn));
	/* each direction's gx its own buffer: the GEMM emitters take names */
	for (int d = 0; d < D; d++) {
		if ((gxb[d] = gr_take_buf(p, T * B * G * H, 0, err)) < 0)
			return gxb[d];
		gr_buf_name(p, gxb[d], gn[d], sizeof(gn[d]));
	}
	if (D == 1)
		snprintf(gn[1], sizeof(gn[1]), "%s", gn[0]);
	if (G == 4 && (cb = gr_take_buf(p, D * B * H, 0, err)) < 0)
		return cb;
	if (cb >= 0)
		gr_buf_name(p, cb, cs, sizeof(cs));
	else
		snprintf(cs, sizeof(cs), "%s", gn[0]);
	snprintf(hn, sizeof(hn), "%s", gn[0]);
	snprintf(cn, sizeof(cn), "%s", gn[0]);
	if (h0)
		gr_store(p, n->in[1], hn, sizeof(hn));
	if (c0)
		gr_store(p, n->in[2], cn, sizeof(cn));
	for (long long l = 0; l < L && !rc; l++) {
		long long il = l ? D * H : I;
		int ob = -1;
		char on[80], name[64];
		struct buf body = BUF_INIT, args = BUF_INIT, grid = BUF_INIT, pre = BUF_INIT;

		/* this layer's output: the result itself where it is */
		if (out_mode && l == L - 1) {
			snprintf(on, sizeof(on), "%s", yn);
		} else {
			if ((ob = gr_take_buf(p, T * B * D * H, 0, err)) < 0)
				return ob;
			gr_buf_name(p, ob, on, sizeof(on));
		}
		if (l == 0)
			gr_store(p, n->in[0], xn, sizeof(xn));
		else
			gr_buf_name(p, prev, xn, sizeof(xn));
		for (int d = 0; d < D && !rc; d++) {
			const int *w = &n->in[a0 + (l * D + d) * per];

			for (int q = 0; q < 4; q++)
				snprintf(wn[d][q], sizeof(wn[d][q]), "%s", gn[0]);
			for (int q = 0; q < per; q++)
				gr_store(p, w[q], wn[d][q], sizeof(wn[d][q]));
			/* gx[d][row][g*H + j], rows in x's order */
			rc = rnn_proj(p, gi, l, d, T * B, G * H, il, xn, wn[d][0], bias ? wn[d][2] : NULL, gn[d],
				      err);
		}
		if (rc)
			break;
		/* the step, both directions */
		bt_cuh_fill(&body, graph3_cuh, "rnn_step", "NB", BT_INT(NB), "G", BT_INT(G),
			    "H0K", h0 ? "h0[h0off + b * H_ + k]" : "0.0f",
			    "BHH", bias ? " + bhh[g * H_ + j]" : "", NULL);
		if (G == 4)
			bt_cuh_fill(&body, graph3_cuh, "lstm_cell",
				    "C0", c0 ? "c0[h0off + b * H_ + j]" : "0.0f", NULL);
		else if (G == 3)
			bt_cuh_section(&body, graph3_cuh, "gru_update");
		else
			buf_addf(&body, "    const float h = %s;\n", !strcmp(kind, "rnn_tanh") ?
				 "tanhf(gx[0] + gh[0])" : "fmaxf(gx[0] + gh[0], 0.0f)");
		buf_adds(&body, "    (void)hprev;\n    out[row * DH_ + d * H_ + j] = h;\n");
		if (!out_mode)
			buf_addf(&body, "    if (s == T_ - 1) y[h0off + b * H_ + j] = %s;\n", cn_mode ? "cc" : "h");
		buf_addf(&pre, "#define T_ %lldLL\n#define B_ %lldLL\n#define H_ %lldLL\n#define DH_ %lldLL\n"
			 "#define GH_ %lldLL\n#define LOFF %lldLL\n#define ROW(b, t) %s\n",
			 T, B, H, D * H, G * H, l * D * B * H,
			 bf ? "((b) * T_ + (t))" : "((t) * B_ + (b))");
		p->pre = pre.s;
		p->post = "#undef T_\n#undef B_\n#undef H_\n#undef DH_\n#undef GH_\n#undef LOFF\n"
			  "#undef ROW\n\n";
		snprintf(name, sizeof(name), "g%d_rnn_step_l%lld", gi, l);
		buf_addf(&args, "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, s", gn[0], gn[1], wn[0][1], wn[D - 1][1],
			 wn[0][3], wn[D - 1][3], hn, cn, cs, on, yn);
		buf_addf(&grid, "dim3(%lld, %lld, %d)", (H + 7) / 8, (B + NB - 1) / NB, D);
		buf_addf(&p->launch, "for (int s = 0; s < %lld; ++s) {\n", T);
		rc = gr_kernel(p, name, "const float* __restrict__ gxs0, const float* __restrict__ gxs1, "
			       "const float* __restrict__ whh0, "
			       "const float* __restrict__ whh1, const float* __restrict__ bhh0, "
			       "const float* __restrict__ bhh1, const float* __restrict__ h0, "
			       "const float* __restrict__ c0, float* __restrict__ c, float* out, float* y, int s",
			       body.s, grid.s, 256, args.s, err);
		buf_adds(&p->launch, "}\n");
		buf_release(&pre);
		buf_release(&body);
		buf_release(&args);
		buf_release(&grid);
		if (prev >= 0)
			p->buf_busy[prev] = 0;
		prev = ob;
	}
	if (prev >= 0)
		p->buf_busy[prev] = 0;
	for (int d = 0; d < D; d++)
		p->buf_busy[gxb[d]] = 0;
	if (cb >= 0)
		p->buf_busy[cb] = 0;
	return rc;
}

/* const: the values in the source (at most 4096, checked at build). */
static int const_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_node *n = &p->n[p->g[gi].head];
	const json_t *v = json_object_get(n->j, "values");
	struct buf body = BUF_INIT;
	char cn[32];
	int rc;

	for (size_t q = 0; q < json_array_size(v); q++) {
		buf_adds(&body, q ? (q % 8 ? ", " : ",\n") : "");
		if (gr_lit(&body, json_number_value(json_array_get(v, q)), err)) {
			buf_release(&body);
			return -1;
		}
	}
	rc = gr_array(p, "float", "cst", gi, json_array_size(v), body.s ? body.s : "", cn, sizeof(cn), err);
	buf_reset(&body);
	if (rc) {
		buf_release(&body);
		return rc;
	}
	buf_addf(&body, "    const float c = %s[i];\n", cn);
	gr_store_elem(&body, "    ", "i", "c", e);
	rc = map_kernel(p, gi, "const", "", "", body.s, p->t[n->out].numel, e, err);
	buf_release(&body);
	return rc;
}

int gr_head3(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const char *op = p->n[p->g[gi].head].op;

	if (!strcmp(op, "const"))
		return const_head(p, gi, e, err);
	if (!strcmp(op, "take") || !strcmp(op, "roll") || !strcmp(op, "compare"))
		return map_head(p, gi, e, err);

	if (!strcmp(op, "permute") || !strcmp(op, "slice") || !strcmp(op, "expand") ||
	    !strcmp(op, "pad") || !strcmp(op, "masked_fill"))
		return map_head(p, gi, e, err);
	if (!strcmp(op, "concat"))
		return concat_head(p, gi, e, err);
	if (!strcmp(op, "cumsum"))
		return cumsum_head(p, gi, e, err);
	if (!strcmp(op, "matmul"))
		return matmul_head(p, gi, e, err);
	if (!strcmp(op, "rnn")) {
		if (p->g[gi].n_chain)
			return kf_err(err, "graph: rnn with an epilogue");
		return rnn_head(p, gi, err);
	}
	return kf_err(err, "graph: op '%s' has no kernel", op);
}

/* Whether node k reads only the running result r (and maybe constants). */
static int only_reads(const struct gr_plan *p, int k, int r)
{
	const struct gr_tensor *t = &p->t[r];

	return p->n[k].n_in >= 1 && p->n[k].in[0] == r && !t->spec && t->users == 1 && t->root == r;
}

int gr_attn_match(const struct gr_plan *p, int k)
{
	const struct gr_tensor *q = &p->t[p->n[k].in[0]], *kt = &p->t[p->n[k].in[1]];
	const struct gr_tensor *s = &p->t[p->n[k].out], *v, *o;
	int r = s->rank, j = k + 1;

	if (r < 2 || q->rank != r || kt->rank != r || s->numel / s->shape[r - 1] / s->shape[r - 2] >= (1LL << 31))
		return -1;
	for (int d = 0; d < r - 2; d++)
		if (q->shape[d] != s->shape[d] || kt->shape[d] != s->shape[d])
			return -1;
	if (q->shape[r - 1] > 256)
		return -1;
	if (j < p->nn && !strcmp(p->n[j].op, "binary") && p->n[j].n_in == 1 &&
	    only_reads(p, j, p->n[j - 1].out) && !json_is_true(json_object_get(p->n[j].j, "swap")) &&
	    (!strcmp(gr_str(p->n[j].j, "fn"), "mul") || !strcmp(gr_str(p->n[j].j, "fn"), "div")) &&
	    json_is_number(json_object_get(p->n[j].j, "const")))
		j++;
	if (j < p->nn && !strcmp(p->n[j].op, "masked_fill") && only_reads(p, j, p->n[j - 1].out))
		j++;
	if (j + 1 >= p->nn || strcmp(p->n[j].op, "softmax") || !only_reads(p, j, p->n[j - 1].out) ||
	    json_is_true(json_object_get(p->n[j].j, "log")) ||
	    (gr_int(p->n[j].j, "dim", 0, 0) != r - 1 && gr_int(p->n[j].j, "dim", 0, 0) != -1))
		return -1;
	j++;
	if (strcmp(p->n[j].op, "matmul") || !only_reads(p, j, p->n[j - 1].out))
		return -1;
	v = &p->t[p->n[j].in[1]];
	o = &p->t[p->n[j].out];
	if (v->rank != r || o->rank != r || v->shape[r - 2] != s->shape[r - 1] || v->shape[r - 1] > 256)
		return -1;
	for (int d = 0; d < r - 2; d++)
		if (v->shape[d] != s->shape[d])
			return -1;
	/* a stored score matrix is fine where small (attn=0 keeps it) */
	if (!p->attn && s->numel <= (1LL << 29))
		return -1;
	return j;
}

/* The chain between the two products, as statements on `sc` (the score of
 * query i and key j); *skip: a whole 64x64 tile's condition where every
 * score in it is masked to -inf ("0" when none). */
static int attn_chain(const struct gr_plan *p, const struct gr_group *g, const char *ind, struct buf *b,
		      struct buf *skip, struct buf *err)
{
	buf_adds(skip, "0");
	for (int c = 0; c < g->fold - 1; c++) {
		const struct gr_node *n = &p->n[g->chain[c]];
		if (!strcmp(n->op, "binary")) {
			buf_addf(b, "%ssc = sc %s ", ind, strcmp(gr_str(n->j, "fn"), "mul") ? "/" : "*");
			if (gr_lit(b, gr_num(n->j, "const", 1.0), err))
				return -1;
			buf_adds(b, ";\n");
		} else if (!strcmp(n->op, "masked_fill")) {
			const json_t *fv = json_object_get(n->j, "value");
			int upper = !strcmp(gr_str(n->j, "where"), "upper");
			long long dg = gr_int(n->j, "diagonal", 0, 0);

			buf_addf(b, "%sif (j - i %s %lldLL) sc = ", ind, upper ? ">=" : "<=", dg);
			if (json_is_string(fv) && !strcmp(json_string_value(fv), "-inf")) {
				buf_adds(b, "__int_as_float(-8388608)");
				/* the mask is the chain's last step (gr_attn_match) */
				buf_reset(skip);
				buf_addf(skip, upper ? "j0 - (i0 + 63) >= %lldLL" : "j0 + 63 - i0 <= %lldLL", dg);
			} else if (json_is_string(fv) && !strcmp(json_string_value(fv), "inf")) {
				buf_adds(b, "__int_as_float(2139095040)");
			} else if (!json_is_number(fv) || gr_lit(b, json_number_value(fv), err)) {
				return kf_err(err, "graph: masked_fill: bad value");
			}
			buf_adds(b, ";\n");
		}
	}
	return 0;
}

/* Attention, the scores never stored. attn 2 (the default): a block per 64
 * queries walks the keys 64 at a time through shared memory (4x4 scores a
 * thread, online softmax per row across 16 lanes, then P V with 4 rows by
 * DV/16 columns a thread); attn 1, or heads over 128 wide: a block per
 * query row, online softmax per thread, then block-wide max, sum and
 * weighted values. */
int gr_attn_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_group *g = &p->g[gi];
	const struct gr_node *h = &p->n[g->head], *mm2 = &p->n[g->chain[g->fold - 1]];
	const struct gr_tensor *s = &p->t[h->out], *o = &p->t[mm2->out];
	int r = s->rank, rc;
	long long M = s->shape[r - 2], S = s->shape[r - 1], D = p->t[h->in[0]].shape[r - 1],
		  DV = o->shape[r - 1], rows = s->numel / S, Z = rows / M;
	int tile = p->attn_tile && !p->f64 && D <= 128 && DV <= 128 && Z < 65536;
	struct buf body = BUF_INIT, sig = BUF_INIT, args = BUF_INIT, grid = BUF_INIT, chain = BUF_INIT;
	struct buf pre = BUF_INIT, skip = BUF_INIT;
	char qn[80], kn[80], vn[80], name[48];

	if ((rc = attn_chain(p, g, tile ? "                " : "        ", &chain, &skip, err)))
		goto out;
	if (tile) {
		bt_cuh_fill(&body, graph3_cuh, "attn_tile_head", "D", BT_INT(D), "DV", BT_INT(DV),
			    "MD", BT_INT(M * D), "DS", BT_INT(D * S), "SDV", BT_INT(S * DV), "M", BT_INT(M),
			    "CV", BT_INT((DV + 15) / 16), "S", BT_INT(S), "SKIP", skip.s, NULL);
		buf_add(&body, chain.s ? chain.s : "", chain.len);
		bt_cuh_fill(&body, graph3_cuh, "attn_tile_soft", "S", BT_INT(S), "CV", BT_INT((DV + 15) / 16),
			    "DV", BT_INT(DV), "M", BT_INT(M), NULL);
		gr_store_elem(&body, "            ", "row * (long long)DV_ + col", "(float)(o[r][c] / l[r])", e);
		buf_adds(&body, "        }\n    }\n");
		buf_addf(&grid, "dim3(%lld, %lld)", (M + 63) / 64, Z);
		p->smem = 4 * (D * 68 + D * 64 + 64 * DV + 64 * 68);
		p->qual = "__launch_bounds__(256)\n";
	} else {
		bt_cuh_fill(&body, graph3_cuh, "attn_head", "D", BT_INT(D), "M", BT_INT(M),
			    "DS", BT_INT(D * S), "SDV", BT_INT(S * DV), "DV", BT_INT(DV),
			    "S", BT_INT(S), NULL);
		buf_add(&body, chain.s ? chain.s : "", chain.len);
		bt_cuh_fill(&body, graph3_cuh, "attn_scores", "DV", BT_INT(DV), NULL);
		gr_store_elem(&body, "            ", "row * (long long)DV_ + c", "(float)(a / tot)", e);
		buf_adds(&body, "        }\n    }\n");
		gr_helpers(p, GR_H_SUM | GR_H_MAX);
		buf_addf(&grid, "%lld", rows);
	}
	gr_sig(&sig, p, "const float* __restrict__ q, const float* __restrict__ kt, const float* __restrict__ v, ", e);
	buf_addf(&args, "%s, %s, %s, ", gr_store(p, h->in[0], qn, sizeof(qn)), gr_store(p, h->in[1], kn, sizeof(kn)),
		 gr_store(p, mm2->in[1], vn, sizeof(vn)));
	gr_args(&args, p, gi, "", e);
	snprintf(name, sizeof(name), "g%d_attn", gi);
	buf_addf(&pre, "#define DV_ %lldLL\n", DV);
	p->pre = pre.s;
	p->post = "#undef DV_\n";
	rc = gr_kernel(p, name, sig.s, body.s, grid.s, tile ? 256 : 128, args.s, err);
out:
	buf_release(&pre);
	buf_release(&skip);
	buf_release(&chain);
	buf_release(&body);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}
