/* The graph template's fold of a convolution's spatial sum. A conv is linear,
 * so the sum of output channel c over all its positions is
 *     sum_o y[n][c][o] = sum_ci sum_t w[ci][c][t] (sum of x[n][ci][i] over the
 *                        inputs i that tap t reaches from some output) + b[c] O
 * (ci over c's group, O the output's positions). Along each axis the taps
 * that reach input position i form a mask; positions fall into a few classes
 * of equal masks (without padding or stride, one: every tap reaches every
 * position of a transposed conv). So x is read once, summed per channel and
 * class (a bucket per combination of the axes' classes), and a dot product
 * per output channel adds each tap's weight times the buckets it reaches.
 * A sum or mean over all spatial dims, reached from the conv through steps
 * t -> a t + c by constants, folds this way (level-2 42 and 44): two small
 * kernels in double instead of the convolution. */
#include "kernels/graph/builtin_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/graph_csum_cuh.h"

#define CS_MAX_AX 3
#define CS_MAX_K 32	/* taps along an axis: a 32-bit mask */
#define CS_MAX_I 4096	/* positions along an axis: the class tables */
#define CS_MAX_NB 16	/* buckets: accumulators of a thread */

struct cs_geo {
	int nd, tr, nb, ncl[CS_MAX_AX];
	long long I[CS_MAX_AX], K[CS_MAX_AX], N, CI, CO, G, T, O;
	unsigned mask[CS_MAX_AX][CS_MAX_NB];	/* the classes' tap masks */
	unsigned char cls[CS_MAX_AX][CS_MAX_I];	/* the class of each position */
};

/* Does tap k along axis d reach input position i from an output in range? */
static int reaches(const struct gr_node *n, int tr, int d, long long i, long long k, long long out)
{
	long long s = gr_int(n->j, "stride", d, 1), pd = gr_int(n->j, "padding", d, 0);
	long long dl = gr_int(n->j, "dilation", d, 1), t;

	if (tr) {
		t = i * s - pd + k * dl;
		return t >= 0 && t < out;
	}
	t = i + pd - k * dl;
	return t >= 0 && t % s == 0 && t / s < out;
}

/* Node k's geometry and position classes: 0 when it folds, else -1. */
static int geometry(const struct gr_plan *p, int k, struct cs_geo *c)
{
	const struct gr_node *n = &p->n[k];
	const struct gr_tensor *x, *w, *o;

	if (strcmp(n->op, "conv") || n->n_in < 2)
		return -1;
	x = &p->t[n->in[0]];
	w = &p->t[n->in[1]];
	o = &p->t[n->out];
	memset(c, 0, sizeof(*c));
	c->tr = json_is_true(json_object_get(n->j, "transposed"));
	c->nd = x->rank - 2;
	c->G = gr_int(n->j, "groups", 0, 1);
	c->N = x->shape[0];
	c->CI = x->shape[1];
	c->CO = o->shape[1];
	if (c->nd < 1 || c->nd > CS_MAX_AX || o->rank != x->rank || w->rank != x->rank ||
	    o->shape[0] != c->N || c->G < 1 || c->CI % c->G || c->CO % c->G ||
	    w->shape[0] != (c->tr ? c->CI : c->CO) || w->shape[1] != (c->tr ? c->CO : c->CI) / c->G ||
	    (n->n_in > 2 && p->t[n->in[2]].numel != c->CO))
		return -1;
	c->nb = 1;
	c->T = 1;
	c->O = 1;
	for (int d = 0; d < c->nd; d++) {
		long long I = x->shape[2 + d], K = w->shape[2 + d], out = o->shape[2 + d];
		long long s = gr_int(n->j, "stride", d, 1), pd = gr_int(n->j, "padding", d, 0);
		long long dl = gr_int(n->j, "dilation", d, 1), op = gr_int(n->j, "output_padding", d, 0);
		long long want = c->tr ? (I - 1) * s - 2 * pd + dl * (K - 1) + op + 1
				       : (I + 2 * pd - dl * (K - 1) - 1) / s + 1;
		if (I < 1 || I > CS_MAX_I || K < 1 || K > CS_MAX_K || s < 1 || dl < 1 || pd < 0 ||
		    K != gr_int(n->j, "kernel", d, -1) || out != want)
			return -1;
		c->I[d] = I;
		c->K[d] = K;
		c->T *= K;
		c->O *= out;
		for (long long i = 0; i < I; i++) {
			unsigned m = 0;
			int cl = 0;
			for (long long t = 0; t < K; t++)
				m |= (unsigned)reaches(n, c->tr, d, i, t, out) << t;
			while (cl < c->ncl[d] && c->mask[d][cl] != m)
				cl++;
			if (cl == c->ncl[d]) {
				if (c->ncl[d] == CS_MAX_NB)
					return -1;
				c->mask[d][c->ncl[d]++] = m;
			}
			c->cls[d][i] = (unsigned char)cl;
		}
		c->nb *= c->ncl[d];
		if (c->nb > CS_MAX_NB)
			return -1;
	}
	return x->numel / (c->N * c->CI) < (1LL << 31) ? 0 : -1;
}

/* Node k as a step t -> a t + c by a constant (gr_affine_step's steps
 * without a tensor operand), applied to a, c; -1 if it is not one. */
static int const_step(const struct gr_plan *p, int k, int run, double *a, double *c)
{
	int other, st = gr_affine_step(p, k, run, &other);
	double v = gr_num(p->n[k].j, "const", 0.0);

	if (st == ST_NO || other >= 0)
		return -1;
	switch (st) {
	case ST_ADD: *c += v; break;
	case ST_SUB: *c -= v; break;
	case ST_RSUB: *a = -*a; *c = v - *c; break;
	case ST_MUL: *a *= v; *c *= v; break;
	case ST_DIV:
		if (v == 0.0)
			return -1;
		*a /= v;
		*c /= v;
		break;
	case ST_NEG: *a = -*a; *c = -*c; break;
	default: break;
	}
	return 0;
}

/* The reduce node ending the fold from conv node k (its steps k+1..r-1 by
 * constants, each result read by the next node alone), and a, c; -1 if none. */
static int chain_end(const struct gr_plan *p, int k, double *a, double *c)
{
	const struct gr_tensor *o = &p->t[p->n[k].out];
	int run = p->n[k].out;

	*a = 1.0;
	*c = 0.0;
	for (int j = k + 1; j < p->nn && j - k < GR_MAX_CHAIN / 2; j++) {
		const struct gr_node *m = &p->n[j];
		const json_t *dims;
		const char *fn;
		unsigned seen = 0, want = 0;
		size_t i;

		if (p->t[run].root != run || p->t[run].spec || p->t[run].users != 1)
			return -1;
		if (strcmp(m->op, "reduce")) {
			if (const_step(p, j, run, a, c) || p->t[m->out].numel != o->numel)
				return -1;
			run = m->out;
			continue;
		}
		fn = gr_str(m->j, "fn");
		dims = json_object_get(m->j, "dims");
		if (m->n_in != 1 || m->in[0] != run || !fn || (strcmp(fn, "sum") && strcmp(fn, "mean")) ||
		    !json_is_array(dims))
			return -1;
		for (int d = 2; d < o->rank; d++)
			want |= 1u << d;
		for (i = 0; i < json_array_size(dims); i++) {
			json_t *v = json_array_get(dims, i);
			long long d = json_integer_value(v);
			if (!json_is_integer(v))
				return -1;
			if (d < 0)
				d += o->rank;
			if (d < 0 || d >= o->rank || (seen & (1u << d)))
				return -1;
			seen |= 1u << d;
		}
		return seen == want && p->t[m->out].numel == o->shape[0] * o->shape[1] ? j : -1;
	}
	return -1;
}

int gr_csum_match(const struct gr_plan *p, int k)
{
	struct cs_geo *c;
	double a, cc;
	int r;

	if (strcmp(p->n[k].op, "conv") || (r = chain_end(p, k, &a, &cc)) < 0 || !(c = malloc(sizeof(*c))))
		return -1;
	if (geometry(p, k, c))
		r = -1;
	free(c);
	return r;
}

int gr_csum_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err)
{
	struct cs_geo *cp = malloc(sizeof(*cp));
	const struct cs_geo *c;
	const struct gr_group *g = &p->g[gi];
	const struct gr_node *h = &p->n[g->head], *r = &p->n[g->chain[g->fold - 1]];
	long long Ix, COg, CIg, stride[CS_MAX_AX];
	int bias = h->n_in > 2, mean, rc, b;
	double a, cc;
	struct buf body = BUF_INIT, sig = BUF_INIT, args = BUF_INIT, grid = BUF_INIT, v = BUF_INIT;
	char xs[80], ss[80], ws[80], bs[80], ys[80], name[48], cls[CS_MAX_AX][40], kv[40];

	if (!cp)
		return kf_err(err, "out of memory");
	if (chain_end(p, g->head, &a, &cc) != g->chain[g->fold - 1] || geometry(p, g->head, cp)) {
		free(cp);
		return kf_err(err, "graph: the conv-sum fold does not apply to group %d", gi);
	}
	c = cp;
	mean = !strcmp(gr_str(r->j, "fn"), "mean");
	COg = c->CO / c->G;
	CIg = c->CI / c->G;
	Ix = p->t[h->in[0]].numel / (c->N * c->CI);
	if ((b = gr_take_buf(p, c->N * c->CI * c->nb, 1, err)) < 0) {
		free(cp);
		return b;
	}
	gr_buf_name(p, b, ss, sizeof(ss));
	gr_helpers(p, GR_H_SUM);
	/* the class tables: a position's class along each axis, a tap's buckets */
	for (int d = 0; d < c->nd; d++) {
		stride[d] = 1;
		for (int e2 = d + 1; e2 < c->nd; e2++)
			stride[d] *= c->ncl[e2];
		if (c->nb == 1)
			continue;
		buf_reset(&v);
		for (long long i = 0; i < c->I[d]; i++)
			buf_addf(&v, "%s%u", i ? ", " : "", (unsigned)c->cls[d][i]);
		if ((rc = gr_array(p, "unsigned char", d == 0 ? "csc0_" : d == 1 ? "csc1_" : "csc2_", gi,
				   (size_t)c->I[d], v.s, cls[d], sizeof(cls[d]), err)))
			goto out;
	}
	buf_reset(&v);
	for (long long bk = 0; bk < c->nb; bk++)
		for (long long t = 0; t < c->T; t++) {
			long long rest = t;
			unsigned in = 1;
			for (int d = c->nd - 1; d >= 0; d--) {
				long long kd = rest % c->K[d], cl = bk / stride[d] % c->ncl[d];
				rest /= c->K[d];
				in &= (c->mask[d][cl] >> kd) & 1u;
			}
			buf_addf(&v, "%s%u", bk || t ? ", " : "", in);
		}
	if ((rc = gr_array(p, "unsigned char", "csk", gi, (size_t)(c->nb * c->T), v.s, kv, sizeof(kv), err)))
		goto out;
	/* x's sums per channel row and bucket: a block per (n, ci), x read once */
	bt_cuh_fill(&body, graph_csum_cuh, "bucket_sums", "IX", BT_INT(Ix),
		    "NB", BT_INT(c->nb), NULL);
	if (c->nb == 1 && Ix % 4 == 0) {
		buf_addf(&body, "#pragma unroll 4\n"
			    "    for (long long i = threadIdx.x; i < %lldLL; i += 256) {\n"
			    "        const float4 v = reinterpret_cast<const float4*>(xr)[i];\n"
			    "        s[0] += ((double)v.x + (double)v.y) + ((double)v.z + (double)v.w);\n    }\n",
			 Ix / 4);
	} else if (c->nb == 1) {
		buf_addf(&body, "#pragma unroll 4\n"
			    "    for (long long i = threadIdx.x; i < %lldLL; i += 256)\n"
			    "        s[0] += (double)xr[i];\n", Ix);
	} else {
		/* 32-bit positions (geometry() bounds a row): divisions by
		 * constants become multiplies */
		buf_addf(&body, "    for (unsigned i = threadIdx.x; i < %lldu; i += 256) {\n"
			    "        unsigned r = i;\n        int bk = 0;\n", Ix);
		for (int d = c->nd - 1; d >= 0; d--) {
			buf_addf(&body, "        bk += %s[r %% %lldu] * %lld;\n", cls[d], c->I[d], stride[d]);
			if (d)
				buf_addf(&body, "        r /= %lldu;\n", c->I[d]);
		}
		buf_addf(&body, "        const double v = (double)xr[i];\n"
			    "#pragma unroll\n        for (int b = 0; b < %d; b++)\n"
			    "            s[b] += b == bk ? v : 0.0;\n    }\n", c->nb);
	}
	buf_addf(&body, "#pragma unroll 1\n    for (int b = 0; b < %d; b++) {\n"
		    "        const double t = block_sum(s[b], sh);\n"
		    "        if (threadIdx.x == 0)\n            xs[blockIdx.x * %dLL + b] = t;\n    }\n",
		 c->nb, c->nb);
	buf_adds(&sig, "const float* __restrict__ x, double* __restrict__ xs");
	buf_addf(&args, "%s, %s", gr_store(p, h->in[0], xs, sizeof(xs)), ss);
	buf_addf(&grid, "%lld", c->N * c->CI);
	snprintf(name, sizeof(name), "g%d_csum_x", gi);
	if ((rc = gr_kernel(p, name, sig.s, body.s, grid.s, 256, args.s, err)))
		goto out;
	/* a thread per (n, c): each tap's weight times the buckets it reaches */
	buf_reset(&body);
	buf_reset(&sig);
	buf_reset(&args);
	buf_reset(&grid);
	buf_addf(&body, "    /* %s over %lld positions of a %sconv: sum_ci sum_t w[t] (x's sums it"
		    " reaches)%s */\n"
		    "    const long long o = (long long)blockIdx.x * 256 + threadIdx.x;\n"
		    "    if (o >= %lldLL)\n        return;\n"
		    "    const long long n = o / %lldLL, c = o %% %lldLL, ci0 = c / %lldLL * %lldLL;\n"
		    "    double s = 0.0;\n"
		    "    for (long long j = 0; j < %lldLL; j++) {\n"
		    "        const double* xb = xs + (n * %lldLL + ci0 + j) * %d;\n",
		 gr_str(r->j, "fn"), c->O, c->tr ? "transposed " : "", bias ? " + b[c] O" : "",
		 c->N * c->CO, c->CO, c->CO, COg, CIg, CIg, c->CI, c->nb);
	if (c->tr)
		buf_addf(&body, "        const float* wp = w + ((ci0 + j) * %lldLL + c %% %lldLL) * %lldLL;\n",
			 COg, COg, c->T);
	else
		buf_addf(&body, "        const float* wp = w + (c * %lldLL + j) * %lldLL;\n", CIg, c->T);
	bt_cuh_fill(&body, graph_csum_cuh, "steps", "T", BT_INT(c->T), "NB", BT_INT(c->nb),
		    "KV", kv, NULL);
	if (bias)
		buf_addf(&body, "    s += (double)cb[c] * %lld.0;\n", c->O);
	if (a != 1.0 || cc != 0.0)
		buf_addf(&body, "    s = %.17e * s + %.17e * %lld.0;   /* the steps by constants */\n", a, cc,
			 c->O);
	if (mean)
		buf_addf(&body, "    s /= %lld.0;\n", c->O);
	buf_addf(&body, "    const long long ei = o;\n    float v = (float)s;\n%s    y[ei] = v;\n", e->code.s);
	buf_addf(&sig, "const double* __restrict__ xs, const float* __restrict__ w, %sfloat* %sy%s",
		 bias ? "const float* __restrict__ cb, " : "", p->alias >= 0 ? "" : "__restrict__ ",
		 e->params.s);
	buf_addf(&args, "%s, %s, ", ss, gr_store(p, h->in[1], ws, sizeof(ws)));
	if (bias)
		buf_addf(&args, "%s, ", gr_store(p, h->in[2], bs, sizeof(bs)));
	buf_addf(&args, "%s%s", gr_store(p, g->out, ys, sizeof(ys)), e->args.s);
	buf_addf(&grid, "%lld", (c->N * c->CO + 255) / 256);
	snprintf(name, sizeof(name), "g%d_csum_dot", gi);
	rc = gr_kernel(p, name, sig.s, body.s, grid.s, 256, args.s, err);
	p->buf_busy[b] = 0;
out:
	buf_release(&body);
	buf_release(&sig);
	buf_release(&args);
	buf_release(&grid);
	buf_release(&v);
	free(cp);
	return rc;
}
