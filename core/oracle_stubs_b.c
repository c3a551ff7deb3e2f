/* Placeholders for the matmul, conv and pool oracles (probsB). The lead
 * deletes this file when probsB's oracle_matmul.c etc. are merged. */
#include "core/oracle.h"

int oracle_matmul(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	(void)out, (void)flat, (void)v;
	return kf_err(err, "%s: the matmul oracle is not built in", c->p->id);
}

int oracle_conv(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	(void)out, (void)flat, (void)v;
	return kf_err(err, "%s: the conv oracle is not built in", c->p->id);
}

int oracle_pool(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	(void)out, (void)flat, (void)v;
	return kf_err(err, "%s: the pool oracle is not built in", c->p->id);
}
