/* Scans along dim 1 of (rows, cols): cumsum, cumprod, reverse and
 * exclusive cumsum, masked cumsum. */
#include "oracle/oracle_int.h"

#include <string.h>

int oracle_scan(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	const char *op = oracle_attr_str(c, "op");
	const struct problem_tensor *x = &c->p->t[0];
	long long cols, r, j;
	double acc;

	(void)out;
	if (x->ndim != 2 || (int)oracle_attr_num(c, "dim", 1) != 1)
		return kf_err(err, "%s: scan oracle handles dim 1 of a 2-d input", c->p->id);
	cols = x->shape[1];
	r = flat / cols;
	j = flat % cols;
	if (!strcmp(op, "cumsum") || !strcmp(op, "masked_cumsum")) {
		int masked = op[0] == 'm';
		acc = 0;
		for (long long k = 0; k <= j; k++)
			if (!masked || oracle_input(c, 1, r * cols + k) != 0)
				acc += oracle_input(c, 0, r * cols + k);
	} else if (!strcmp(op, "cumprod")) {
		acc = 1;
		for (long long k = 0; k <= j && acc != 0; k++)
			acc *= oracle_input(c, 0, r * cols + k);
	} else if (!strcmp(op, "cumsum_reverse")) {
		acc = 0;
		for (long long k = j; k < cols; k++)
			acc += oracle_input(c, 0, r * cols + k);
	} else if (!strcmp(op, "cumsum_exclusive")) {
		acc = 0;
		for (long long k = 0; k < j; k++)
			acc += oracle_input(c, 0, r * cols + k);
	} else {
		return oracle_unknown_op(c, err);
	}
	*v = acc;
	return 0;
}
