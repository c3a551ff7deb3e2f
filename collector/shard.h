/* Deterministic, cost-balanced assignment of problems to shards (for
 * Slurm job arrays). Longest-processing-time-first: items sorted by cost,
 * descending, ties by id; each goes to the least-loaded shard, ties to the
 * lowest index. The same items give the same shards on every machine. */
#ifndef KF_SHARD_H
#define KF_SHARD_H

#include "problem/problem.h"

struct shard_item {
	const char *id;
	double cost;              /* expected seconds; must be >= 0 */
};

/* assign[i] = shard of items[i]; load (may be NULL, n_shards entries) gets
 * each shard's total cost. 0, or -1 with err on bad arguments. */
int shard_assign(const struct shard_item *items, int n, int n_shards, int *assign,
		 double *load, struct buf *err);

/* Expected search cost of a problem, in seconds: per candidate a fixed
 * compile-and-harness part plus every launch (checks, warm-ups, timed
 * trials) at the problem's roofline time on an H100-class GPU. Only the
 * ratios matter. */
double shard_problem_cost(const struct problem *p);

#endif
