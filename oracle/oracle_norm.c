/* Normalisations: softmax, log-softmax, BatchNorm (training mode),
 * InstanceNorm, GroupNorm, RMSNorm, Frobenius, L1, L2, LayerNorm.
 * Statistics are computed once per row/channel/group (memo) in double. */
#include "oracle/oracle_int.h"

#include <math.h>
#include <string.h>

/* Elements base + (k / inner) * stride + k % inner, k < count. */
struct seg {
	long long base, inner, stride;
};

static void seg_acc(struct inputs_gen *g, long long k, const void *arg, double *acc)
{
	const struct seg *s = arg;
	double x = inputs_value(g, 0, s->base + (k / s->inner) * s->stride + k % s->inner);
	acc[0] += x;
	acc[1] += x * x;
	acc[2] += fabs(x);
}

/* slot = {sum, sum of squares, sum of |x|, count} of a segment. */
static const double *seg_stats(struct oracle_ctx *c, long long key, long long base,
			       long long inner, long long stride, long long count)
{
	int fresh;
	double *s = oracle_memo(c, key, 4, &fresh);
	if (fresh) {
		struct seg sg = { base, inner, stride };
		oracle_par_acc(c, count, seg_acc, &sg, s, 3);
		s[3] = (double)count;
	}
	return s;
}

static double standardize(const double *s, double x, double eps)
{
	double mean = s[0] / s[3], var = s[1] / s[3] - mean * mean;
	if (var < 0)
		var = 0;
	return (x - mean) / sqrt(var + eps);
}

static double affine(struct oracle_ctx *c, double y, long long k)
{
	if (c->p->n_in >= 3)
		return y * oracle_input(c, 1, k) + oracle_input(c, 2, k);
	return y;
}

int oracle_norm(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	const char *op = oracle_attr_str(c, "op");
	const struct problem_tensor *x = &c->p->t[0];
	double eps = oracle_attr_num(c, "eps", 1e-5), xv = oracle_input(c, 0, flat);
	long long last = x->shape[x->ndim - 1];
	int fresh;

	(void)out;
	if (!strcmp(op, "softmax") || !strcmp(op, "log_softmax")) {
		long long r = flat / last;
		double *s = oracle_memo(c, r, 2, &fresh);
		if (fresh) {
			double m = -INFINITY, sum = 0;
			for (long long j = 0; j < last; j++)
				m = fmax(m, oracle_input(c, 0, r * last + j));
			for (long long j = 0; j < last; j++)
				sum += exp(oracle_input(c, 0, r * last + j) - m);
			s[0] = m;
			s[1] = sum;
		}
		*v = op[0] == 's' ? exp(xv - s[0]) / s[1] : xv - s[0] - log(s[1]);
		return 0;
	}
	if (!strcmp(op, "l1norm") || !strcmp(op, "l2norm")) {
		long long r = flat / last;
		const double *s = seg_stats(c, r, r * last, last, 0, last);
		*v = op[1] == '1' ? xv / (s[2] / (double)last) : xv / sqrt(s[1]);
		return 0;
	}
	if (!strcmp(op, "frobenius")) {
		const double *s = seg_stats(c, 0, 0, x->numel, 0, x->numel);
		*v = xv / sqrt(s[1]);
		return 0;
	}
	if (x->ndim != 4)
		return kf_err(err, "%s: norm op %s needs (N, C, H, W)", c->p->id, op);
	long long N = x->shape[0], C = x->shape[1], HW = x->shape[2] * x->shape[3];
	long long ch = (flat / HW) % C, n = flat / (C * HW);
	if (!strcmp(op, "batchnorm")) {
		const double *s = seg_stats(c, ch, ch * HW, HW, C * HW, N * HW);
		*v = affine(c, standardize(s, xv, eps), ch);
	} else if (!strcmp(op, "instancenorm")) {
		long long key = flat / HW;
		const double *s = seg_stats(c, key, key * HW, HW, 0, HW);
		*v = standardize(s, xv, eps);
	} else if (!strcmp(op, "groupnorm")) {
		long long G, per;
		if (problem_size(c->p, "num_groups", &G) < 0 || G <= 0 || C % G)
			return kf_err(err, "%s: groupnorm needs sizes.num_groups dividing C", c->p->id);
		per = C / G;
		long long key = n * G + ch / per;
		const double *s = seg_stats(c, key, key * per * HW, per * HW, 0, per * HW);
		*v = affine(c, standardize(s, xv, eps), ch);
	} else if (!strcmp(op, "rmsnorm")) {
		long long q = flat % HW;
		double *s = oracle_memo(c, n * HW + q, 1, &fresh);
		if (fresh)
			for (long long k = 0; k < C; k++) {
				double e = oracle_input(c, 0, (n * C + k) * HW + q);
				s[0] += e * e;
			}
		*v = xv / sqrt(s[0] / (double)C + eps);
	} else if (!strcmp(op, "layernorm")) {
		long long D = C * HW;
		const double *s = seg_stats(c, n, n * D, D, 0, D);
		*v = affine(c, standardize(s, xv, eps), flat % D);
	} else {
		return oracle_unknown_op(c, err);
	}
	return 0;
}
