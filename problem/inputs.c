#include "problem/inputs.h"
#include "gen/philox_cuh.h"
#include "gen/inputs_cuh.h"
#include "core/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(KF_DT_F32 == KF_F32 && KF_DT_F16 == KF_F16 && KF_DT_BF16 == KF_BF16 &&
		       KF_DT_I64 == KF_I64 && KF_DT_I32 == KF_I32 && KF_DT_BOOL == KF_BOOL,
	       "dtype numbering shared with philox.cuh");
_Static_assert(KF_DK_UNIFORM == KF_DIST_UNIFORM && KF_DK_NORMAL == KF_DIST_NORMAL &&
		       KF_DK_RANDINT == KF_DIST_RANDINT && KF_DK_BERNOULLI == KF_DIST_BERNOULLI &&
		       KF_DK_SIGN == KF_DIST_SIGN && KF_DK_CONSTANT == KF_DIST_CONSTANT,
	       "dist numbering shared with philox.cuh");
_Static_assert(KF_PO_SYMMETRIZE == KF_POST_SYMMETRIZE && KF_PO_TRIU == KF_POST_TRIU &&
		       KF_PO_TRIL == KF_POST_TRIL && KF_PO_SCALE_BY_RANDOM == KF_POST_SCALE_BY_RANDOM &&
		       KF_PO_SOFTMAX_LASTDIM == KF_POST_SOFTMAX_LASTDIM &&
		       KF_PO_SCALED_SOFTMAX == KF_POST_SCALED_SOFTMAX,
	       "post numbering shared with philox.cuh");

void inputs_desc(const struct problem *p, int t, unsigned long long seed, struct kf_gen_desc *d)
{
	const struct problem_tensor *pt = &p->t[t];

	memset(d, 0, sizeof(*d));
	d->seed = seed;
	d->t = t;
	d->kind = (int)pt->dist.kind;
	d->dtype = (int)pt->dtype;
	d->post = (int)pt->dist.post;
	d->a = pt->dist.a;
	d->b = pt->dist.b;
	d->cols = pt->ndim >= 1 ? pt->shape[pt->ndim - 1] : 1;
	d->rows = pt->ndim >= 2 ? pt->shape[pt->ndim - 2] : 1;
	if (d->cols < 1)
		d->cols = 1;
	if (d->rows < 1)
		d->rows = 1;
}

void inputs_draw_spec(struct inputs_draw *d)
{
	memset(d, 0, sizeof(*d));
	d->redraw = -1;
}

void inputs_desc_draw(const struct problem *p, int t, unsigned long long seed,
		      const struct inputs_draw *d, struct kf_gen_desc *out)
{
	const struct problem_tensor *pt = &p->t[t];

	inputs_desc(p, t, d && d->redraw == t && !d->stride ? INPUTS_REDRAW_SEED(seed) : seed, out);
	if (d && d->alive && pt->has_alive) {
		out->kind = (int)pt->alive.kind;
		out->a = pt->alive.a;
		out->b = pt->alive.b;
		out->post = KF_PO_NONE;
	}
	/* A redrawn constant (norm weight 1, bias 0) would not change: drawn
	 * around it, U[c - 1, c + 1), as the engine's extra draws do. */
	if (d && d->redraw == t && out->kind == KF_DK_CONSTANT &&
	    (pt->dtype == KF_F32 || pt->dtype == KF_F16 || pt->dtype == KF_BF16)) {
		double c = out->a;
		out->kind = KF_DK_UNIFORM;
		out->a = c - 1.0;
		out->b = c + 1.0;
	}
}

int inputs_draw_region(const struct inputs_draw *d, int t, long long i)
{
	return d->redraw == t && d->stride > 0 && i % d->stride < d->block;
}

int inputs_draw_set(const struct problem *p, const struct inputs_draw *d, int t, long long i,
		    double *v)
{
	const struct problem_tensor *pt = &p->t[t];

	if (!d->alive || !pt->has_alive)
		return 0;
	for (int k = 0; k < pt->n_set; k++)
		if (i >= pt->set_lo[k] && i < pt->set_hi[k]) {
			*v = pt->set_v[k];
			return 1;
		}
	return 0;
}

static void memo_clear(struct inputs_gen *g)
{
	for (int i = 0; i < INPUTS_MEMO; i++)
		g->memo[i].t = -1;
}

void inputs_gen_init_draw(struct inputs_gen *g, const struct problem *p, unsigned long long seed,
			  const struct inputs_draw *d)
{
	memset(g, 0, sizeof(*g));
	g->p = p;
	g->seed = seed;
	if (d)
		g->draw = *d;
	else
		inputs_draw_spec(&g->draw);
	g->desc = xcalloc((size_t)p->n_in + 1, sizeof(*g->desc));
	for (int t = 0; t < p->n_in; t++)
		inputs_desc_draw(p, t, seed, &g->draw, &g->desc[t]);
	if (g->draw.redraw >= 0 && g->draw.redraw < p->n_in && g->draw.stride > 0) {
		g->redesc = g->desc[g->draw.redraw];
		g->redesc.seed = INPUTS_REDRAW_SEED(seed);
	}
	memo_clear(g);
}

void inputs_gen_init(struct inputs_gen *g, const struct problem *p, unsigned long long seed)
{
	inputs_gen_init_draw(g, p, seed, NULL);
}

void inputs_gen_fork(struct inputs_gen *dst, const struct inputs_gen *src)
{
	*dst = *src;
	dst->fork = 1;
	memo_clear(dst);
}

void inputs_gen_release(struct inputs_gen *g)
{
	if (!g->fork)
		free(g->desc);
	memset(g, 0, sizeof(*g));
	memo_clear(g);
}

/* Row max and canonical sum (philox.cuh, KF_SOFTMAX_LANES) of a row. */
static void softmax_row(const struct kf_gen_desc *d, long long row, double *mx, double *sum)
{
	double lane[KF_SOFTMAX_LANES];
	long long n = d->cols, base = row * n;
	double m = -__builtin_inf();

	for (long long j = 0; j < n; j++) {
		double x = kf_elem_value(d, (kf_u64)(base + j));
		if (x > m)
			m = x;
	}
	for (int k = 0; k < KF_SOFTMAX_LANES; k++) {
		double s = 0.0;
		for (long long j = k; j < n; j += KF_SOFTMAX_LANES)
			s = KF_DADD(s, kf_exp(KF_DADD(kf_elem_value(d, (kf_u64)(base + j)), -m)));
		lane[k] = s;
	}
	for (int s = KF_SOFTMAX_LANES / 2; s > 0; s >>= 1)
		for (int k = 0; k < s; k++)
			lane[k] = KF_DADD(lane[k], lane[k + s]);
	*mx = m;
	*sum = lane[0];
}

unsigned long long inputs_bits(struct inputs_gen *g, int t, long long i)
{
	const struct kf_gen_desc *d = &g->desc[t];
	double x;

	if (inputs_draw_set(g->p, &g->draw, t, i, &x))
		return kf_encode(x, d->dtype);
	if (inputs_draw_region(&g->draw, t, i)) {
		/* Block k of the region is drawn as a tensor of its own (seed + k),
		 * as the GPU fills it (one launch a block); no row-wise post here. */
		struct kf_gen_desc r = g->redesc;
		r.seed += (unsigned long long)(i / g->draw.stride);
		return kf_encode(kf_elem_value(&r, (kf_u64)(i % g->draw.stride)), d->dtype);
	}
	x = kf_elem_value(d, (kf_u64)i);
	if (!kf_post_is_rowwise(d->post))
		return kf_encode(x, d->dtype);
	long long row = i / d->cols;
	struct inputs_memo *m = &g->memo[t % INPUTS_MEMO];
	if (m->t != t || m->row != row) {
		softmax_row(d, row, &m->max, &m->sum);
		m->t = t;
		m->row = row;
	}
	return kf_softmax_bits(d, x, m->max, m->sum);
}

double inputs_value(struct inputs_gen *g, int t, long long i)
{
	return kf_decode(inputs_bits(g, t, i), g->desc[t].dtype);
}

int inputs_fill(struct inputs_gen *g, int t, long long start, long long count, void *dst,
		struct buf *err)
{
	const struct problem_tensor *pt;
	size_t es;

	if (t < 0 || t >= g->p->n_in)
		return kf_err(err, "inputs: tensor %d is not an input", t);
	pt = &g->p->t[t];
	if (start < 0 || count < 0 || start > pt->numel || count > pt->numel - start)
		return kf_err(err, "inputs: range [%lld, +%lld) outside %s (%lld elements)", start,
			      count, pt->name, pt->numel);
	es = kf_dtype_size(pt->dtype);
	for (long long k = 0; k < count; k++) {
		unsigned long long b = inputs_bits(g, t, start + k);
		unsigned char *o = (unsigned char *)dst + (size_t)k * es;
		for (size_t j = 0; j < es; j++)
			o[j] = (unsigned char)(b >> (8 * j));
	}
	return 0;
}

struct fill_job {
	struct inputs_gen g;
	int t;
	long long start, count;
	void *dst;
	int rc;
};

static void *fill_run(void *j_)
{
	struct fill_job *j = j_;
	j->rc = inputs_fill(&j->g, j->t, j->start, j->count, j->dst, NULL);
	return NULL;
}

int inputs_fill_mt(struct inputs_gen *g, int t, long long start, long long count, void *dst,
		   int threads, struct buf *err)
{
	long nt = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
	struct fill_job *jobs;
	pthread_t *th;
	int rc = 0;

	if (t < 0 || t >= g->p->n_in || count < (1 << 16) || nt <= 1)
		return inputs_fill(g, t, start, count, dst, err);
	if (nt > 64)
		nt = 64;
	if (start < 0 || count < 0 || start > g->p->t[t].numel || count > g->p->t[t].numel - start)
		return inputs_fill(g, t, start, count, dst, err); /* reports the range */
	jobs = xcalloc((size_t)nt, sizeof(*jobs));
	th = xcalloc((size_t)nt, sizeof(*th));
	for (long k = 0; k < nt; k++) {
		long long lo = count * k / nt, hi = count * (k + 1) / nt;
		inputs_gen_fork(&jobs[k].g, g);
		jobs[k].t = t;
		jobs[k].start = start + lo;
		jobs[k].count = hi - lo;
		jobs[k].dst = (unsigned char *)dst + (size_t)lo * kf_dtype_size(g->p->t[t].dtype);
		if (k && pthread_create(&th[k], NULL, fill_run, &jobs[k]) != 0)
			fill_run(&jobs[k]), th[k] = 0;
	}
	fill_run(&jobs[0]);
	for (long k = 1; k < nt; k++)
		if (th[k])
			pthread_join(th[k], NULL);
	for (long k = 0; k < nt; k++) {
		rc |= jobs[k].rc;
		inputs_gen_release(&jobs[k].g);
	}
	free(jobs);
	free(th);
	return rc ? kf_err(err, "inputs: fill of %s failed", g->p->t[t].name) : 0;
}

void inputs_device_source(struct buf *src)
{
	buf_reset(src);
	buf_adds(src, philox_cuh);
	buf_adds(src, inputs_cuh);
}
