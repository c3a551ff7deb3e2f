/* Scaled dot-product attention, no mask: out[b,h,i,:] = softmax(q_i K^T /
 * sqrt(D)) V. The softmax weights of a query row are computed once (memo). */
#include "oracle/oracle_int.h"

#include <math.h>
#include <string.h>

int oracle_attention(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	const struct problem_tensor *q = &c->p->t[0];
	long long S, D, row, bh, d;
	double *w, acc = 0;
	int fresh;

	(void)out;
	if (strcmp(oracle_attr_str(c, "op"), "sdpa"))
		return oracle_unknown_op(c, err);
	if (q->ndim != 4 || c->p->n_in != 3)
		return kf_err(err, "%s: attention needs Q, K, V of (B, H, S, D)", c->p->id);
	S = q->shape[2];
	D = q->shape[3];
	row = flat / D;
	d = flat % D;
	bh = row / S;
	w = oracle_memo(c, row, (int)S, &fresh);
	if (fresh) {
		double m = -INFINITY, sum = 0, scale = 1 / sqrt((double)D);
		for (long long k = 0; k < S; k++) {
			double s = 0;
			for (long long e = 0; e < D; e++)
				s += oracle_input(c, 0, row * D + e) * oracle_input(c, 1, (bh * S + k) * D + e);
			w[k] = s * scale;
			m = fmax(m, w[k]);
		}
		for (long long k = 0; k < S; k++) {
			w[k] = exp(w[k] - m);
			sum += w[k];
		}
		for (long long k = 0; k < S; k++)
			w[k] /= sum;
	}
	for (long long k = 0; k < S; k++)
		acc += w[k] * oracle_input(c, 2, (bh * S + k) * D + d);
	*v = acc;
	return 0;
}
