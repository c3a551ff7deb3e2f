/* The level-3 ops of the graph oracle (docs/graph-ir.md): expand, slice,
 * pad, cumsum, masked_fill, take, roll, compare by boxes like the level-2
 * ops; const from its values; rnn whole (a recurrence has no smaller cone),
 * kept in the node's dense output. */
#include "oracle/oracle_graph.h"
#include "core/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void own_dense(struct gx_view *v, const struct gx_box *b, double *d)
{
	v->own = d;
	v->p = d;
	gx_box_strides(b, v->st);
}

static void slice_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	struct gx_box ib = *b;
	int d = t->dim;

	ib.lo[d] = t->start + b->lo[d] * t->step;
	ib.n[d] = (b->n[d] - 1) * t->step + 1;
	gx_eval(g, t->in[0], &ib, v);
	v->st[d] *= t->step;
}

static void pad_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	const struct gx_t *x = &g->t[t->in[0]];
	struct gx_box ib;
	struct gx_view iv;
	long long n = gx_box_numel(b), ost[GX_MAXD], m, w;
	double *out = gx_alloc(n);

	memset(out, 0, sizeof(double) * (size_t)n);
	own_dense(v, b, out);
	ib.nd = b->nd;
	for (int d = 0; d < b->nd; d++) {
		long long lo = b->lo[d] - t->before[d], hi = lo + b->n[d];
		lo = lo < 0 ? 0 : lo;
		hi = hi > x->shape[d] ? x->shape[d] : hi;
		if (lo >= hi)
			return;  /* all padding */
		ib.lo[d] = lo;
		ib.n[d] = hi - lo;
	}
	gx_eval(g, t->in[0], &ib, &iv);
	gx_box_strides(b, ost);
	m = gx_box_numel(&ib);
	w = ib.nd ? ib.n[ib.nd - 1] : 1;
	for (long long r = 0; r < m / w; r++) {
		long long rem = r * w, off = 0;
		const double *s = iv.p + gx_view_off(&iv, &ib, r * w);
		long long sw = ib.nd ? iv.st[ib.nd - 1] : 0;
		for (int d = b->nd - 1; d >= 0; d--) {
			off += (rem % ib.n[d] + ib.lo[d] + t->before[d] - b->lo[d]) * ost[d];
			rem /= ib.n[d];
		}
		for (long long j = 0; j < w; j++)
			out[off + j] = s[j * sw];
	}
	gx_view_free(&iv);
}

/* The prefix along dim from 0, in index order (as the evaluators). */
static void cumsum_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	struct gx_box ib = *b;
	long long st[GX_MAXD], n, len;
	int d = t->dim;
	double *p;

	ib.lo[d] = 0;
	ib.n[d] = b->lo[d] + b->n[d];
	p = gx_alloc(gx_box_numel(&ib));
	gx_eval_copy(g, t->in[0], &ib, p);
	gx_box_strides(&ib, st);
	len = ib.n[d];
	n = gx_box_numel(&ib) / len;
	for (long long r = 0; r < n; r++) {
		/* r: the index over the other dims; base its first element */
		long long base = (r / st[d]) * st[d] * len + r % st[d];
		for (long long i = 1; i < len; i++)
			p[base + i * st[d]] += p[base + (i - 1) * st[d]];
	}
	v->own = p;
	v->p = p + b->lo[d] * st[d];
	memcpy(v->st, st, sizeof(st));
}

/* out[k] of box b (row-major) from its coordinates: the flat offset of
 * element k in a view with strides st over the same box. */
static long long box_off(const struct gx_box *b, const long long *st, long long k)
{
	long long off = 0;
	for (int d = b->nd - 1; d >= 0; d--) {
		off += (k % b->n[d]) * st[d];
		k /= b->n[d];
	}
	return off;
}

static void mfill_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	long long n = gx_box_numel(b), ni, nj;
	double *p = gx_alloc(n);

	gx_eval_copy(g, t->in[0], b, p);
	if (t->fn == 2) {  /* the mask operand, broadcast: set where non-zero */
		struct gx_view mv;
		gx_eval_bcast(g, t->in[1], b, &mv);
		for (long long k = 0; k < n; k++)
			if (mv.p[box_off(b, mv.st, k)] != 0)
				p[k] = t->a[0];
		gx_view_free(&mv);
		own_dense(v, b, p);
		return;
	}
	ni = b->n[b->nd - 2];
	nj = b->n[b->nd - 1];
	for (long long k = 0; k < n; k++) {
		long long i = b->lo[b->nd - 2] + k / nj % ni, j = b->lo[b->nd - 1] + k % nj;
		if (t->fn ? j - i >= t->diag : j - i <= t->diag)
			p[k] = t->a[0];
	}
	own_dense(v, b, p);
}

/* x[index[i], ...]: each row of the box from its own row of x */
static void take_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	long long n = gx_box_numel(b), row = n / b->n[0];
	double *p = gx_alloc(n);
	struct gx_box ib = *b;

	for (long long i = 0; i < b->n[0]; i++) {
		ib.lo[0] = t->idx[b->lo[0] + i];
		ib.n[0] = 1;
		gx_eval_copy(g, t->in[0], &ib, p + i * row);
	}
	own_dense(v, b, p);
}

/* torch.roll: out[.., i, ..] = x[.., (i - shift) mod size, ..]. Along each
 * rolled dim the box's source is one or two runs (it may wrap); every
 * combination of runs is one operand box, copied to its place. */
static void roll_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	const struct gx_t *x = &g->t[t->in[0]];
	long long n = gx_box_numel(b), ost[GX_MAXD];
	long long src[GX_MAXD][2], dst[GX_MAXD][2], len[GX_MAXD][2];
	int nrun[GX_MAXD], combos = 1;
	double *p = gx_alloc(n);

	gx_box_strides(b, ost);
	for (int d = 0; d < b->nd; d++) {
		long long S = x->shape[d], s0 = ((b->lo[d] - t->shift[d]) % S + S) % S;
		long long first = S - s0 < b->n[d] ? S - s0 : b->n[d];
		src[d][0] = s0;
		dst[d][0] = 0;
		len[d][0] = first;
		nrun[d] = 1;
		if (first < b->n[d]) {
			src[d][1] = 0;
			dst[d][1] = first;
			len[d][1] = b->n[d] - first;
			nrun[d] = 2;
		}
		combos *= nrun[d];
	}
	for (int c = 0; c < combos; c++) {
		struct gx_box ib;
		long long base = 0, m;
		int r = c;
		double *tmp;
		ib.nd = b->nd;
		for (int d = b->nd - 1; d >= 0; d--) {
			int k = r % nrun[d];
			r /= nrun[d];
			ib.lo[d] = src[d][k];
			ib.n[d] = len[d][k];
			base += dst[d][k] * ost[d];
		}
		m = gx_box_numel(&ib);
		tmp = gx_alloc(m);
		gx_eval_copy(g, t->in[0], &ib, tmp);
		for (long long k = 0; k < m; k++)
			p[base + box_off(&ib, ost, k)] = tmp[k];
		free(tmp);
	}
	own_dense(v, b, p);
}

static void compare_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	long long n = gx_box_numel(b);
	double *p = gx_alloc(n);

	gx_eval_copy(g, t->in[0], b, p);
	for (long long k = 0; k < n; k++)
		p[k] = (p[k] == t->a[0]) == (t->fn == 1) ? 1.0 : 0.0;
	own_dense(v, b, p);
}

/* ---- rnn */

static double sig(double x)
{
	return 1 / (1 + exp(-x));
}

/* The whole of tensor ti, row-major (borrowed where it is cached). */
static const double *whole(struct gx *g, int ti, double **own)
{
	const struct gx_t *t = &g->t[ti];
	struct gx_box full;
	if (t->dense) {
		*own = NULL;
		return t->dense;
	}
	gx_box_full(t, &full);
	*own = gx_alloc(t->numel);
	gx_eval_copy(g, ti, &full, *own);
	return *own;
}

static const double **rowp(const double *p, long long n, long long w)
{
	const double **r = xmalloc(sizeof(*r) * (size_t)(n ? n : 1));
	for (long long i = 0; i < n; i++)
		r[i] = p + i * w;
	return r;
}

/* One direction of one layer: seq [T][B][I] in, out[t][b][d*H..] (width
 * DH), h (and c) [B][H] start as the initial state and end as the last. */
static void rnn_dir(struct gx *g, const struct gx_t *t, const double *seq, long long T,
		    long long B, long long I, const double *wih, const double *whh,
		    const double *bih, const double *bhh, int rev, double *h, double *c, double *out,
		    long long DH, long long off)
{
	long long H = t->rnn.hidden, G = t->rnn.kind == RN_LSTM ? 4 : t->rnn.kind == RN_GRU ? 3 : 1;
	double *gx_ = gx_alloc(T * B * G * H), *gh = gx_alloc(B * G * H);
	const double **xr = rowp(seq, T * B, I), **wir = rowp(wih, G * H, I);
	const double **hr = rowp(h, B, H), **whr = rowp(whh, G * H, H);

	/* the input products of every step at once */
	gx_gemm(g, xr, T * B, wir, G * H, I, gx_, G * H);
	for (long long s = 0; s < T; s++) {
		long long ts = rev ? T - 1 - s : s;
		gx_gemm(g, hr, B, whr, G * H, H, gh, G * H);
		for (long long bb = 0; bb < B; bb++) {
			const double *xi = gx_ + (ts * B + bb) * G * H, *hh = gh + bb * G * H;
			double *hv = h + bb * H, *cv = c ? c + bb * H : NULL;
			for (long long j = 0; j < H; j++) {
				double a[4], r;
				for (long long q = 0; q < G; q++)
					a[q] = xi[q * H + j] + (bih ? bih[q * H + j] : 0);
				switch (t->rnn.kind) {
				case RN_LSTM: {
					double i_ = sig(a[0] + hh[j] + (bhh ? bhh[j] : 0));
					double f_ = sig(a[1] + hh[H + j] + (bhh ? bhh[H + j] : 0));
					double g_ = tanh(a[2] + hh[2 * H + j] + (bhh ? bhh[2 * H + j] : 0));
					double o_ = sig(a[3] + hh[3 * H + j] + (bhh ? bhh[3 * H + j] : 0));
					cv[j] = f_ * cv[j] + i_ * g_;
					r = o_ * tanh(cv[j]);
					break;
				}
				case RN_GRU: {
					double r_ = sig(a[0] + hh[j] + (bhh ? bhh[j] : 0));
					double z_ = sig(a[1] + hh[H + j] + (bhh ? bhh[H + j] : 0));
					double n_ = tanh(a[2] + r_ * (hh[2 * H + j] + (bhh ? bhh[2 * H + j] : 0)));
					r = (1 - z_) * n_ + z_ * hv[j];
					break;
				}
				default: {
					double u = a[0] + hh[j] + (bhh ? bhh[j] : 0);
					r = t->rnn.kind == RN_TANH ? tanh(u) : u > 0 ? u : 0;
				}
				}
				out[(ts * B + bb) * DH + off + j] = r;
			}
			memcpy(hv, out + (ts * B + bb) * DH + off, sizeof(double) * (size_t)H);
		}
	}
	free(gx_);
	free(gh);
	free(xr);
	free(wir);
	free(hr);
	free(whr);
}

static void rnn_run(struct gx *g, struct gx_t *t)
{
	const struct gx_t *x = &g->t[t->in[0]];
	long long H = t->rnn.hidden, L = t->rnn.layers, D = t->rnn.dirs;
	long long T = x->shape[t->rnn.bf ? 1 : 0], B = x->shape[t->rnn.bf ? 0 : 1], I = x->shape[2];
	long long per = t->rnn.bias ? 4 : 2;
	int k = 1, wk;
	double *xo, *h0o = NULL, *c0o = NULL, *seq, *hn, *cn, *res;
	const double *xp = whole(g, t->in[0], &xo), *h0 = NULL, *c0 = NULL;

	if (t->rnn.h0)
		h0 = whole(g, t->in[k++], &h0o);
	if (t->rnn.c0)
		c0 = whole(g, t->in[k++], &c0o);
	wk = k;
	/* time-major input */
	seq = gx_alloc(T * B * I);
	for (long long s = 0; s < T; s++)
		for (long long bb = 0; bb < B; bb++)
			memcpy(seq + (s * B + bb) * I,
			       xp + (t->rnn.bf ? bb * T + s : s * B + bb) * I, sizeof(double) * (size_t)I);
	hn = gx_alloc(L * D * B * H);
	cn = gx_alloc(L * D * B * H);
	for (long long i = 0; i < L * D * B * H; i++) {
		hn[i] = h0 ? h0[i] : 0;
		cn[i] = c0 ? c0[i] : 0;
	}
	for (long long l = 0; l < L; l++) {
		double *out = gx_alloc(T * B * D * H);
		for (long long d = 0; d < D; d++) {
			double *wo[4] = { NULL };
			const double *w[4] = { NULL };
			for (long long q = 0; q < per; q++)
				w[q] = whole(g, t->in[wk + (l * D + d) * per + q], &wo[q]);
			rnn_dir(g, t, seq, T, B, I, w[0], w[1], w[2], w[3], (int)d, hn + (l * D + d) * B * H,
				t->rnn.kind == RN_LSTM ? cn + (l * D + d) * B * H : NULL, out, D * H, d * H);
			for (int q = 0; q < 4; q++)
				free(wo[q]);
		}
		free(seq);
		seq = out;
		I = D * H;
	}
	if (t->rnn.which == RO_OUTPUT) {
		res = gx_alloc(t->numel);
		for (long long s = 0; s < T; s++)
			for (long long bb = 0; bb < B; bb++)
				memcpy(res + (t->rnn.bf ? bb * T + s : s * B + bb) * D * H,
				       seq + (s * B + bb) * D * H, sizeof(double) * (size_t)(D * H));
		free(seq);
		free(hn);
		free(cn);
	} else {
		res = t->rnn.which == RO_HN ? hn : cn;
		free(t->rnn.which == RO_HN ? cn : hn);
		free(seq);
	}
	free(xo);
	free(h0o);
	free(c0o);
	t->dense = res;
}

void gx_l3_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	switch (t->op) {
	case GX_EXPAND: gx_eval_bcast(g, t->in[0], b, v); return;
	case GX_SLICE: slice_eval(g, t, b, v); return;
	case GX_PAD: pad_eval(g, t, b, v); return;
	case GX_CUMSUM: cumsum_eval(g, t, b, v); return;
	case GX_MFILL: mfill_eval(g, t, b, v); return;
	case GX_TAKE: take_eval(g, t, b, v); return;
	case GX_ROLL: roll_eval(g, t, b, v); return;
	case GX_COMPARE: compare_eval(g, t, b, v); return;
	case GX_CONST: gx_dense_view(t, t->cvals, b, v); return;
	case GX_RNN:
		if (!t->dense)
			rnn_run(g, t);
		gx_dense_view(t, t->dense, b, v);
		return;
	default: abort(); /* invariant: gx_eval sends only the ops above */
	}
}
