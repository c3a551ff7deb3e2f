/* The oracle of family "graph" (docs/graph-ir.md): the entry point, boxes
 * and views, threads, leaves, the elementwise and layout ops, and the
 * sampling of graph outputs. oracle/oracle_graph.h has the design. */
#include "oracle/oracle_graph.h"
#include "core/xalloc.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long long gx_chunk = 1LL << 22, gx_leaf_mat_max = 1LL << 27;

/* ---- memory, boxes, views */

void *gx_alloc(long long n)
{
	double *p = xmalloc((size_t)(n > 0 ? n : 1) * sizeof(double));
	return p;
}

long long gx_box_numel(const struct gx_box *b)
{
	long long n = 1;
	for (int d = 0; d < b->nd; d++)
		n *= b->n[d];
	return n;
}

void gx_box_full(const struct gx_t *t, struct gx_box *b)
{
	b->nd = t->nd;
	for (int d = 0; d < t->nd; d++) {
		b->lo[d] = 0;
		b->n[d] = t->shape[d];
	}
}

void gx_box_strides(const struct gx_box *b, long long *st)
{
	long long s = 1;
	for (int d = b->nd - 1; d >= 0; d--) {
		st[d] = s;
		s *= b->n[d];
	}
}

void gx_view_new(struct gx_view *v, const struct gx_box *b)
{
	v->own = gx_alloc(gx_box_numel(b));
	v->p = v->own;
	gx_box_strides(b, v->st);
}

void gx_view_free(struct gx_view *v)
{
	free(v->own);
	v->own = NULL;
	v->p = NULL;
}

long long gx_view_off(const struct gx_view *v, const struct gx_box *b, long long k)
{
	long long off = 0;
	for (int d = b->nd - 1; d >= 0; d--) {
		off += (k % b->n[d]) * v->st[d];
		k /= b->n[d];
	}
	return off;
}

static int view_dense(const struct gx_view *v, const struct gx_box *b)
{
	long long s = 1;
	for (int d = b->nd - 1; d >= 0; d--) {
		if (b->n[d] > 1 && v->st[d] != s)
			return 0;
		s *= b->n[d];
	}
	return 1;
}

void gx_view_copy(const struct gx_view *v, const struct gx_box *b, double *dst)
{
	long long n = gx_box_numel(b), w = b->nd ? b->n[b->nd - 1] : 1;
	long long sw = b->nd ? v->st[b->nd - 1] : 0;

	if (view_dense(v, b)) {
		memcpy(dst, v->p, (size_t)n * sizeof(double));
		return;
	}
	for (long long r = 0; r < n / w; r++) {
		const double *s = v->p + gx_view_off(v, b, r * w);
		for (long long j = 0; j < w; j++)
			dst[r * w + j] = s[j * sw];
	}
}

/* The values of v over b in a contiguous buffer that the caller owns:
 * v's own when already contiguous, else a copy (v is consumed). */
static double *take_dense(struct gx_view *v, const struct gx_box *b)
{
	double *d;
	if (v->own && v->p == v->own && view_dense(v, b)) {
		d = v->own;
		v->own = NULL;
		return d;
	}
	d = gx_alloc(gx_box_numel(b));
	gx_view_copy(v, b, d);
	gx_view_free(v);
	return d;
}

void gx_view_rows(struct gx_view *v, const struct gx_box *b)
{
	double *d;
	if (b->nd == 0 || b->n[b->nd - 1] == 1 || v->st[b->nd - 1] == 1)
		return;
	d = take_dense(v, b);
	v->own = d;
	v->p = d;
	gx_box_strides(b, v->st);
}

void gx_eval_copy(struct gx *g, int t, const struct gx_box *b, double *dst)
{
	struct gx_view v;
	gx_eval(g, t, b, &v);
	gx_view_copy(&v, b, dst);
	gx_view_free(&v);
}

/* ---- threads */

int gx_nthreads(const struct gx *g)
{
	return g->threads;
}

struct par {
	void (*fn)(void *, long long, long long);
	void *arg;
	long long n, grain, next;
};

static void *par_run(void *p_)
{
	struct par *p = p_;
	for (;;) {
		long long lo = __atomic_fetch_add(&p->next, p->grain, __ATOMIC_RELAXED);
		if (lo >= p->n)
			return NULL;
		p->fn(p->arg, lo, lo + p->grain < p->n ? lo + p->grain : p->n);
	}
}

void gx_par(struct gx *g, long long n, long long work, void (*fn)(void *, long long, long long),
	    void *arg)
{
	int nt = g->threads;
	pthread_t th[64];
	int started[64] = { 0 };
	struct par p = { fn, arg, n, 1, 0 };

	if (nt > n)
		nt = (int)n;
	if (nt <= 1 || work < (1LL << 21)) {
		if (n > 0)
			fn(arg, 0, n);
		return;
	}
	p.grain = n / (8LL * nt) > 1 ? n / (8LL * nt) : 1;
	for (int i = 1; i < nt; i++)
		started[i] = pthread_create(&th[i], NULL, par_run, &p) == 0;
	par_run(&p);
	for (int i = 1; i < nt; i++)
		if (started[i])
			pthread_join(th[i], NULL);
}

/* ---- leaves: the generator's values, kept whole once read densely */

struct leaf_job {
	struct gx *g;
	int t;
	const struct gx_box *b;
	double *dst;
};

/* Elements [lo, hi) of the box (row-major), a row at a time. */
static void leaf_fill_part(void *j_, long long lo, long long hi)
{
	struct leaf_job *j = j_;
	const struct gx_t *t = &j->g->t[j->t];
	const struct gx_box *b = j->b;
	struct inputs_gen gen;
	long long w = b->nd ? b->n[b->nd - 1] : 1;

	inputs_gen_fork(&gen, &j->g->c->gen);
	for (long long k = lo; k < hi;) {
		long long rem = k / w, flat = 0, j0 = k % w, end = hi - k < w - j0 ? hi - k : w - j0;
		if (b->nd)
			flat = b->lo[b->nd - 1] + j0;
		for (int d = b->nd - 2; d >= 0; d--) {
			flat += (b->lo[d] + rem % b->n[d]) * t->st[d];
			rem /= b->n[d];
		}
		for (long long e = 0; e < end; e++)
			j->dst[k + e] = inputs_value(&gen, j->t, flat + e);
		k += end;
	}
	inputs_gen_release(&gen);
}

static void leaf_eval(struct gx *g, int ti, const struct gx_box *b, struct gx_view *v)
{
	struct gx_t *t = &g->t[ti];
	long long n = gx_box_numel(b), off = 0;

	/* whole once an eighth of it has been asked for: at most 1/8 generated twice */
	if (!t->mat && t->numel <= GX_LEAF_MAT_MAX && 8 * (t->fetched + n) >= t->numel) {
		struct gx_box full;
		struct leaf_job j = { g, ti, &full, NULL };
		gx_box_full(t, &full);
		j.dst = t->mat = gx_alloc(t->numel);
		gx_par(g, t->numel, 64 * t->numel, leaf_fill_part, &j);
	}
	if (t->mat) {
		for (int d = 0; d < b->nd; d++)
			off += b->lo[d] * t->st[d];
		v->own = NULL;
		v->p = t->mat + off;
		memcpy(v->st, t->st, sizeof(v->st));
		return;
	}
	t->fetched += n;
	gx_view_new(v, b);
	struct leaf_job j = { g, ti, b, v->own };
	gx_par(g, n, 64 * n, leaf_fill_part, &j);
}

/* ---- elementwise ops */

static double relu6(double y)
{
	return y < 0 ? 0 : y > 6 ? 6 : y;
}

static double act(const struct gx_t *t, double x)
{
	const double selu_alpha = 1.6732632423543772848170429916717;
	const double selu_scale = 1.0507009873554804934193349852946;

	switch ((enum gx_act)t->fn) {
	case A_RELU: return x < 0 ? 0 : x;
	case A_LEAKY_RELU: return x > 0 ? x : x * t->a[0];
	case A_GELU: return 0.5 * x * (1 + erf(x / M_SQRT2));
	case A_GELU_TANH:
		return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
	case A_SIGMOID: return 1 / (1 + exp(-x));
	case A_TANH: return tanh(x);
	case A_SILU: return x / (1 + exp(-x));
	case A_MISH: return x * tanh(log1p(exp(x)));
	case A_SOFTPLUS: return x * t->a[0] > t->a[1] ? x : log1p(exp(t->a[0] * x)) / t->a[0];
	case A_HARDSWISH: return x * relu6(x + 3) / 6;
	case A_HARDSIGMOID: return relu6(x + 3) / 6;
	case A_HARDTANH: return x < t->a[0] ? t->a[0] : x > t->a[1] ? t->a[1] : x;
	case A_CLAMP:
		if (t->has_a[0] && x < t->a[0])
			x = t->a[0];
		if (t->has_a[1] && x > t->a[1])
			x = t->a[1];
		return x;
	case A_ELU: return x > 0 ? x : t->a[0] * expm1(x);
	case A_SELU: return selu_scale * (x > 0 ? x : selu_alpha * expm1(x));
	case A_EXP: return exp(x);
	case A_LOG: return log(x);
	case A_ABS: return fabs(x);
	case A_NEG: return -x;
	case A_SQRT: return sqrt(x);
	case A_RSQRT: return 1 / sqrt(x);
	case A_SQUARE: return x * x;
	case A_IDENTITY: return x;
	}
	return NAN;
}

static double binop(int fn, double a, double b)
{
	switch ((enum gx_bin)fn) {
	case B_ADD: return a + b;
	case B_SUB: return a - b;
	case B_MUL: return a * b;
	case B_DIV: return a / b;
	case B_MAX: return a > b || isnan(a) ? a : b;   /* torch.maximum: NaN wins */
	case B_MIN: return a < b || isnan(a) ? a : b;
	case B_POW: return pow(a, b);
	}
	return NAN;
}

static void act_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	struct gx_view in;
	long long n = gx_box_numel(b);
	double *d;

	gx_eval(g, t->in[0], b, &in);
	d = take_dense(&in, b);
	for (long long k = 0; k < n; k++)
		d[k] = act(t, d[k]);
	v->own = d;
	v->p = d;
	gx_box_strides(b, v->st);
}

/* binary (with a const), dropout (x * mask / (1 - p)) */
static void binary_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	struct gx_view a, c = { NULL, { 0 }, NULL };
	long long n = gx_box_numel(b), w = b->nd ? b->n[b->nd - 1] : 1;
	long long sa = 0, sc = 0;
	double *out, scale = t->op == GX_DROPOUT ? 1 - t->drop_p : 1;

	gx_eval_bcast(g, t->in[0], b, &a);
	if (t->nin == 2)
		gx_eval_bcast(g, t->in[1], b, &c);
	if (b->nd) {
		sa = a.st[b->nd - 1];
		sc = c.st[b->nd - 1];
	}
	out = gx_alloc(n);
	for (long long r = 0; r < n / w; r++) {
		const double *pa = a.p + gx_view_off(&a, b, r * w);
		const double *pc = t->nin == 2 ? c.p + gx_view_off(&c, b, r * w) : NULL;
		double *o = out + r * w;
		if (t->op == GX_DROPOUT)
			for (long long j = 0; j < w; j++)
				o[j] = pa[j * sa] * pc[j * sc] / scale;
		else if (pc)
			for (long long j = 0; j < w; j++)
				o[j] = binop(t->fn, pa[j * sa], pc[j * sc]);
		else if (t->swap)
			for (long long j = 0; j < w; j++)
				o[j] = binop(t->fn, t->a[0], pa[j * sa]);
		else
			for (long long j = 0; j < w; j++)
				o[j] = binop(t->fn, pa[j * sa], t->a[0]);
	}
	gx_view_free(&a);
	gx_view_free(&c);
	v->own = out;
	v->p = out;
	gx_box_strides(b, v->st);
}

void gx_eval_bcast(struct gx *g, int opnd, const struct gx_box *b, struct gx_view *v)
{
	const struct gx_t *o = &g->t[opnd];
	struct gx_box ob;
	struct gx_view ov;
	int lead = b->nd - o->nd;

	ob.nd = o->nd;
	for (int i = 0; i < o->nd; i++) {
		int bc = o->shape[i] == 1;
		ob.lo[i] = bc ? 0 : b->lo[lead + i];
		ob.n[i] = bc ? 1 : b->n[lead + i];
	}
	gx_eval(g, opnd, &ob, &ov);
	*v = ov;
	for (int d = 0; d < b->nd; d++)
		v->st[d] = d < lead || o->shape[d - lead] == 1 ? 0 : ov.st[d - lead];
}

/* ---- layout ops */

/* Boxes of tensor t covering flat range [s, e), in order. */
static void flat_boxes(struct gx *g, int ti, long long s, long long e, double **dst)
{
	const struct gx_t *t = &g->t[ti];
	while (s < e) {
		struct gx_box ib;
		struct gx_view iv;
		long long rem = s;
		int d = 0;
		while (d < t->nd - 1 && (s % t->st[d] || s + t->st[d] > e))
			d++;
		ib.nd = t->nd;
		for (int k = 0; k < t->nd; k++) {
			ib.lo[k] = rem / t->st[k];
			rem %= t->st[k];
			ib.n[k] = k < d ? 1 : t->shape[k];
			if (k > d)
				ib.lo[k] = 0;
		}
		if (t->nd) {
			long long m = (e - s) / t->st[d];
			if (m > t->shape[d] - ib.lo[d])
				m = t->shape[d] - ib.lo[d];
			ib.n[d] = m;
		}
		gx_eval(g, ti, &ib, &iv);
		gx_view_copy(&iv, &ib, *dst);
		gx_view_free(&iv);
		*dst += gx_box_numel(&ib);
		s += gx_box_numel(&ib);
	}
}

static void reshape_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	long long n = gx_box_numel(b), run = 1, nrun;
	int j = b->nd;
	double *dst;

	/* runs: dims after j are whole, so each run is one flat range */
	while (j > 0 && b->n[j - 1] == t->shape[j - 1]) {
		j--;
		run *= t->shape[j];
	}
	if (j > 0) {
		j--;
		run *= b->n[j];
	}
	nrun = n / run;
	gx_view_new(v, b);
	dst = v->own;
	for (long long r = 0; r < nrun; r++) {
		long long k = r * run, flat = 0, rem = k;
		/* the run's first element, as a flat index of t */
		for (int d = b->nd - 1; d >= 0; d--) {
			flat += (b->lo[d] + rem % b->n[d]) * t->st[d];
			rem /= b->n[d];
		}
		flat_boxes(g, t->in[0], flat, flat + run, &dst);
	}
}

static void permute_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	struct gx_box ib;
	struct gx_view iv;

	ib.nd = b->nd;
	for (int d = 0; d < b->nd; d++) {
		ib.lo[t->perm[d]] = b->lo[d];
		ib.n[t->perm[d]] = b->n[d];
	}
	gx_eval(g, t->in[0], &ib, &iv);
	*v = iv;
	for (int d = 0; d < b->nd; d++)
		v->st[d] = iv.st[t->perm[d]];
}

static void concat_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v)
{
	long long base = 0, ost[GX_MAXD];
	int dim = t->dim;

	gx_view_new(v, b);
	gx_box_strides(b, ost);
	for (int k = 0; k < t->nin; k++) {
		long long len = g->t[t->in[k]].shape[dim];
		long long lo = b->lo[dim] > base ? b->lo[dim] : base;
		long long hi = b->lo[dim] + b->n[dim] < base + len ? b->lo[dim] + b->n[dim] : base + len;
		if (lo < hi) {
			struct gx_box ib = *b;
			struct gx_view iv;
			ib.lo[dim] = lo - base;
			ib.n[dim] = hi - lo;
			gx_eval(g, t->in[k], &ib, &iv);
			/* a row (the last dim) at a time */
			long long m = gx_box_numel(&ib), w = ib.n[b->nd - 1], sw = iv.st[b->nd - 1];
			for (long long e = 0; e < m; e += w) {
				long long rem = e, off = 0;
				const double *s = iv.p + gx_view_off(&iv, &ib, e);
				for (int d = b->nd - 1; d >= 0; d--) {
					long long i = rem % ib.n[d];
					rem /= ib.n[d];
					off += (d == dim ? i + lo - b->lo[dim] : i) * ost[d];
				}
				for (long long j = 0; j < w; j++)
					v->own[off + j * ost[b->nd - 1]] = s[j * sw];
			}
			gx_view_free(&iv);
		}
		base += len;
	}
}

/* ---- dispatch and entry */

void gx_eval(struct gx *g, int ti, const struct gx_box *b, struct gx_view *v)
{
	struct gx_t *t = &g->t[ti];

	if (t->dense || (g->memo && gx_memo(g, ti, b))) {
		gx_dense_view(t, t->dense, b, v);
		return;
	}
	switch (t->op) {
	case GX_LEAF: leaf_eval(g, ti, b, v); return;
	case GX_LINEAR: gx_linear_eval(g, t, b, v); return;
	case GX_MATMUL: gx_matmul_eval(g, t, b, v); return;
	case GX_CONV: gx_conv_eval(g, t, b, v); return;
	case GX_POOL: gx_pool_eval(g, t, b, v); return;
	case GX_APOOL: gx_apool_eval(g, t, b, v); return;
	case GX_ACT: act_eval(g, t, b, v); return;
	case GX_BINARY:
	case GX_DROPOUT: binary_eval(g, t, b, v); return;
	case GX_REDUCE: gx_reduce_eval(g, t, b, v); return;
	case GX_SOFTMAX: gx_softmax_eval(g, t, b, v); return;
	case GX_NORM: gx_norm_eval(g, t, b, v); return;
	case GX_RESHAPE: reshape_eval(g, t, b, v); return;
	case GX_PERMUTE: permute_eval(g, t, b, v); return;
	case GX_CONCAT: concat_eval(g, t, b, v); return;
	case GX_EXPAND:
	case GX_SLICE:
	case GX_PAD:
	case GX_CUMSUM:
	case GX_MFILL:
	case GX_RNN:
	case GX_CONST:
	case GX_TAKE:
	case GX_ROLL:
	case GX_COMPARE: gx_l3_eval(g, t, b, v); return;
	}
	abort(); /* invariant: the parser makes only the ops above */
}

int oracle_graph(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	struct gx *g = c->cache;
	struct gx_box b;
	struct gx_view view;
	long long rem = flat;

	if (!g) {
		long nt = c->threads > 0 ? c->threads : sysconf(_SC_NPROCESSORS_ONLN);
		g = calloc(1, sizeof(*g));
		if (!g)
			return kf_err(err, "out of memory");
		if (gx_parse(g, c->p, err) < 0) {
			gx_free(g);
			return -1;
		}
		g->c = c;
		g->threads = nt < 1 ? 1 : nt > 64 ? 64 : (int)nt;
		c->cache = g;
		c->cache_free = gx_free;
		if (gx_dense_wanted(g)) {
			g->dense = 1;
			gx_dense_run(g);
		} else {
			g->memo = gx_memo_on >= 0 ? gx_memo_on : g->nt - g->n_leaf > GX_DENSE_NODES;
		}
	}
	if (out != 0 || flat < 0 || flat >= g->t[g->out].numel)
		return kf_err(err, "%s: output %d element %lld out of range", c->p->id, out, flat);
	b.nd = g->t[g->out].nd;
	for (int d = b.nd - 1; d >= 0; d--) {
		b.lo[d] = rem % g->t[g->out].shape[d];
		b.n[d] = 1;
		rem /= g->t[g->out].shape[d];
	}
	gx_eval(g, g->out, &b, &view);
	*v = view.p[0];
	gx_view_free(&view);
	return 0;
}

/* ---- sampling */

static unsigned long long mix(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* Up to want distinct values of [0, len): 0, len - 1, `edges` more edge
 * values, then random ones. */
static int pick_values(long long len, int want, int edges, unsigned long long *rs, long long *out)
{
	long long e[5] = { 0, len - 1, 1, len / 2, len - 2 };
	int n = 0;

	if (len <= want) {
		for (long long i = 0; i < len; i++)
			out[n++] = i;
		return n;
	}
	for (int i = 0; i < 2 + edges && i < 5; i++) {
		int dup = 0;
		for (int k = 0; k < n; k++)
			dup |= out[k] == e[i];
		if (!dup)
			out[n++] = e[i];
	}
	for (int tries = 0; n < want && tries < 64 * want; tries++) {
		long long v = (long long)(mix(rs) % (unsigned long long)len);
		int dup = 0;
		for (int k = 0; k < n; k++)
			dup |= out[k] == v;
		if (!dup)
			out[n++] = v;
	}
	return n;
}

/* Points of a grid: every value of each dim of at most 128 (every channel
 * class), 16 values of a longer dim (its edges and random ones), and few
 * batch indices (dim 0: first, last, random; as many as fill max), so that
 * the samples share the statistics (norm groups, softmax rows, linear rows)
 * they need: first and last elements, each grid value at least once, then
 * random grid points. */
int oracle_graph_sample(const struct problem *p, int out, unsigned long long seed,
			long long *idx, int max)
{
	const struct problem_tensor *t;
	unsigned long long rs = seed ^ 0x243F6A8885A308D3ull;
	long long *vals[GX_MAXD] = { NULL }, rest = 1, st[GX_MAXD], s = 1;
	int nv[GX_MAXD], n = 0, m = 0;

	if (out < 0 || out >= p->n_out || max <= 0)
		return 0;
	t = &p->t[p->n_in + out];
	if (t->numel <= max) {
		for (long long i = 0; i < t->numel; i++)
			idx[i] = i;
		return (int)t->numel;
	}
	for (int d = t->ndim - 1; d >= 0; d--) {
		st[d] = s;
		s *= t->shape[d];
	}
	for (int d = 0; d < t->ndim; d++) {
		vals[d] = xcalloc((size_t)max + 128, sizeof(long long));
		if (!vals[d]) { /* the caller falls back to the plain sampler */
			while (d-- > 0)
				free(vals[d]);
			return -1;
		}
	}
	for (int d = 1; d < t->ndim; d++) {
		nv[d] = pick_values(t->shape[d], t->shape[d] <= 128 ? 128 : 16, 3, &rs, vals[d]);
		rest = rest * nv[d] > max ? max : rest * nv[d];
	}
	if (t->ndim == 1) {
		nv[0] = pick_values(t->shape[0], max, 3, &rs, vals[0]);
	} else {
		long long nb = (max + rest - 1) / rest;
		nv[0] = pick_values(t->shape[0], nb < 4 ? 4 : nb > max ? max : (int)nb, 0, &rs, vals[0]);
	}
	idx[n++] = 0;
	idx[n++] = t->numel - 1;
	for (int d = 0; d < t->ndim; d++)
		for (int k = 0; k < nv[d] && n < max; k++) {
			long long flat = 0;
			for (int e = 0; e < t->ndim; e++)
				flat += (e == d ? vals[d][k] : vals[e][mix(&rs) % (unsigned)nv[e]]) * st[e];
			idx[n++] = flat;
		}
	/* random grid points until max distinct ones (or the grid is spent) */
	for (int round = 0; round < 16; round++) {
		for (int k = n; k < max; k++) {
			long long flat = 0;
			for (int e = 0; e < t->ndim; e++)
				flat += vals[e][mix(&rs) % (unsigned)nv[e]] * st[e];
			idx[n++] = flat;
		}
		qsort(idx, (size_t)n, sizeof(*idx), cmp_ll);
		m = 0;
		for (int i = 0; i < n; i++)
			if (m == 0 || idx[m - 1] != idx[i])
				idx[m++] = idx[i];
		n = m;
		if (n >= max)
			break;
	}
	for (int d = 0; d < t->ndim; d++)
		free(vals[d]);
	return m;
}
