/* Element-wise oracles: activations, NewGELU, matrix times scalar. */
#include "oracle/oracle_int.h"

#include <math.h>
#include <string.h>

int oracle_elementwise(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	const char *op = oracle_attr_str(c, "op");
	double x = oracle_input(c, 0, flat), s;

	(void)out;
	if (!strcmp(op, "relu"))
		*v = x > 0 ? x : 0;
	else if (!strcmp(op, "leaky_relu"))
		*v = x > 0 ? x : x * (problem_scalar(c->p, "negative_slope", &s) ? 0.01 : s);
	else if (!strcmp(op, "sigmoid"))
		*v = 1 / (1 + exp(-x));
	else if (!strcmp(op, "tanh"))
		*v = tanh(x);
	else if (!strcmp(op, "swish"))
		*v = x / (1 + exp(-x));
	else if (!strcmp(op, "gelu"))
		*v = 0.5 * x * (1 + erf(x / sqrt(2.0)));
	else if (!strcmp(op, "selu")) {
		const double alpha = 1.6732632423543772848170429916717;
		const double scale = 1.0507009873554804934193349852946;
		*v = x > 0 ? scale * x : scale * alpha * expm1(x);
	} else if (!strcmp(op, "hardsigmoid"))
		*v = fmin(fmax(x / 6 + 0.5, 0), 1);
	else if (!strcmp(op, "softplus"))
		*v = x > 20 ? x : log1p(exp(x));
	else if (!strcmp(op, "softsign"))
		*v = x / (1 + fabs(x));
	else if (!strcmp(op, "elu"))
		*v = x > 0 ? x : (problem_scalar(c->p, "alpha", &s) ? 1.0 : s) * expm1(x);
	else if (!strcmp(op, "hardtanh"))
		*v = fmin(fmax(x, -1), 1);
	else if (!strcmp(op, "new_gelu"))
		*v = 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
	else if (!strcmp(op, "scale"))
		/* PyTorch multiplies in float32 by the scalar rounded to float */
		*v = x * (double)(float)(problem_scalar(c->p, "s", &s) ? 1.0 : s);
	else
		return oracle_unknown_op(c, err);
	return 0;
}
