/* Problems start costliest first, so that a long problem does not start
 * last and run alone while the other threads have nothing left. The cost is
 * the roofline floor, which orders evaluation cost well enough (timed
 * trials, checks and the double-precision reference all grow with it); the
 * store's contents do not depend on the order. On one H100 (one worker, 8
 * level-1 problems, 1 round) it changed nothing beyond noise, 57.7 against
 * 58.3 evaluations a minute: the single worker serialises evaluations
 * anyway. It counts where workers can idle at the end: several GPUs, or a
 * proposer slower than the evaluations. */
#include "collector/search_order.h"
#include "core/xalloc.h"

#include <stdlib.h>

/* Nominal fp32 rate and bandwidth (an H100's, roughly): only their ratio
 * matters for an order. */
#define NOMINAL_FLOPS 50e12
#define NOMINAL_BYTES 3e12

double search_order_cost(const struct problem *p)
{
	double f = p->flops > 0 ? p->flops / NOMINAL_FLOPS : 0;
	double b = p->min_bytes > 0 ? p->min_bytes / NOMINAL_BYTES : 0;
	return (f > b ? f : b) * 1e3;
}

struct keyed {
	double cost;
	int idx;
};

static int by_cost(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost < y->cost ? 1 : -1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

void search_order(const struct problem *probs, int n, int *order)
{
	struct keyed *k = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*k));

	for (int i = 0; i < n; i++)
		k[i] = (struct keyed){ search_order_cost(&probs[i]), i };
	qsort(k, (size_t)n, sizeof(*k), by_cost);
	for (int i = 0; i < n; i++)
		order[i] = k[i].idx;
	free(k);
}
