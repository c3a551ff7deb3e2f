/* Reductions over one dim of (B, D1, D2): sum, mean, max, min, argmax,
 * argmin (first index on ties, as PyTorch). */
#include "oracle/oracle_int.h"

#include <string.h>

int oracle_reduce(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	const char *op = oracle_attr_str(c, "op");
	const struct problem_tensor *x = &c->p->t[0];
	long long d1, d2, b, j, best_i = 0;
	double acc, best;
	int kind;

	(void)out;
	if ((int)oracle_attr_num(c, "dim", 1) != 1 || x->ndim != 3)
		return kf_err(err, "%s: reduce oracle handles dim 1 of a 3-d input", c->p->id);
	d1 = x->shape[1];
	d2 = x->shape[2];
	b = flat / d2;
	j = flat % d2;
	kind = !strcmp(op, "sum") ? 0 : !strcmp(op, "mean") ? 1 : !strcmp(op, "max") ? 2 :
	       !strcmp(op, "min") ? 3 : !strcmp(op, "argmax") ? 4 : !strcmp(op, "argmin") ? 5 : -1;
	if (kind < 0)
		return oracle_unknown_op(c, err);
	acc = 0;
	best = oracle_input(c, 0, b * d1 * d2 + j);
	for (long long k = 0; k < d1; k++) {
		double e = oracle_input(c, 0, (b * d1 + k) * d2 + j);
		acc += e;
		if (((kind == 2 || kind == 4) && e > best) || ((kind == 3 || kind == 5) && e < best)) {
			best = e;
			best_i = k;
		}
	}
	*v = kind == 0 ? acc : kind == 1 ? acc / (double)d1 : kind <= 3 ? best : (double)best_i;
	return 0;
}
