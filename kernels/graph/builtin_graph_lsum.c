/* The graph template's fold of a linear's feature sum: when y = x W^T (+ b)
 * reaches a sum or mean over its output features only through steps
 * t -> a_j t + c_j (mul, div, add, sub by a constant, a one-element or a
 * per-feature tensor; neg, identity),
 *     sum_j (a_j (x . W_j) + f_j(b_j)) = x . (sum_j a_j W_j) + sum_j f_j(b_j).
 * Two kernels, both in double: the weight's column sums (and the constant),
 * then a dot product per row. Cheaper than the GEMM (it reads W once, does
 * no M x N x K work) and accurate where the sum cancels (level-2 14: outputs
 * near 0 from 8192 terms near 50, which an fp32 GEMM misses by 1e-3). */
#include "kernels/graph/builtin_graph.h"

#include <math.h>
#include <string.h>

int gr_affine_step(const struct gr_plan *p, int k, int run, int *other)
{
	const struct gr_node *n = &p->n[k];
	const char *fn = gr_str(n->j, "fn");
	int swap = 0;

	*other = -1;
	if (!strcmp(n->op, "act") && n->n_in == 1 && p->t[n->in[0]].root == run)
		return !strcmp(fn, "neg") ? ST_NEG : !strcmp(fn, "identity") ? ST_ID : ST_NO;
	if (strcmp(n->op, "binary"))
		return ST_NO;
	if (n->n_in == 1) {
		if (p->t[n->in[0]].root != run || !json_is_number(json_object_get(n->j, "const")) ||
		    !isfinite(gr_num(n->j, "const", 0.0)))
			return ST_NO;
		swap = json_is_true(json_object_get(n->j, "swap"));
	} else if (n->n_in == 2) {
		int r0 = p->t[n->in[0]].root == run, r1 = p->t[n->in[1]].root == run;
		if (r0 == r1)
			return ST_NO;
		swap = r1;
		*other = n->in[r0 ? 1 : 0];
	} else {
		return ST_NO;
	}
	if (!strcmp(fn, "add"))
		return ST_ADD;
	if (!strcmp(fn, "mul"))
		return ST_MUL;
	if (!strcmp(fn, "sub"))
		return swap ? ST_RSUB : ST_SUB;
	if (!strcmp(fn, "div") && !swap)
		return ST_DIV;
	return ST_NO;
}

/* The index of feature j in operand k broadcast to o: "0", "j", or NULL. */
static const char *feature_index(const struct gr_plan *p, int k, const struct gr_tensor *o)
{
	const struct gr_tensor *a = &p->t[k];
	long long N = o->shape[o->rank - 1];

	if (a->is_bool)
		return NULL;
	if (a->numel == 1)
		return "0";
	if (a->numel == N && a->rank <= o->rank && a->shape[a->rank - 1] == N)
		return "j";
	return NULL;
}

static int same_shape(const struct gr_tensor *a, const struct gr_tensor *b)
{
	return a->rank == b->rank && !memcmp(a->shape, b->shape, sizeof(a->shape[0]) * (size_t)a->rank);
}

int gr_lsum_match(const struct gr_plan *p, int k)
{
	const struct gr_node *n = &p->n[k];
	const struct gr_tensor *o = &p->t[n->out], *x, *w;
	long long N, K;
	int run = n->out, other;

	if (strcmp(n->op, "linear") || n->n_in < 2)
		return -1;
	x = &p->t[n->in[0]];
	w = &p->t[n->in[1]];
	N = o->shape[o->rank - 1];
	K = x->shape[x->rank - 1];
	/* shapes the SGEMM path would refuse stay there, with its error */
	if (w->rank != 2 || w->shape[0] != N || w->shape[1] != K || o->numel != x->numel / K * N ||
	    (n->n_in > 2 && p->t[n->in[2]].numel != N))
		return -1;
	for (int j = k + 1; j < p->nn; j++) {
		const struct gr_node *m = &p->n[j];
		/* the running result: read by node j alone, materialized nowhere */
		if (p->t[run].root != run || p->t[run].spec || p->t[run].users != 1)
			return -1;
		if (!strcmp(m->op, "reduce")) {
			const json_t *dims = json_object_get(m->j, "dims");
			const char *fn = gr_str(m->j, "fn");
			long long d = json_integer_value(json_array_get(dims, 0));
			if (m->in[0] != run || json_array_size(dims) != 1 ||
			    !json_is_integer(json_array_get(dims, 0)) || (strcmp(fn, "sum") && strcmp(fn, "mean")))
				return -1;
			if (d < 0)
				d += o->rank;
			return d == o->rank - 1 && p->t[m->out].numel == o->numel / N ? j : -1;
		}
		if (gr_affine_step(p, j, run, &other) == ST_NO || !same_shape(&p->t[m->out], o) ||
		    (other >= 0 && !feature_index(p, other, o)))
			return -1;
		run = m->out;
	}
	return -1;
}

/* The steps of group g as statements over double a, c at feature j. */
static int affine_code(struct gr_plan *p, int gi, struct gr_epi *a, struct buf *code,
		       struct buf *err)
{
	const struct gr_group *g = &p->g[gi];
	const struct gr_node *h = &p->n[g->head];
	const struct gr_tensor *o = &p->t[h->out];
	int run = h->out, other;
	char nm[16];

	buf_adds(code, "            double a = 1.0, c = ");
	if (h->n_in > 2)
		buf_addf(code, "(double)%s[j];", gr_epi_operand(p, a, h->in[2], nm, sizeof(nm)));
	else
		buf_adds(code, "0.0;");
	buf_adds(code, "   /* t_j = a (x . w_j) + c */\n");
	for (int s = 0; s < g->fold - 1; s++) {
		int k = g->chain[s], st = gr_affine_step(p, k, run, &other);
		struct buf x = BUF_INIT;
		if (other >= 0) {
			buf_addf(&x, "(double)%s[%s]", gr_epi_operand(p, a, other, nm, sizeof(nm)),
				 feature_index(p, other, o));
		} else if (st != ST_NEG && st != ST_ID) {
			double v = gr_num(p->n[k].j, "const", 0.0);
			if (!isfinite(v)) {
				buf_release(&x);
				return kf_err(err, "graph: non-finite constant");
			}
			buf_addf(&x, "%.17e", v);
		}
		buf_addf(code, "            /* %s: %s %s */ ", p->t[p->n[k].out].name, p->n[k].op,
			 gr_str(p->n[k].j, "fn"));
		switch (st) {
		case ST_ADD: buf_addf(code, "c += %s;\n", x.s); break;
		case ST_SUB: buf_addf(code, "c -= %s;\n", x.s); break;
		case ST_RSUB: buf_addf(code, "a = -a; c = %s - c;\n", x.s); break;
		case ST_MUL: buf_addf(code, "a *= %s; c *= %s;\n", x.s, x.s); break;
		case ST_DIV: buf_addf(code, "a /= %s; c /= %s;\n", x.s, x.s); break;
		case ST_NEG: buf_adds(code, "a = -a; c = -c;\n"); break;
		default: buf_adds(code, "\n"); break;
		}
		buf_release(&x);
		run = p->n[k].out;
	}
	return 0;
}

int gr_lsum_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	const struct gr_group *g = &p->g[gi];
	const struct gr_node *h = &p->n[g->head], *r = &p->n[g->chain[g->fold - 1]];
	const struct gr_tensor *x = &p->t[h->in[0]], *o = &p->t[h->out];
	long long N = o->shape[o->rank - 1], K = x->shape[x->rank - 1], M = x->numel / K, bs;
	struct gr_epi a;
	struct buf aff = BUF_INIT, body = BUF_INIT, sig = BUF_INIT, args = BUF_INIT, grid = BUF_INIT;
	char ws[80], xs[80], ys[80], name[48];
	int rc, b;

	gr_epi_init(&a);
	if ((b = gr_take_buf(p, K + 1, 1, err)) < 0) {
		rc = b;
		goto out;
	}
	gr_buf_name(p, b, ws, sizeof(ws));
	if ((rc = affine_code(p, gi, &a, &aff, err)))
		goto out;
	gr_helpers(p, GR_H_SUM);
	/* column sums: 32 columns (coalesced) x 8 lanes over j per block */
	buf_addf(&body, "    /* ws[k] = sum_j a_j w[j][k], ws[K] = sum_j c_j over %lld features, in double,"
		    " fixed order */\n"
		    "    __shared__ double sh[256];\n"
		    "    const int tx = threadIdx.x %% 32, ty = threadIdx.x / 32;\n"
		    "    const long long k = blockIdx.x * 32LL + tx;\n"
		    "    double s = 0.0;\n"
		    "    if (k < %lldLL)\n"
		    "#pragma unroll 4\n"	/* loads in flight: W is read once, from HBM */
		    "        for (long long j = ty; j < %lldLL; j += 8) {\n%s"
		    "            s += a * (double)w[j * %lldLL + k];\n        }\n"
		    "    sh[threadIdx.x] = s;\n    __syncthreads();\n"
		    "    if (ty == 0 && k < %lldLL) {\n        double t = 0.0;\n"
		    "        for (int i = 0; i < 8; i++)\n            t += sh[i * 32 + tx];\n"
		    "        ws[k] = t;\n    }\n"
		    "    if (blockIdx.x == 0) {\n        __syncthreads();\n        double cs = 0.0;\n"
		    "        for (long long j = threadIdx.x; j < %lldLL; j += 256) {\n%s"
		    "            cs += c;\n        }\n"
		    "        cs = block_sum(cs, sh);\n        if (threadIdx.x == 0)\n"
		    "            ws[%lldLL] = cs;\n    }\n",
		 N, K, N, aff.s, K, K, N, aff.s, K);
	buf_addf(&sig, "const float* __restrict__ w, double* __restrict__ ws%s", a.params.s);
	buf_addf(&args, "%s, %s%s", gr_store(p, h->in[1], xs, sizeof(xs)), ws, a.args.s);
	buf_addf(&grid, "%lld", (K + 31) / 32);
	snprintf(name, sizeof(name), "g%d_lsum_wsum", gi);
	if ((rc = gr_kernel(p, name, sig.s, body.s, grid.s, 256, args.s, err)))
		goto out;
	/* a dot product per row, then the reduce's chain */
	buf_reset(&body);
	buf_reset(&sig);
	buf_reset(&args);
	buf_reset(&grid);
	for (bs = 32; bs < K && bs < 256; bs *= 2)
		;
	buf_addf(&body, "    /* %s over %lld features of row o of x [%lld x %lld] @ w^T:"
		    " x[o] . ws + ws[K], fixed-order tree */\n"
		    "    __shared__ double sh[%lld];\n"
		    "    const long long o = blockIdx.x;\n"
		    "    const float* xr = x + o * %lldLL;\n"
		    "    double s = 0.0;\n"
		    "    for (long long k = threadIdx.x; k < %lldLL; k += blockDim.x)\n"
		    "        s += (double)xr[k] * ws[k];\n"
		    "    s = block_sum(s, sh);\n"
		    "    if (threadIdx.x == 0) {\n"
		    "        const long long ei = o;\n"
		    "        float v = (float)((s + ws[%lldLL])",
		 gr_str(r->j, "fn"), N, M, K, bs, K, K, K);
	if (!strcmp(gr_str(r->j, "fn"), "mean"))
		buf_addf(&body, " / %lld.0", N);
	buf_addf(&body, ");\n%s        y[ei] = v;\n    }\n", e->code.s);
	buf_addf(&sig, "const float* __restrict__ x, const double* __restrict__ ws, float* %sy%s",
		 p->alias >= 0 ? "" : "__restrict__ ", e->params.s);
	buf_addf(&args, "%s, %s, %s%s", gr_store(p, h->in[0], xs, sizeof(xs)), ws,
		 gr_store(p, g->out, ys, sizeof(ys)), e->args.s);
	buf_addf(&grid, "%lld", M);
	snprintf(name, sizeof(name), "g%d_lsum_dot", gi);
	rc = gr_kernel(p, name, sig.s, body.s, grid.s, bs, args.s, err);
	p->buf_busy[b] = 0;
out:
	gr_epi_release(&a);
	buf_release(&aff);
	buf_release(&body);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&grid);
	return rc;
}
