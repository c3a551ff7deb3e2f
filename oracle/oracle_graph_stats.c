/* The graph ops that need statistics of their operand: reduce, softmax and
 * norm. Each request box names the statistics it needs (a reduction
 * output, a softmax row, a norm key); missing ones are computed together
 * from one evaluation of the operand region they cover (split in chunks of
 * at most GX_CHUNK elements, partial results merged) and kept in the
 * node's map. When that region fits one chunk and covers the request, the
 * request's values come from the same evaluation. */
#include "oracle/oracle_graph.h"
#include "core/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- key -> doubles map */

void gx_map_free(struct gx_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static size_t map_slot(const struct gx_map *m, long long key)
{
	unsigned long long h = (unsigned long long)key * 0x9E3779B97F4A7C15ull;
	size_t i = (size_t)(h >> 17) & (m->cap - 1);
	while (m->keys[i] != -1 && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static double *map_get(const struct gx_map *m, long long key)
{
	size_t i;
	if (!m->cap)
		return NULL;
	i = map_slot(m, key);
	return m->keys[i] == key ? m->vals + i * (size_t)m->width : NULL;
}

static double *map_put(struct gx_map *m, long long key, int width)
{
	size_t i;
	if (2 * (m->used + 1) > m->cap) {
		struct gx_map old = *m;
		m->cap = old.cap ? 2 * old.cap : 1024;
		m->width = width;
		m->used = 0;
		m->keys = xmalloc(m->cap * sizeof(*m->keys));
		m->vals = xmalloc(m->cap * (size_t)width * sizeof(double));
		for (size_t k = 0; k < m->cap; k++)
			m->keys[k] = -1;
		for (size_t k = 0; k < old.cap; k++)
			if (old.keys[k] != -1)
				memcpy(map_put(m, old.keys[k], width), old.vals + k * (size_t)width,
				       (size_t)width * sizeof(double));
		free(old.keys);
		free(old.vals);
	}
	i = map_slot(m, key);
	if (m->keys[i] != key) {
		m->keys[i] = key;
		m->used++;
	}
	return m->vals + i * (size_t)m->width;
}

/* Splits b along its first dim of more than one element (excluding dim
 * `keep`, -1: none): lo and hi halves. 0 when it cannot. */
static int split_box(const struct gx_box *b, int keep, struct gx_box *lo, struct gx_box *hi)
{
	for (int d = 0; d < b->nd; d++)
		if (d != keep && b->n[d] > 1) {
			*lo = *hi = *b;
			lo->n[d] = b->n[d] / 2;
			hi->lo[d] = b->lo[d] + lo->n[d];
			hi->n[d] = b->n[d] - lo->n[d];
			return 1;
		}
	return 0;
}

/* ---- reduce */

struct racc {
	double a, s;   /* value (max, sum...), logsumexp: max and scaled sum */
};

static void racc_init(int fn, struct racc *r)
{
	r->a = fn == R_MAX || fn == R_LSE ? -INFINITY : fn == R_MIN ? INFINITY : fn == R_PROD ? 1 : 0;
	r->s = 0;
}

static void racc_add(int fn, struct racc *r, double x)
{
	switch ((enum gx_red)fn) {
	case R_SUM:
	case R_MEAN: r->a += x; break;
	case R_PROD: r->a *= x; break;
	case R_MAX: if (x > r->a || isnan(x)) r->a = x; break;
	case R_MIN: if (x < r->a || isnan(x)) r->a = x; break;
	case R_LSE:
		if (isnan(r->a))
			break;
		if (isnan(x)) {
			r->a = x;
		} else if (x > r->a) {
			r->s = r->s * exp(r->a - x) + 1;
			r->a = x;
		} else if (x == r->a) {
			r->s += 1;
		} else {
			r->s += exp(x - r->a);
		}
		break;
	}
}

static void racc_merge(int fn, struct racc *r, const struct racc *o)
{
	if (fn != R_LSE) {
		if (fn == R_MAX || fn == R_MIN)
			racc_add(fn, r, o->a);
		else if (fn == R_PROD)
			r->a *= o->a;
		else
			r->a += o->a;
		return;
	}
	if (isnan(r->a) || isnan(o->a) || o->s == 0) {
		if (isnan(o->a))
			r->a = o->a;
		return;
	}
	if (r->s == 0) {
		*r = *o;
	} else if (o->a > r->a) {
		r->s = r->s * exp(r->a - o->a) + o->s;
		r->a = o->a;
	} else {
		r->s += o->s * (o->a == r->a ? 1 : exp(o->a - r->a));
	}
}

static double racc_final(int fn, const struct racc *r, double count)
{
	if (fn == R_MEAN)
		return r->a / count;
	if (fn == R_LSE)
		return isinf(r->a) || isnan(r->a) ? r->a : r->a + log(r->s);
	return r->a;
}

/* The operand box of the reduction outputs in b. */
static void reduce_in_box(const struct gx *g, const struct gx_t *t, const struct gx_box *b,
			  struct gx_box *ib)
{
	const struct gx_t *x = &g->t[t->in[0]];
	int j = 0;
	ib->nd = x->nd;
	for (int d = 0; d < x->nd; d++) {
		if (t->rmask >> d & 1) {
			ib->lo[d] = 0;
			ib->n[d] = x->shape[d];
			j += t->keepdim;
		} else {
			ib->lo[d] = b->lo[j];
			ib->n[d] = b->n[j];
			j++;
		}
	}
}

/* acc[k] over output k of b, from operand chunk cb (a sub-box of ib, the
 * operand box of b) and its view. */
static void reduce_acc(const struct gx *g, const struct gx_t *t, const struct gx_box *ib,
		       const struct gx_box *cb, const struct gx_view *cv, struct racc *acc)
{
	const struct gx_t *x = &g->t[t->in[0]];
	long long n = gx_box_numel(cb), w = cb->nd ? cb->n[cb->nd - 1] : 1;
	long long sw = cb->nd ? cv->st[cb->nd - 1] : 0, ost[GX_MAXD], s = 1;
	int last_red = x->nd && (t->rmask >> (x->nd - 1) & 1);

	/* output index of an operand position: the non-reduced dims, relative to ib */
	for (int d = x->nd - 1; d >= 0; d--) {
		ost[d] = t->rmask >> d & 1 ? 0 : s;
		s *= t->rmask >> d & 1 ? 1 : ib->n[d];
	}
	for (long long r = 0; r < n / w; r++) {
		long long rem = r * w, key = 0;
		const double *p = cv->p + gx_view_off(cv, cb, r * w);
		for (int d = cb->nd - 1; d >= 0; d--) {
			key += (cb->lo[d] - ib->lo[d] + rem % cb->n[d]) * ost[d];
			rem /= cb->n[d];
		}
		if (last_red)
			for (long long j = 0; j < w; j++)
				racc_add(t->fn, &acc[key], p[j * sw]);
		else
			for (long long j = 0; j < w; j++)
				racc_add(t->fn, &acc[key + j], p[j * sw]);
	}
}

static void reduce_chunks(struct gx *g, const struct gx_t *t, const struct gx_box *ib,
			  const struct gx_box *cb, struct racc *acc, long long nout)
{
	struct gx_box lo, hi;
	if (gx_box_numel(cb) > GX_CHUNK && split_box(cb, -1, &lo, &hi)) {
		/* partial accumulators only when the split cuts a reduction */
		struct racc *a2 = xmalloc((size_t)nout * sizeof(*a2));
		for (long long k = 0; k < nout; k++)
			racc_init(t->fn, &a2[k]);
		reduce_chunks(g, t, ib, &lo, acc, nout);
		reduce_chunks(g, t, ib, &hi, a2, nout);
		for (long long k = 0; k < nout; k++)
			racc_merge(t->fn, &acc[k], &a2[k]);
		free(a2);
		return;
	}
	struct gx_view cv;
	gx_eval(g, t->in[0], cb, &cv);
	reduce_acc(g, t, ib, cb, &cv, acc);
	gx_view_free(&cv);
}

/* Outputs computed together with b's: the other dims (not dim 0) whole, as
 * far as they stay few and their operand region bounded, when each output
 * reduces many elements (a plane mean: its neighbours share the input the
 * producer reads, and a batched evaluation fills the kernels' lanes). */
static void reduce_expand(const struct gx_t *t, long long count, const struct gx_box *b,
			  struct gx_box *eb)
{
	*eb = *b;
	if (count < 4096)
		return;
	for (int d = 1; d < t->nd; d++) {
		struct gx_box e2 = *eb;
		e2.lo[d] = 0;
		e2.n[d] = t->shape[d];
		if (gx_box_numel(&e2) > 65536 || gx_box_numel(&e2) * count > 16 * GX_CHUNK)
			break;
		*eb = e2;
	}
}

/* A sum or mean over exactly the spatial dims of a conv's own output (no op
 * between): gx_conv_spatial_sum gives it without the conv output (level-2
 * 42: a 620 GFLOP transposed convolution for 16 means). Not in dense mode,
 * where the conv's output is at hand and its input may be freed already. */
static int conv_sum(const struct gx *g, const struct gx_t *t)
{
	const struct gx_t *x = &g->t[t->in[0]];
	if (!gx_conv_sum_fast || g->dense || (t->fn != R_SUM && t->fn != R_MEAN) || x->op != GX_CONV ||
	    x->nd != 2 + x->sd)
		return 0;
	return t->rmask == (((1u << x->nd) - 1) & ~3u);
}

static long long out_key(const struct gx_t *t, const struct gx_box *b, long long k)
{
	long long key = 0;
	for (int d = b->nd - 1; d >= 0; d--) {
		key += (b->lo[d] + k % b->n[d]) * t->st[d];
		k /= b->n[d];
	}
	return key;
}

void gx_reduce_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	const struct gx_t *x = &g->t[t->in[0]];
	long long n = gx_box_numel(b), count = 1;
	int all = 1;

	for (int d = 0; d < x->nd; d++)
		if (t->rmask >> d & 1)
			count *= x->shape[d];
	gx_view_new(v, b);
	for (long long k = 0; k < n && all; k++)
		all = map_get(&t->stats, out_key(t, b, k)) != NULL;
	if (!all) {
		struct gx_box ib, eb;
		long long ne;
		struct racc *acc;
		reduce_expand(t, count, b, &eb);
		ne = gx_box_numel(&eb);
		acc = xmalloc((size_t)ne * sizeof(*acc));
		for (long long k = 0; k < ne; k++)
			racc_init(t->fn, &acc[k]);
		reduce_in_box(g, t, &eb, &ib);
		if (conv_sum(g, t)) { /* eb: [n, co] (and ones, keepdim) */
			double *s = gx_alloc(ne);
			gx_conv_spatial_sum(g, &g->t[t->in[0]], eb.lo[0], eb.n[0], eb.lo[1], eb.n[1], s);
			for (long long k = 0; k < ne; k++)
				acc[k].a = s[k];
			free(s);
		} else {
			reduce_chunks(g, t, &ib, &ib, acc, ne);
		}
		if (ne <= 65536) {
			for (long long k = 0; k < ne; k++)
				map_put(&t->stats, out_key(t, &eb, k), 1)[0] =
					racc_final(t->fn, &acc[k], (double)count);
		} else { /* too many to keep: b itself (eb == b) */
			for (long long k = 0; k < n; k++)
				v->own[k] = racc_final(t->fn, &acc[k], (double)count);
			free(acc);
			return;
		}
		free(acc);
	}
	for (long long k = 0; k < n; k++)
		v->own[k] = map_get(&t->stats, out_key(t, b, k))[0];
}

/* ---- softmax */

/* Key of a position: its flat index with the softmax dim collapsed. */
static long long sm_key(const struct gx_t *t, const long long *idx)
{
	long long k = 0, s = 1;
	for (int d = t->nd - 1; d >= 0; d--) {
		if (d == t->dim)
			continue;
		k += idx[d] * s;
		s *= t->shape[d];
	}
	return k;
}

/* Lines of a box along the softmax dim: calls fn for each with the line's
 * key, its first value's offset and the stride along the dim. */
struct sm_line {
	long long key;
	const double *p;
	long long st, len, lo;  /* lo: the line's first index along dim */
};

static long long sm_lines(const struct gx_t *t, const struct gx_box *b, const struct gx_view *v,
			  struct sm_line *out)
{
	long long n = gx_box_numel(b) / b->n[t->dim], idx[GX_MAXD];
	for (long long k = 0; k < n; k++) {
		long long rem = k, off = 0;
		for (int d = b->nd - 1; d >= 0; d--) {
			long long i = d == t->dim ? 0 : rem % b->n[d];
			if (d != t->dim)
				rem /= b->n[d];
			idx[d] = b->lo[d] + i;
			off += i * v->st[d];
		}
		out[k].key = sm_key(t, idx);
		out[k].p = v->p + off;
		out[k].st = v->st[t->dim];
		out[k].len = b->n[t->dim];
		out[k].lo = b->lo[t->dim];
	}
	return n;
}

static void line_stats(const struct sm_line *l, double *e)
{
	double m = -INFINITY, s = 0;
	for (long long j = 0; j < l->len; j++) {
		double x = l->p[j * l->st];
		if (x > m || isnan(x))
			m = x;
	}
	for (long long j = 0; j < l->len; j++)
		s += exp(l->p[j * l->st] - m);
	e[0] = m;
	e[1] = s;
}

/* The statistics of every line of view v over box b (whole lines) into the map. */
static void sm_stats_view(struct gx_t *t, const struct gx_box *b, const struct gx_view *v)
{
	long long nl = gx_box_numel(b) / b->n[t->dim];
	struct sm_line *ln = xmalloc((size_t)nl * sizeof(*ln));
	sm_lines(t, b, v, ln);
	for (long long k = 0; k < nl; k++)
		line_stats(&ln[k], map_put(&t->stats, ln[k].key, 2));
	free(ln);
}

/* (max, sum of exp(x - max)) of each line of region rb into the map, in
 * chunks; a line longer than a chunk is split along the dim and its halves
 * merged. line: where a single line's statistics go instead of the map. */
static void sm_stats(struct gx *g, struct gx_t *t, const struct gx_box *rb, double *line)
{
	struct gx_box lo, hi;
	struct gx_view v;
	struct sm_line *ln;

	if (gx_box_numel(rb) > GX_CHUNK && split_box(rb, t->dim, &lo, &hi)) {
		sm_stats(g, t, &lo, NULL);
		sm_stats(g, t, &hi, NULL);
		return;
	}
	if (gx_box_numel(rb) > GX_CHUNK) {
		double a[2], c[2], m, *e;
		long long idx[GX_MAXD];
		lo = hi = *rb;
		lo.n[t->dim] = rb->n[t->dim] / 2;
		hi.lo[t->dim] += lo.n[t->dim];
		hi.n[t->dim] -= lo.n[t->dim];
		sm_stats(g, t, &lo, a);
		sm_stats(g, t, &hi, c);
		m = c[0] > a[0] || isnan(c[0]) ? c[0] : a[0];
		memcpy(idx, rb->lo, sizeof(idx));
		e = line ? line : map_put(&t->stats, sm_key(t, idx), 2);
		e[0] = m;
		e[1] = (a[1] != 0 ? a[1] * exp(a[0] - m) : 0) + (c[1] != 0 ? c[1] * exp(c[0] - m) : 0);
		return;
	}
	gx_eval(g, t->in[0], rb, &v);
	if (line) {
		ln = xmalloc(sizeof(*ln));
		sm_lines(t, rb, &v, ln);
		line_stats(ln, line);
		free(ln);
	} else {
		sm_stats_view(t, rb, &v);
	}
	gx_view_free(&v);
}

static void sm_out(const struct gx_t *t, const struct gx_box *b, const struct gx_view *xv,
		   double *out)
{
	struct sm_line *ln = xmalloc((size_t)(gx_box_numel(b) / b->n[t->dim]) * sizeof(*ln));
	long long nl, ost[GX_MAXD];

	gx_box_strides(b, ost);
	nl = sm_lines(t, b, xv, ln);
	for (long long k = 0; k < nl; k++) {
		const double *s = map_get(&t->stats, ln[k].key);
		/* the line's first output: the same offset in the dense box */
		long long off = 0, rem = k;
		for (int d = b->nd - 1; d >= 0; d--) {
			if (d == t->dim)
				continue;
			off += (rem % b->n[d]) * ost[d];
			rem /= b->n[d];
		}
		for (long long j = 0; j < ln[k].len; j++) {
			double x = ln[k].p[j * ln[k].st];
			out[off + j * ost[t->dim]] = t->log_sm ? x - s[0] - log(s[1]) : exp(x - s[0]) / s[1];
		}
	}
	free(ln);
}

void gx_softmax_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	struct gx_box eb = *b;
	struct gx_view xv;
	long long nk = gx_box_numel(b) / b->n[t->dim], idx[GX_MAXD];
	int missing = 0;

	for (long long k = 0; k < nk && !missing; k++) {
		long long rem = k;
		for (int d = b->nd - 1; d >= 0; d--) {
			idx[d] = b->lo[d] + (d == t->dim ? 0 : rem % b->n[d]);
			if (d != t->dim)
				rem /= b->n[d];
		}
		missing = !map_get(&t->stats, sm_key(t, idx));
	}
	eb.lo[t->dim] = 0;
	eb.n[t->dim] = t->shape[t->dim];
	gx_view_new(v, b);
	if (missing && gx_box_numel(&eb) <= GX_CHUNK) {
		/* one evaluation for the statistics and the values */
		struct gx_view sub;
		gx_eval(g, t->in[0], &eb, &xv);
		sm_stats_view(t, &eb, &xv);
		sub = xv;
		sub.own = NULL;
		sub.p = xv.p + b->lo[t->dim] * xv.st[t->dim];
		sm_out(t, b, &sub, v->own);
		gx_view_free(&xv);
		return;
	}
	if (missing)
		sm_stats(g, t, &eb, NULL);
	gx_eval(g, t->in[0], b, &xv);
	sm_out(t, b, &xv, v->own);
	gx_view_free(&xv);
}

/* ---- norm */

/* Norm geometry of x [N, C, *S] (layer: [L..., R...]). */
struct nctx {
	const struct gx_t *t, *x;
	long long C, G, cpg;
	int lead;              /* layer: the leading dims */
};

static void nctx_init(struct nctx *n, const struct gx *g, const struct gx_t *t)
{
	n->t = t;
	n->x = &g->t[t->in[0]];
	n->C = n->x->nd >= 2 ? n->x->shape[1] : 1;
	n->G = t->fn == N_GROUP ? t->ngroups : 1;
	n->cpg = n->C / n->G;
	n->lead = n->x->nd - t->nnd;
}

/* Global key of an element of x at idx. */
static long long nkey(const struct nctx *n, const long long *idx)
{
	long long k = 0;
	switch ((enum gx_normk)n->t->fn) {
	case N_BATCH: return idx[1];
	case N_GROUP: return idx[0] * n->G + idx[1] / n->cpg;
	case N_INSTANCE: return idx[0] * n->C + idx[1];
	case N_LAYER:
		for (int d = 0; d < n->lead; d++)
			k += idx[d] * (n->x->st[d] / n->x->st[n->lead - 1]);
		return k;
	}
	return 0;
}

/* The key varies along the last dim ([N, C] batch and group norms). */
static int key_in_last(const struct nctx *n)
{
	return n->x->nd == 2 && n->t->fn != N_LAYER && n->t->fn != N_INSTANCE;
}

/* The region of x holding the statistics of request b's keys, expanded to
 * keys that cost little more to compute with them. */
static void norm_region(const struct nctx *n, const struct gx_box *b, struct gx_box *r)
{
	const struct gx_t *x = n->x;
	long long per_n = x->numel / x->shape[0];

	*r = *b;
	switch ((enum gx_normk)n->t->fn) {
	case N_BATCH:
		for (int d = 0; d < x->nd; d++)
			if (d != 1) {
				r->lo[d] = 0;
				r->n[d] = x->shape[d];
			}
		if (n->C <= 256) {
			r->lo[1] = 0;
			r->n[1] = n->C;
		}
		break;
	case N_GROUP:
	case N_INSTANCE:
		for (int d = 2; d < x->nd; d++) {
			r->lo[d] = 0;
			r->n[d] = x->shape[d];
		}
		if (per_n <= GX_CHUNK) {
			r->lo[1] = 0;
			r->n[1] = n->C;
		} else if (n->t->fn == N_GROUP) {
			long long g0 = b->lo[1] / n->cpg, g1 = (b->lo[1] + b->n[1] - 1) / n->cpg;
			r->lo[1] = g0 * n->cpg;
			r->n[1] = (g1 - g0 + 1) * n->cpg;
		}
		break;
	case N_LAYER:
		for (int d = n->lead; d < x->nd; d++) {
			r->lo[d] = 0;
			r->n[d] = x->shape[d];
		}
		break;
	}
}

/* Accumulators (count, mean, M2) per key of region rb, from chunk cb. Keys
 * of rb are numbered by a dense local index; lk_of gives it. */
struct nacc {
	double n, mean, m2;
};

struct nreg {
	const struct nctx *nc;
	const struct gx_box *rb;
	long long nkeys;
	struct nacc *acc;
};

static long long local_key(const struct nreg *r, const long long *idx)
{
	const struct gx_box *rb = r->rb;
	const struct nctx *n = r->nc;
	long long k = 0;
	switch ((enum gx_normk)n->t->fn) {
	case N_BATCH: return idx[1] - rb->lo[1];
	case N_GROUP:
		return (idx[0] - rb->lo[0]) * (rb->n[1] / n->cpg) + (idx[1] - rb->lo[1]) / n->cpg;
	case N_INSTANCE: return (idx[0] - rb->lo[0]) * rb->n[1] + idx[1] - rb->lo[1];
	case N_LAYER:
		for (int d = 0; d < n->lead; d++)
			k = k * rb->n[d] + idx[d] - rb->lo[d];
		return k;
	}
	return 0;
}

static long long region_keys(const struct nctx *n, const struct gx_box *rb)
{
	long long k = 1;
	switch ((enum gx_normk)n->t->fn) {
	case N_BATCH: return rb->n[1];
	case N_GROUP: return rb->n[0] * (rb->n[1] / n->cpg);
	case N_INSTANCE: return rb->n[0] * rb->n[1];
	case N_LAYER:
		for (int d = 0; d < n->lead; d++)
			k *= rb->n[d];
		return k;
	}
	return 1;
}

/* Calls per row of chunk cb: the row's local key (or -1 when it varies
 * along the row: then per element). Two passes: mean, then M2. */
static void nacc_chunk(struct nreg *r, const struct gx_box *cb, const struct gx_view *v)
{
	long long n = gx_box_numel(cb), w = cb->nd ? cb->n[cb->nd - 1] : 1, idx[GX_MAXD];
	long long sw = cb->nd ? v->st[cb->nd - 1] : 0;
	int per_elem = key_in_last(r->nc);
	struct nacc *c = xcalloc((size_t)r->nkeys, sizeof(*c));

	for (int pass = 0; pass < 2; pass++)
		for (long long row = 0; row < n / w; row++) {
			long long rem = row * w, lk = 0;
			const double *p = v->p + gx_view_off(v, cb, row * w);
			for (int d = cb->nd - 1; d >= 0; d--) {
				idx[d] = cb->lo[d] + rem % cb->n[d];
				rem /= cb->n[d];
			}
			if (!per_elem)
				lk = local_key(r, idx);
			for (long long j = 0; j < w; j++) {
				struct nacc *a;
				if (per_elem) {
					idx[cb->nd - 1] = cb->lo[cb->nd - 1] + j;
					lk = local_key(r, idx);
				}
				a = &c[lk];
				if (pass == 0) {
					a->n += 1;
					a->mean += p[j * sw];
				} else {
					double dlt = p[j * sw] - a->mean;
					a->m2 += dlt * dlt;
				}
			}
			if (pass == 0 && row == n / w - 1)
				for (long long k = 0; k < r->nkeys; k++)
					if (c[k].n)
						c[k].mean /= c[k].n;
		}
	for (long long k = 0; k < r->nkeys; k++) {
		struct nacc *a = &r->acc[k], *b = &c[k];
		double tot, d;
		if (!b->n)
			continue;
		if (!a->n) {
			*a = *b;
			continue;
		}
		tot = a->n + b->n;
		d = b->mean - a->mean;
		a->mean += d * b->n / tot;
		a->m2 += b->m2 + d * d * a->n * b->n / tot;
		a->n = tot;
	}
	free(c);
}

static void nacc_region(struct gx *g, struct nreg *r, const struct gx_box *cb)
{
	struct gx_box lo, hi;
	struct gx_view v;
	if (gx_box_numel(cb) > GX_CHUNK && split_box(cb, -1, &lo, &hi)) {
		nacc_region(g, r, &lo);
		nacc_region(g, r, &hi);
		return;
	}
	gx_eval(g, r->nc->t->in[0], cb, &v);
	nacc_chunk(r, cb, &v);
	gx_view_free(&v);
}

/* Stores region rb's statistics under their global keys. */
static void nacc_store(struct nreg *r)
{
	const struct nctx *n = r->nc;
	const struct gx_box *rb = r->rb;
	struct gx_t *t = (struct gx_t *)n->t;
	long long idx[GX_MAXD];

	for (long long lk = 0; lk < r->nkeys; lk++) {
		long long rem = lk;
		double *s;
		memcpy(idx, rb->lo, sizeof(idx));
		switch ((enum gx_normk)t->fn) {
		case N_BATCH: idx[1] += lk; break;
		case N_GROUP:
			idx[1] += (lk % (rb->n[1] / n->cpg)) * n->cpg;
			idx[0] += lk / (rb->n[1] / n->cpg);
			break;
		case N_INSTANCE:
			idx[1] += lk % rb->n[1];
			idx[0] += lk / rb->n[1];
			break;
		case N_LAYER:
			for (int d = n->lead - 1; d >= 0; d--) {
				idx[d] = rb->lo[d] + rem % rb->n[d];
				rem /= rb->n[d];
			}
			break;
		}
		s = map_put(&t->stats, nkey(n, idx), 2);
		s[0] = r->acc[lk].mean;
		s[1] = 1 / sqrt(r->acc[lk].m2 / r->acc[lk].n + t->eps);
	}
}

/* The normalized values of b from x's values over b (view xv). */
static void norm_out(struct gx *g, const struct nctx *n, const struct gx_box *b,
		     const struct gx_view *xv, double *out)
{
	const struct gx_t *t = n->t;
	double *wb[2] = { NULL, NULL };
	long long nel = gx_box_numel(b), w = b->nd ? b->n[b->nd - 1] : 1, idx[GX_MAXD];
	long long sw = b->nd ? xv->st[b->nd - 1] : 0;

	for (int k = 1; k < t->nin; k++) {
		struct gx_box fb;
		gx_box_full(&g->t[t->in[k]], &fb);
		wb[k - 1] = gx_alloc(g->t[t->in[k]].numel);
		gx_eval_copy(g, t->in[k], &fb, wb[k - 1]);
	}
	for (long long row = 0; row < nel / w; row++) {
		long long rem = row * w;
		const double *p = xv->p + gx_view_off(xv, b, row * w), *s = NULL;
		for (int d = b->nd - 1; d >= 0; d--) {
			idx[d] = b->lo[d] + rem % b->n[d];
			rem /= b->n[d];
		}
		for (long long j = 0; j < w; j++) {
			long long wi = 0;
			double y;
			if (b->nd)
				idx[b->nd - 1] = b->lo[b->nd - 1] + j;
			if (!s || key_in_last(n))
				s = map_get(&t->stats, nkey(n, idx));
			y = (p[j * sw] - s[0]) * s[1];
			if (t->fn != N_LAYER)
				wi = idx[1];
			else
				for (int d = n->lead; d < n->x->nd; d++)
					wi = wi * n->x->shape[d] + idx[d];
			if (wb[0])
				y *= wb[0][wi];
			if (wb[1])
				y += wb[1][wi];
			out[row * w + j] = y;
		}
	}
	free(wb[0]);
	free(wb[1]);
}

void gx_norm_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	struct nctx n;
	struct gx_box rb;
	struct gx_view xv;
	long long idx[GX_MAXD], nel = gx_box_numel(b);
	int missing = 0;

	nctx_init(&n, g, t);
	/* a key per row (or element) of the request */
	for (long long k = 0; k < nel && !missing; k++) {
		long long rem = k;
		for (int d = b->nd - 1; d >= 0; d--) {
			idx[d] = b->lo[d] + rem % b->n[d];
			rem /= b->n[d];
		}
		missing = !map_get(&t->stats, nkey(&n, idx));
		if (!key_in_last(&n) && b->nd)
			k += b->n[b->nd - 1] - 1;
	}
	gx_view_new(v, b);
	if (!missing) {
		gx_eval(g, t->in[0], b, &xv);
		norm_out(g, &n, b, &xv, v->own);
		gx_view_free(&xv);
		return;
	}
	norm_region(&n, b, &rb);
	struct nreg r = { &n, &rb, region_keys(&n, &rb), NULL };
	r.acc = xcalloc((size_t)r.nkeys, sizeof(*r.acc));
	if (gx_box_numel(&rb) <= GX_CHUNK) {
		/* one evaluation for the statistics and the values */
		struct gx_view sub;
		gx_eval(g, t->in[0], &rb, &xv);
		nacc_chunk(&r, &rb, &xv);
		nacc_store(&r);
		sub = xv;
		sub.own = NULL;
		for (int d = 0; d < b->nd; d++)
			sub.p += (b->lo[d] - rb.lo[d]) * xv.st[d];
		norm_out(g, &n, b, &sub, v->own);
	} else {
		nacc_region(g, &r, &rb);
		nacc_store(&r);
		gx_eval(g, t->in[0], b, &xv);
		norm_out(g, &n, b, &xv, v->own);
	}
	gx_view_free(&xv);
	free(r.acc);
}
