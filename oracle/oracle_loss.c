/* Losses (scalar outputs): MSE, Huber, KL divergence (batchmean), hinge,
 * cross-entropy, triplet margin. Each is a full pass over the inputs in
 * double, split over threads, done once per context (memo). */
#include "oracle/oracle_int.h"

#include <math.h>
#include <string.h>

struct loss_arg {
	int kind;
	long long cols;
	double margin;
};

enum { L_MSE, L_HUBER, L_KLDIV, L_HINGE, L_CE, L_TRIPLET };

static void loss_acc(struct inputs_gen *g, long long k, const void *arg, double *acc)
{
	const struct loss_arg *a = arg;
	double p, t, d;

	switch (a->kind) {
	case L_MSE:
		d = inputs_value(g, 0, k) - inputs_value(g, 1, k);
		acc[0] += d * d;
		break;
	case L_HUBER:
		d = fabs(inputs_value(g, 0, k) - inputs_value(g, 1, k));
		acc[0] += d < 1 ? 0.5 * d * d : d - 0.5;
		break;
	case L_KLDIV:
		t = inputs_value(g, 1, k);
		p = inputs_value(g, 0, k);
		if (t > 0)
			acc[0] += t * (log(t) - log(p));
		break;
	case L_HINGE:
		d = 1 - inputs_value(g, 0, k) * inputs_value(g, 1, k % a->cols);
		acc[0] += d > 0 ? d : 0;
		break;
	case L_CE: { /* k is a row */
		double m = -INFINITY, s = 0;
		for (long long j = 0; j < a->cols; j++)
			m = fmax(m, inputs_value(g, 0, k * a->cols + j));
		for (long long j = 0; j < a->cols; j++)
			s += exp(inputs_value(g, 0, k * a->cols + j) - m);
		long long tgt = (long long)inputs_value(g, 1, k);
		if (tgt < 0 || tgt >= a->cols)
			acc[1] += 1; /* counted as an error by the caller */
		else
			acc[0] += m + log(s) - inputs_value(g, 0, k * a->cols + tgt);
		break;
	}
	default: { /* L_TRIPLET, k is a row */
		double sp = 0, sn = 0;
		for (long long j = 0; j < a->cols; j++) {
			double an = inputs_value(g, 0, k * a->cols + j);
			double dp = an - inputs_value(g, 1, k * a->cols + j) + 1e-6;
			double dn = an - inputs_value(g, 2, k * a->cols + j) + 1e-6;
			sp += dp * dp;
			sn += dn * dn;
		}
		d = sqrt(sp) - sqrt(sn) + a->margin;
		acc[0] += d > 0 ? d : 0;
	}
	}
}

int oracle_loss(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	static const char *const names[] = { "mse", "huber", "kldiv", "hinge", "cross_entropy",
					     "triplet" };
	const char *op = oracle_attr_str(c, "op");
	const struct problem_tensor *x = &c->p->t[0];
	struct loss_arg a = { -1, x->shape[x->ndim - 1], 1.0 };
	long long n = x->numel, rows = x->numel / a.cols;
	double div = (double)x->numel;
	int fresh;
	double *s;

	(void)out, (void)flat;
	for (int k = 0; k < 6; k++)
		if (!strcmp(op, names[k]))
			a.kind = k;
	if (a.kind < 0)
		return oracle_unknown_op(c, err);
	if (a.kind == L_KLDIV)
		div = (double)rows; /* batchmean */
	if (a.kind == L_CE || a.kind == L_TRIPLET) {
		n = rows;
		div = (double)rows;
	}
	if (a.kind == L_TRIPLET)
		problem_scalar(c->p, "margin", &a.margin);
	if (a.kind == L_HINGE && (c->p->n_in < 2 || c->p->t[1].numel != a.cols))
		return kf_err(err, "%s: hinge targets must have the last dim's length %lld", c->p->id,
			      a.cols);
	if ((a.kind == L_CE && (c->p->n_in < 2 || c->p->t[1].numel != rows)) ||
	    (a.kind == L_TRIPLET && c->p->n_in < 3) ||
	    ((a.kind == L_MSE || a.kind == L_HUBER || a.kind == L_KLDIV) &&
	     (c->p->n_in < 2 || c->p->t[1].numel != n)))
		return kf_err(err, "%s: loss %s: inputs do not match the predictions' shape",
			      c->p->id, op);
	s = oracle_memo(c, 0, 2, &fresh);
	if (fresh)
		oracle_par_acc(c, n, loss_acc, &a, s, 2);
	if (s[1] != 0)
		return kf_err(err, "%s: %.0f targets outside [0, %lld)", c->p->id, s[1], a.cols);
	*v = s[0] / div;
	return 0;
}
