/* The conv family's oracle: geometry parsed once per context (cached in
 * c->cache), values from oracle/oracle_geom.c over the generator's inputs. */
#include <stdlib.h>

#include "oracle/oracle.h"
#include "oracle/oracle_geom.h"

static double fetch_input(void *u, int t, long long i)
{
	return oracle_input(u, t, i);
}

int oracle_conv(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	struct conv_geom *g = c->cache;

	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g)
			return kf_err(err, "out of memory");
		if (conv_geom_from_problem(c->p, g, err) < 0) {
			free(g);
			return -1;
		}
		c->cache = g;
		c->cache_free = free;
	}
	if (out != 0 || flat < 0 || flat >= conv_numel(g))
		return kf_err(err, "%s: output %d element %lld out of range", c->p->id, out, flat);
	*v = conv_value(g, fetch_input, c, flat);
	return 0;
}
