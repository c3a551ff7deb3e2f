/* The matmul family's oracle: geometry parsed once per context (cached in
 * c->cache), values from oracle/oracle_geom.c over the generator's inputs.
 * Long sums (matrix-vector, large K) are split over threads. */
#include <stdlib.h>

#include "problem/inputs.h"
#include "oracle/oracle_geom.h"
#include "oracle/oracle_int.h"

#define MM_PAR_K (1 << 16)   /* K from which one output's sum is threaded */

static double fetch_input(void *u, int t, long long i)
{
	return oracle_input(u, t, i);
}

struct term_arg {
	const struct mm_geom *g;
	long long flat;
};

static void term(struct inputs_gen *gen, long long k, const void *arg_, double *acc)
{
	const struct term_arg *arg = arg_;
	long long ia, ib;
	mm_operands(arg->g, arg->flat, k, &ia, &ib);
	acc[0] += inputs_value(gen, 0, ia) * inputs_value(gen, 1, ib);
}

int oracle_matmul(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	struct mm_geom *g = c->cache;

	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return kf_err(err, "out of memory");
		if (mm_geom_from_problem(c->p, g, err) < 0) {
			free(g);
			return -1;
		}
		c->cache = g;
		c->cache_free = free;
	}
	if (out != 0 || flat < 0 || flat >= mm_numel(g))
		return kf_err(err, "%s: output %d element %lld out of range", c->p->id, out, flat);
	if (g->K >= MM_PAR_K && !g->diag && !mm_masked(g, flat)) {
		struct term_arg arg = { g, flat };
		double acc = 0.0;
		oracle_par_acc(c, g->K, term, &arg, &acc, 1);
		*v = acc;
		return 0;
	}
	*v = mm_value(g, fetch_input, c, flat);
	return 0;
}
