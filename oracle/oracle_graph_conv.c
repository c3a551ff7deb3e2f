/* conv, pool and adaptive_avg_pool nodes of the graph oracle: the operand
 * box a box of the output needs, and the values (the convolution itself is
 * oracle/oracle_graph_kern.c's, over threads). Spatial axes are handled as
 * three, right-aligned, leading ones of size 1. */
#include "oracle/oracle_graph.h"
#include "oracle/oracle_graph_kern.h"
#include "core/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Output range [olo, ohi] along a spatial axis -> input range [*ilo, *ihi]
 * it reads (empty when *ilo > *ihi). */
static void in_range(const struct gx_t *t, int i, long long olo, long long ohi, long long in,
		     long long *ilo, long long *ihi)
{
	if (t->op == GX_CONV && t->transposed) {
		long long num = olo + t->p[i] - (t->k[i] - 1) * t->d[i];
		*ilo = num >= 0 ? (num + t->s[i] - 1) / t->s[i] : -((-num) / t->s[i]);
		*ihi = (ohi + t->p[i]) / t->s[i];
	} else {
		*ilo = olo * t->s[i] - t->p[i];
		*ihi = ohi * t->s[i] - t->p[i] + (t->k[i] - 1) * t->d[i];
	}
	if (*ilo < 0)
		*ilo = 0;
	if (*ihi > in - 1)
		*ihi = in - 1;
}

/* Weights as the kernel reads them: [group][ci][taps][co in group + 8 pad]. */
static void conv_pack(struct gx *g, struct gx_t *t)
{
	const struct gx_t *x = &g->t[t->in[0]], *w = &g->t[t->in[1]];
	long long cpg_in = x->shape[1] / t->groups, cpg_out = t->shape[1] / t->groups;
	long long kk = t->k[0] * t->k[1] * t->k[2], cob = cpg_out + 8;
	double *wv = gx_alloc(w->numel), *pk;
	struct gx_box fb;

	gx_box_full(w, &fb);
	gx_eval_copy(g, t->in[1], &fb, wv);
	pk = gx_alloc(t->groups * cpg_in * kk * cob + t->shape[1]);
	memset(pk, 0, sizeof(double) * (size_t)(t->groups * cpg_in * kk * cob));
	for (long long gr = 0; gr < t->groups; gr++)
		for (long long ci = 0; ci < cpg_in; ci++)
			for (long long co = 0; co < cpg_out; co++)
				for (long long k = 0; k < kk; k++) {
					long long src = t->transposed
						? ((gr * cpg_in + ci) * cpg_out + co) * kk + k
						: ((gr * cpg_out + co) * cpg_in + ci) * kk + k;
					pk[((gr * cpg_in + ci) * kk + k) * cob + co] = wv[src];
				}
	if (t->nin == 3) {
		gx_box_full(&g->t[t->in[2]], &fb);
		gx_eval_copy(g, t->in[2], &fb, pk + t->groups * cpg_in * kk * cob);
	}
	free(wv);
	t->wpack = pk;
	t->cob = cob;
}

static void conv_part(void *c, long long lo, long long hi)
{
	gk_conv_part(c, lo, hi);
}

void gx_conv_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	const struct gx_t *x = &g->t[t->in[0]];
	long long cpg_in = x->shape[1] / t->groups, cpg_out = t->shape[1] / t->groups;
	long long g0 = b->lo[1] / cpg_out, g1 = (b->lo[1] + b->n[1] - 1) / cpg_out, nblk = 0;
	long long *blk_co = xmalloc(sizeof(long long) * (size_t)b->n[1]);
	int *blk_m = xmalloc(sizeof(int) * (size_t)b->n[1]), empty = 0;
	struct gk_conv c;
	struct gx_box ib;
	struct gx_view xv = { NULL, { 0 }, NULL };
	const double *bias;

	if (!t->wpack)
		conv_pack(g, t);
	bias = t->nin == 3 ? t->wpack + t->groups * cpg_in * t->k[0] * t->k[1] * t->k[2] * t->cob
			   : NULL;
	memset(&c, 0, sizeof(c));
	c.transposed = t->transposed;
	ib.nd = x->nd;
	ib.lo[0] = b->lo[0];
	ib.n[0] = b->n[0];
	ib.lo[1] = g0 * cpg_in;
	ib.n[1] = (g1 - g0 + 1) * cpg_in;
	for (int i = 0; i < 3; i++) {
		int ax = 2 + i - (3 - t->sd);
		c.k[i] = t->k[i];
		c.s[i] = t->s[i];
		c.p[i] = t->p[i];
		c.d[i] = t->d[i];
		c.in[i] = ax >= 2 ? x->shape[ax] : 1;
		c.olo[i] = ax >= 2 ? b->lo[ax] : 0;
		c.on[i] = ax >= 2 ? b->n[ax] : 1;
		if (ax >= 2) {
			long long ilo, ihi;
			in_range(t, i, b->lo[ax], b->lo[ax] + b->n[ax] - 1, x->shape[ax], &ilo, &ihi);
			empty |= ilo > ihi;
			ib.lo[ax] = ilo;
			ib.n[ax] = ihi - ilo + 1;
			c.xlo[i] = ilo;
		}
	}
	gx_view_new(v, b);
	if (empty) { /* the box sees only padding */
		long long per = gx_box_numel(b) / (b->n[0] * b->n[1]);
		for (long long k = 0; k < gx_box_numel(b); k++)
			v->own[k] = bias ? bias[b->lo[1] + (k / per) % b->n[1]] : 0;
		free(blk_co);
		free(blk_m);
		return;
	}
	gx_eval(g, t->in[0], &ib, &xv);
	c.x = xv.p;
	c.xn0 = ib.lo[0];
	c.xc0 = ib.lo[1];
	c.xst[0] = xv.st[0];
	c.xst[1] = xv.st[1];
	for (int i = 0; i < 3; i++) {
		int ax = 2 + i - (3 - t->sd);
		c.xst[2 + i] = ax >= 2 ? xv.st[ax] : 0;
	}
	c.cpg_in = cpg_in;
	c.cpg_out = cpg_out;
	c.cob = t->cob;
	c.wpack = t->wpack;
	c.bias = bias;
	c.nb0 = b->lo[0];
	c.nbn = b->n[0];
	c.co0 = b->lo[1];
	c.nco = b->n[1];
	for (long long co = b->lo[1]; co < b->lo[1] + b->n[1];) {
		long long m = cpg_out - co % cpg_out, end = b->lo[1] + b->n[1] - co;
		if (m > end)
			m = end;
		if (m > 8)
			m = 8;
		blk_co[nblk] = co;
		blk_m[nblk++] = (int)m;
		co += m;
	}
	c.blk_co = blk_co;
	c.blk_m = blk_m;
	c.nblk = nblk;
	c.out = v->own;
	gx_par(g, gk_conv_items(&c),
	       gx_box_numel(b) * cpg_in * t->k[0] * t->k[1] * t->k[2], conv_part, &c);
	gx_view_free(&xv);
	free(blk_co);
	free(blk_m);
}

/* ---- the sum of a conv's output over all spatial positions
 *
 * By linearity, sum_o conv(x)[n, co, o] = sum_ci sum_tap W[co, ci, tap] *
 * S(n, ci, tap) + bias[co] * prod(O), where S is the sum of x[n, ci] over
 * the input positions whose contribution through the tap lands inside the
 * output: per axis an arithmetic progression (step s for a forward conv,
 * whose outputs read every s-th input; 1 for a transposed one). Strided
 * prefix sums of each (n, ci) plane make each S eight lookups. */

int gx_conv_sum_fast = 1;
long long gx_conv_sum_hits;

static long long floordiv(long long a, long long b) /* floor, b > 0 */
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

struct csum {
	double *x;              /* planes of `plane` doubles, prefix-summed in place */
	long long plane, in[3], step[3], k[3], kk, km;
	const long long *ta, *tb; /* [axis][km]: per tap along the axis, the inputs a..b (a > b: none) */
	double *S;              /* [plane][kk] */
};

static void csum_part(void *c_, long long lo, long long hi)
{
	const struct csum *c = c_;
	long long st[3] = { c->in[1] * c->in[2], c->in[2], 1 };

	for (long long q = lo; q < hi; q++) {
		double *x = c->x + q * c->plane, *S = c->S + q * c->kk;
		for (int i = 0; i < 3; i++) { /* x[j] += x[j - step] along axis i */
			long long len = c->in[i], ss = st[i], h = c->step[i] * ss;
			for (long long o = 0; o < c->plane; o += len * ss)
				for (long long j = h; j < len * ss; j++)
					x[o + j] += x[o + j - h];
		}
		for (long long tap = 0; tap < c->kk; tap++) {
			long long kt[3] = { tap / (c->k[1] * c->k[2]), tap / c->k[2] % c->k[1], tap % c->k[2] };
			long long hi3[3], lo3[3];
			double acc = 0;
			int empty = 0;
			for (int i = 0; i < 3; i++) {
				hi3[i] = c->tb[i * c->km + kt[i]];
				lo3[i] = c->ta[i * c->km + kt[i]] - c->step[i];
				empty |= hi3[i] < lo3[i] + c->step[i];
			}
			if (!empty)
				for (int m = 0; m < 8; m++) { /* inclusion-exclusion over the corners */
					long long off = 0;
					int neg = 0, skip = 0;
					for (int i = 0; i < 3; i++) {
						long long j = m >> i & 1 ? lo3[i] : hi3[i];
						neg ^= m >> i & 1;
						skip |= j < 0;
						off += j * st[i];
					}
					if (!skip)
						acc += neg ? -x[off] : x[off];
				}
			S[tap] = acc;
		}
	}
}

void gx_conv_spatial_sum(struct gx *g, struct gx_t *t, long long n0, long long nn, long long c0,
			 long long nc, double *out)
{
	const struct gx_t *x = &g->t[t->in[0]];
	long long cpg_in = x->shape[1] / t->groups, cpg_out = t->shape[1] / t->groups;
	long long ci0 = c0 / cpg_out * cpg_in, nci = ((c0 + nc - 1) / cpg_out + 1) * cpg_in - ci0;
	long long km = t->k[0] > t->k[1] ? t->k[0] : t->k[1], ocount = 1, per, kk, *ta, *tb;
	const double *bias;
	struct csum c;

	if (!t->wpack)
		conv_pack(g, t);
	memset(&c, 0, sizeof(c));
	km = km > t->k[2] ? km : t->k[2];
	ta = xmalloc(sizeof(long long) * (size_t)(3 * km));
	tb = xmalloc(sizeof(long long) * (size_t)(3 * km));
	c.km = km;
	for (int i = 0; i < 3; i++) {
		int ax = 2 + i - (3 - t->sd);
		long long I = ax >= 2 ? x->shape[ax] : 1, O = ax >= 2 ? t->shape[ax] : 1;
		long long s = t->s[i], p = t->p[i], d = t->d[i];
		c.in[i] = I;
		c.k[i] = t->k[i];
		c.step[i] = ax >= 2 && !t->transposed ? s : 1;
		ocount *= O;
		for (long long k = 0; k < t->k[i]; k++) {
			long long a, b, off = k * d - p;
			if (ax < 2) {
				a = b = 0;
			} else if (t->transposed) { /* o = i s + off in [0, O) */
				a = -floordiv(off, s);
				b = floordiv(O - 1 - off, s);
				a = a > 0 ? a : 0;
				b = b < I - 1 ? b : I - 1;
			} else { /* i = o s + off in [0, I), o in [0, O) */
				long long olo = -floordiv(off, s), ohi = floordiv(I - 1 - off, s);
				olo = olo > 0 ? olo : 0;
				ohi = ohi < O - 1 ? ohi : O - 1;
				a = olo * s + off;
				b = olo <= ohi ? ohi * s + off : a - s;
			}
			ta[i * km + k] = a;
			tb[i * km + k] = b;
		}
	}
	kk = c.k[0] * c.k[1] * c.k[2];
	c.plane = c.in[0] * c.in[1] * c.in[2];
	c.kk = kk;
	c.ta = ta;
	c.tb = tb;
	c.S = gx_alloc(nn * nci * kk);
	/* the operand in boxes of whole planes, one n at a time, about GX_CHUNK each */
	per = GX_CHUNK / c.plane > 1 ? GX_CHUNK / c.plane : 1;
	c.x = gx_alloc((per < nci ? per : nci) * c.plane);
	for (long long n = n0; n < n0 + nn; n++)
		for (long long ci = ci0; ci < ci0 + nci; ci += per) {
			struct gx_box xb;
			struct csum cc = c;
			gx_box_full(x, &xb);
			xb.lo[0] = n;
			xb.n[0] = 1;
			xb.lo[1] = ci;
			xb.n[1] = ci + per < ci0 + nci ? per : ci0 + nci - ci;
			gx_eval_copy(g, t->in[0], &xb, c.x);
			cc.S = c.S + ((n - n0) * nci + ci - ci0) * kk;
			gx_par(g, xb.n[1], xb.n[1] * c.plane * 4, csum_part, &cc);
		}
	bias = t->nin == 3 ? t->wpack + t->groups * cpg_in * kk * t->cob : NULL;
	for (long long n = n0; n < n0 + nn; n++)
		for (long long co = c0; co < c0 + nc; co++) {
			long long gr = co / cpg_out, cg = co % cpg_out;
			double acc = bias ? bias[co] * (double)ocount : 0;
			for (long long ci = gr * cpg_in; ci < (gr + 1) * cpg_in; ci++) {
				const double *w = t->wpack + ci * kk * t->cob + cg;
				const double *S = c.S + ((n - n0) * nci + ci - ci0) * kk;
				for (long long k = 0; k < kk; k++)
					acc += w[k * t->cob] * S[k];
			}
			out[(n - n0) * nc + co - c0] = acc;
		}
	free(c.S);
	free(c.x);
	free(ta);
	free(tb);
	__atomic_fetch_add(&gx_conv_sum_hits, 1, __ATOMIC_RELAXED);
}

/* ---- pooling */

/* The operand box of output box b, spatial ranges from rng(). */
static int pool_in_box(struct gx *g, const struct gx_t *t, const struct gx_box *b,
		       struct gx_box *ib)
{
	const struct gx_t *x = &g->t[t->in[0]];
	*ib = *b;
	for (int i = 3 - t->sd; i < 3; i++) {
		int ax = 2 + i - (3 - t->sd);
		long long lo, hi, S = x->shape[ax], O = t->shape[ax];
		long long olo = b->lo[ax], ohi = b->lo[ax] + b->n[ax] - 1;
		if (t->op == GX_APOOL) {
			lo = olo * S / O;
			hi = ((ohi + 1) * S + O - 1) / O - 1;
		} else {
			in_range(t, i, olo, ohi, S, &lo, &hi);
		}
		if (lo > hi)
			return -1;
		ib->lo[ax] = lo;
		ib->n[ax] = hi - lo + 1;
	}
	return 0;
}

void gx_pool_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	const struct gx_t *x = &g->t[t->in[0]];
	struct gx_box ib;
	struct gx_view xv;
	long long n = gx_box_numel(b), in[3], xst[3] = { 0, 0, 0 }, ilo[3] = { 0, 0, 0 };

	gx_view_new(v, b);
	if (pool_in_box(g, t, b, &ib) < 0) { /* windows in the padding alone: none in PyTorch */
		for (long long k = 0; k < n; k++)
			v->own[k] = NAN;
		return;
	}
	gx_eval(g, t->in[0], &ib, &xv);
	for (int i = 0; i < 3; i++) {
		int ax = 2 + i - (3 - t->sd);
		in[i] = ax >= 2 ? x->shape[ax] : 1;
		if (ax >= 2) {
			xst[i] = xv.st[ax];
			ilo[i] = ib.lo[ax];
		}
	}
	for (long long e = 0; e < n; e++) {
		long long rem = e, o[3] = { 0, 0, 0 }, nn, cc, lo[3], hi[3], size = 1, clipped = 1;
		const double *xc;
		double acc;
		for (int d = b->nd - 1; d >= 2; d--) {
			o[d - 2 + (3 - t->sd)] = b->lo[d] + rem % b->n[d];
			rem /= b->n[d];
		}
		cc = rem % b->n[1];
		nn = rem / b->n[1];
		xc = xv.p + nn * xv.st[0] + cc * xv.st[1];
		if (t->fn) {
			acc = -INFINITY;
			for (long long k0 = 0; k0 < t->k[0]; k0++) {
				long long i0 = o[0] * t->s[0] - t->p[0] + k0 * t->d[0];
				if (i0 < 0 || i0 >= in[0])
					continue;
				for (long long k1 = 0; k1 < t->k[1]; k1++) {
					long long i1 = o[1] * t->s[1] - t->p[1] + k1 * t->d[1];
					if (i1 < 0 || i1 >= in[1])
						continue;
					for (long long k2 = 0; k2 < t->k[2]; k2++) {
						long long i2 = o[2] * t->s[2] - t->p[2] + k2 * t->d[2];
						double y;
						if (i2 < 0 || i2 >= in[2])
							continue;
						y = xc[(i0 - ilo[0]) * xst[0] + (i1 - ilo[1]) * xst[1] +
						       (i2 - ilo[2]) * xst[2]];
						if (y > acc || isnan(y))
							acc = y;
					}
				}
			}
			v->own[e] = acc;
			continue;
		}
		/* PyTorch's divisor: the window clipped to the padded input
		 * (count_include_pad), or to the input itself */
		for (int i = 0; i < 3; i++) {
			long long start = o[i] * t->s[i] - t->p[i];
			long long end = start + t->k[i] < in[i] + t->p[i] ? start + t->k[i] : in[i] + t->p[i];
			size *= end - start;
			lo[i] = start > 0 ? start : 0;
			hi[i] = end < in[i] ? end : in[i];
			clipped *= hi[i] > lo[i] ? hi[i] - lo[i] : 0;
		}
		acc = 0;
		for (long long i0 = lo[0]; i0 < hi[0]; i0++)
			for (long long i1 = lo[1]; i1 < hi[1]; i1++)
				for (long long i2 = lo[2]; i2 < hi[2]; i2++)
					acc += xc[(i0 - ilo[0]) * xst[0] + (i1 - ilo[1]) * xst[1] +
						  (i2 - ilo[2]) * xst[2]];
		v->own[e] = acc / (double)(t->cip ? size : clipped);
	}
	gx_view_free(&xv);
}

void gx_apool_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	const struct gx_t *x = &g->t[t->in[0]];
	struct gx_box ib;
	struct gx_view xv;
	long long n = gx_box_numel(b);

	gx_view_new(v, b);
	if (pool_in_box(g, t, b, &ib) < 0)
		abort(); /* invariant: adaptive bins are never empty */
	gx_eval(g, t->in[0], &ib, &xv);
	for (long long e = 0; e < n; e++) {
		long long rem = e, lo[3] = { 0, 0, 0 }, hi[3] = { 1, 1, 1 }, st[3] = { 0, 0, 0 };
		long long base[3] = { 0, 0, 0 }, nn, cc;
		const double *xc;
		double acc = 0;
		for (int d = b->nd - 1; d >= 2; d--) {
			int i = d - 2 + (3 - t->sd);
			long long o = b->lo[d] + rem % b->n[d], S = x->shape[d], O = t->shape[d];
			rem /= b->n[d];
			lo[i] = o * S / O;
			hi[i] = ((o + 1) * S + O - 1) / O;
			st[i] = xv.st[d];
			base[i] = ib.lo[d];
		}
		cc = rem % b->n[1];
		nn = rem / b->n[1];
		xc = xv.p + nn * xv.st[0] + cc * xv.st[1];
		for (long long i0 = lo[0]; i0 < hi[0]; i0++)
			for (long long i1 = lo[1]; i1 < hi[1]; i1++)
				for (long long i2 = lo[2]; i2 < hi[2]; i2++)
					acc += xc[(i0 - base[0]) * st[0] + (i1 - base[1]) * st[1] +
						  (i2 - base[2]) * st[2]];
		v->own[e] = acc / (double)((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
	}
	gx_view_free(&xv);
}
