/* linear and matmul nodes of the graph oracle. A box of the output needs
 * its rows of x and its rows of the weight; the products are
 * oracle/oracle_graph_kern.c's GEMM over threads. A linear whose rows are
 * read whole again and again (a softmax or a norm over features, one row
 * per sample) computes blocks of rows at once and keeps the last block:
 * each pass over a weight too large to keep (generated on the fly) then
 * serves many rows. */
#include "oracle/oracle_graph.h"
#include "oracle/oracle_graph_kern.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct gemm_job {
	const double *const *a, *const *b;
	long long m, K, ldo;
	double *out;
};

static void gemm_part(void *j_, long long lo, long long hi)
{
	struct gemm_job *j = j_;
	gk_gemm_nt(j->a, j->m, j->b + lo, hi - lo, j->K, j->out + lo, j->ldo);
}

/* out[i][j] (ldo apart) = a_i . b_j for the rows of views a (m rows) and b
 * (n rows), K each; threaded over b's rows. */
void gx_gemm(struct gx *g, const double *const *a, long long m, const double *const *b,
	     long long n, long long K, double *out, long long ldo)
{
	struct gemm_job j = { a, b, m, K, ldo, out };
	for (long long i = 0; i < m; i++)
		memset(out + i * ldo, 0, sizeof(double) * (size_t)n);
	gx_par(g, n, m * n * K, gemm_part, &j);
}

/* Pointers to the rows of a view over box b (the last dim contiguous). */
static const double **row_ptrs(const struct gx_view *v, const struct gx_box *b, long long *nrows)
{
	long long w = b->nd ? b->n[b->nd - 1] : 1, n = gx_box_numel(b) / w;
	const double **r = xmalloc(sizeof(*r) * (size_t)(n ? n : 1));
	for (long long k = 0; k < n; k++)
		r[k] = v->p + gx_view_off(v, b, k * w);
	*nrows = n;
	return r;
}

/* Rows [r0, r0 + nr) of the linear's output (flattened leading dims), all
 * N columns, into out (N apart). x's rows come as flat ranges; the weight
 * in chunks of rows. */
static void linear_rows(struct gx *g, struct gx_t *t, long long r0, long long nr, double *out)
{
	const struct gx_t *x = &g->t[t->in[0]], *w = &g->t[t->in[1]];
	long long K = w->shape[1], N = w->shape[0], step = GX_CHUNK / K > 0 ? GX_CHUNK / K : 1;
	double *xr = gx_alloc(nr * K);
	const double **ap = xmalloc(sizeof(*ap) * (size_t)nr);
	const double **bp = xmalloc(sizeof(*bp) * (size_t)(step < N ? step : N));
	struct gx_box xb = { 2, { r0, 0 }, { nr, K } };

	if (x->nd == 2) {
		gx_eval_copy(g, t->in[0], &xb, xr);
	} else {
		struct gx_view xv;
		for (long long r = 0; r < nr; r++) {
			struct gx_box rb;
			long long rem = r0 + r;
			rb.nd = x->nd;
			for (int d = x->nd - 2; d >= 0; d--) {
				rb.lo[d] = rem % x->shape[d];
				rb.n[d] = 1;
				rem /= x->shape[d];
			}
			rb.lo[x->nd - 1] = 0;
			rb.n[x->nd - 1] = K;
			gx_eval(g, t->in[0], &rb, &xv);
			gx_view_copy(&xv, &rb, xr + r * K);
			gx_view_free(&xv);
		}
	}
	for (long long r = 0; r < nr; r++)
		ap[r] = xr + r * K;
	for (long long n0 = 0; n0 < N; n0 += step) {
		long long nn = N - n0 < step ? N - n0 : step, cnt;
		struct gx_box wbx = { 2, { n0, 0 }, { nn, K } };
		struct gx_view wv;
		const double **p;
		gx_eval(g, t->in[1], &wbx, &wv);
		gx_view_rows(&wv, &wbx);
		p = row_ptrs(&wv, &wbx, &cnt);
		memcpy(bp, p, sizeof(*bp) * (size_t)cnt);
		free(p);
		gx_gemm(g, ap, nr, bp, nn, K, out + n0, N);
		gx_view_free(&wv);
	}
	if (t->nin == 3) {
		double *bias = gx_alloc(N);
		struct gx_box bb = { 1, { 0 }, { N } };
		gx_eval_copy(g, t->in[2], &bb, bias);
		for (long long r = 0; r < nr; r++)
			for (long long n = 0; n < N; n++)
				out[r * N + n] += bias[n];
		free(bias);
	}
	free(xr);
	free(ap);
	free(bp);
}

/* Rows per cached block when box b reads whole rows again and again; 0: none. */
static long long row_block(struct gx *g, struct gx_t *t, const struct gx_box *b)
{
	const struct gx_t *w = &g->t[t->in[1]];
	long long N = w->shape[0], R = t->numel / N, rb;

	if (2 * b->n[b->nd - 1] < N)
		return 0;
	if (w->op == GX_LEAF && w->numel > GX_LEAF_MAT_MAX && !w->mat)
		rb = (1LL << 25) / N;  /* weight generated per pass: many rows per pass */
	else if (++t->dense_reqs > 8)
		rb = 32;
	else
		return 0;
	return rb < 1 ? 1 : rb > R ? R : rb;
}

void gx_linear_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	const struct gx_t *w = &g->t[t->in[1]];
	long long K = w->shape[1], N = w->shape[0], nb = gx_box_numel(b), rblk, nrows, nw;
	int last = b->nd - 1;
	struct gx_box xb = *b, wb = { 2, { b->lo[last], 0 }, { b->n[last], K } };
	struct gx_view xv, wv;
	const double **ap, **bp;

	gx_view_new(v, b);
	rblk = row_block(g, t, b);
	if (rblk) {
		/* rows of the box, flattened, from the cached block */
		long long w2 = b->n[last];
		for (long long k = 0; k < nb / w2; k++) {
			long long rem = k, r = 0, s = 1;
			for (int d = last - 1; d >= 0; d--) {
				r += (b->lo[d] + rem % b->n[d]) * s;
				s *= t->shape[d];
				rem /= b->n[d];
			}
			if (!t->rows || r < t->rows_lo || r >= t->rows_lo + t->rows_n) {
				long long R = t->numel / N, r0 = r / rblk * rblk;
				free(t->rows);
				t->rows_n = R - r0 < rblk ? R - r0 : rblk;
				t->rows_lo = r0;
				t->rows = gx_alloc(t->rows_n * N);
				linear_rows(g, t, r0, t->rows_n, t->rows);
			}
			memcpy(v->own + k * w2, t->rows + (r - t->rows_lo) * N + b->lo[last],
			       sizeof(double) * (size_t)w2);
		}
		return;
	}
	xb.lo[last] = 0;
	xb.n[last] = K;
	gx_eval(g, t->in[0], &xb, &xv);
	gx_view_rows(&xv, &xb);
	gx_eval(g, t->in[1], &wb, &wv);
	gx_view_rows(&wv, &wb);
	ap = row_ptrs(&xv, &xb, &nrows);
	bp = row_ptrs(&wv, &wb, &nw);
	gx_gemm(g, ap, nrows, bp, nw, K, v->own, nw);
	if (t->nin == 3) {
		struct gx_box bb = { 1, { b->lo[last] }, { b->n[last] } };
		double *bias = gx_alloc(b->n[last]);
		gx_eval_copy(g, t->in[2], &bb, bias);
		for (long long k = 0; k < nb; k++)
			v->own[k] += bias[k % b->n[last]];
		free(bias);
	}
	free(ap);
	free(bp);
	gx_view_free(&xv);
	gx_view_free(&wv);
}

/* a [..., M, K] @ b [..., K, N], batch dims broadcast: per batch index of
 * the box, a's rows and b's columns (copied to rows) through the GEMM. */
void gx_matmul_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	const struct gx_t *A = &g->t[t->in[0]], *B = &g->t[t->in[1]];
	int nd = b->nd, nbd = nd - 2;
	long long K = A->shape[A->nd - 1], mn = b->n[nd - 2] * b->n[nd - 1], nbat = 1;
	double *bt = gx_alloc(b->n[nd - 1] * K);
	const double **ap = xmalloc(sizeof(*ap) * (size_t)b->n[nd - 2]);
	const double **bp = xmalloc(sizeof(*bp) * (size_t)b->n[nd - 1]);

	gx_view_new(v, b);
	for (int d = 0; d < nbd; d++)
		nbat *= b->n[d];
	for (long long q = 0; q < nbat; q++) {
		struct gx_box ab, bb;
		struct gx_view av, bv;
		long long rem = q, idx[GX_MAXD];
		for (int d = nbd - 1; d >= 0; d--) {
			idx[d] = b->lo[d] + rem % b->n[d];
			rem /= b->n[d];
		}
		ab.nd = A->nd;
		bb.nd = B->nd;
		for (int i = 0; i < A->nd - 2; i++) {
			int d = i + nbd - (A->nd - 2);
			ab.lo[i] = A->shape[i] == 1 ? 0 : idx[d];
			ab.n[i] = 1;
		}
		for (int i = 0; i < B->nd - 2; i++) {
			int d = i + nbd - (B->nd - 2);
			bb.lo[i] = B->shape[i] == 1 ? 0 : idx[d];
			bb.n[i] = 1;
		}
		ab.lo[A->nd - 2] = b->lo[nd - 2];
		ab.n[A->nd - 2] = b->n[nd - 2];
		ab.lo[A->nd - 1] = 0;
		ab.n[A->nd - 1] = K;
		bb.lo[B->nd - 2] = 0;
		bb.n[B->nd - 2] = K;
		bb.lo[B->nd - 1] = b->lo[nd - 1];
		bb.n[B->nd - 1] = b->n[nd - 1];
		gx_eval(g, t->in[0], &ab, &av);
		gx_view_rows(&av, &ab);
		gx_eval(g, t->in[1], &bb, &bv);
		for (long long n = 0; n < b->n[nd - 1]; n++) {
			for (long long k = 0; k < K; k++)
				bt[n * K + k] = bv.p[k * bv.st[B->nd - 2] + n * bv.st[B->nd - 1]];
			bp[n] = bt + n * K;
		}
		for (long long m = 0; m < b->n[nd - 2]; m++)
			ap[m] = av.p + m * av.st[A->nd - 2];
		gx_gemm(g, ap, b->n[nd - 2], bp, b->n[nd - 1], K, v->own + q * mn, b->n[nd - 1]);
		gx_view_free(&av);
		gx_view_free(&bv);
	}
	free(bt);
	free(ap);
	free(bp);
}
