#include "core/inputs.h"
#include "gen/philox_cuh.h"
#include "gen/inputs_cuh.h"

#include <string.h>

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

void inputs_gen_init(struct inputs_gen *g, const struct problem *p, unsigned long long seed)
{
	memset(g, 0, sizeof(*g));
	g->p = p;
	g->seed = seed;
	for (int t = 0; t < p->n_in && t < PROBLEM_MAX_TENSORS; t++)
		inputs_desc(p, t, seed, &g->desc[t]);
	for (int t = 0; t < PROBLEM_MAX_TENSORS; t++)
		g->memo_row[t] = -1;
}

void inputs_gen_release(struct inputs_gen *g)
{
	memset(g, 0, sizeof(*g));
	for (int t = 0; t < PROBLEM_MAX_TENSORS; t++)
		g->memo_row[t] = -1;
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
	double x = kf_elem_value(d, (kf_u64)i);

	if (!kf_post_is_rowwise(d->post))
		return kf_encode(x, d->dtype);
	long long row = i / d->cols;
	if (g->memo_row[t] != row) {
		softmax_row(d, row, &g->memo_max[t], &g->memo_sum[t]);
		g->memo_row[t] = row;
	}
	return kf_softmax_bits(d, x, g->memo_max[t], g->memo_sum[t]);
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

void inputs_device_source(struct buf *src)
{
	buf_reset(src);
	buf_adds(src, philox_cuh);
	buf_adds(src, inputs_cuh);
}
