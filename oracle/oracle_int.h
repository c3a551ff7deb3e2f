/* Helpers shared by the oracle families (oracle/oracle_*.c); not public. */
#ifndef KF_ORACLE_INT_H
#define KF_ORACLE_INT_H

#include "oracle/oracle.h"

/* attrs.KEY of the spec ("op", "dim", "eps"...). */
const char *oracle_attr_str(const struct oracle_ctx *c, const char *key);
double oracle_attr_num(const struct oracle_ctx *c, const char *key, double def);

/* A memo slot of n doubles for key; *fresh = 1 when just created (the
 * caller fills it). The memo lives in c->cache. */
double *oracle_memo(struct oracle_ctx *c, long long key, int n, int *fresh);

/* acc[0..nacc) += the terms of elements [0, n): fn(gen, k, arg, acc) adds
 * term k. Split over threads, each with its own generator. nacc <= 8. */
typedef void (*oracle_acc_fn)(struct inputs_gen *g, long long k, const void *arg, double *acc);
void oracle_par_acc(struct oracle_ctx *c, long long n, oracle_acc_fn fn, const void *arg,
		    double *acc, int nacc);

/* Coordinates of flat index `flat` in tensor t. */
void oracle_unravel(const struct problem_tensor *t, long long flat, long long *coord);

int oracle_unknown_op(const struct oracle_ctx *c, struct buf *err);

/* oracle_sample for family graph (oracle/oracle_graph.c); -1 when out of memory. */
int oracle_graph_sample(const struct problem *p, int out, unsigned long long seed,
			long long *idx, int max);

#endif
