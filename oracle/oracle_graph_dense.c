/* Dense evaluation of deep graphs (oracle/oracle_graph.h): every node's whole
 * output once, in node order, by slabs of its first dim; an output is freed
 * once its last consumer has been evaluated, so that only the live
 * activations are kept (the graph's output stays). */
#include "oracle/oracle_graph.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

int gx_dense = -1, gx_memo_on = -1;

void gx_dense_view(const struct gx_t *t, const double *p, const struct gx_box *b,
		   struct gx_view *v)
{
	long long off = 0;
	for (int d = 0; d < b->nd; d++)
		off += b->lo[d] * t->st[d];
	v->own = NULL;
	v->p = p + off;
	memcpy(v->st, t->st, sizeof(v->st));
}

static void dense_node(struct gx *g, int ti)
{
	struct gx_t *t = &g->t[ti];
	struct gx_box b;
	long long row, step;
	double *p;

	gx_box_full(t, &b);
	if (t->op == GX_RNN) {  /* computes its dense output itself */
		struct gx_view v;
		gx_eval(g, ti, &b, &v);
		gx_view_free(&v);
		return;
	}
	p = gx_alloc(t->numel);
	row = t->nd ? t->numel / t->shape[0] : 1;
	step = GX_CHUNK / row > 0 ? GX_CHUNK / row : 1;
	for (long long r = 0; r < (t->nd ? t->shape[0] : 1); r += step) {
		if (t->nd) {
			b.lo[0] = r;
			b.n[0] = r + step < t->shape[0] ? step : t->shape[0] - r;
		}
		gx_eval_copy(g, ti, &b, p + r * row);
	}
	t->dense = p;
}

/* Whether to evaluate densely: a graph of more than GX_DENSE_NODES nodes
 * whose lazy cones are the whole input and uncached (a conv, pool or
 * recurrence chain; a batch norm's statistics) or evaluated again and again
 * (a node reached by more than 16 paths: residual and dense blocks). Deep
 * chains of rows (MLPs, attention) stay lazy: a sample costs its rows. */
int gx_dense_wanted(const struct gx *g)
{
	double *paths;
	int heavy = 0, many = 0;

	if (gx_dense >= 0)
		return gx_dense;
	if (g->nt - g->n_leaf <= GX_DENSE_NODES)
		return 0;
	paths = xcalloc((size_t)g->nt, sizeof(*paths));
	paths[g->out] = 1;
	for (int i = g->nt - 1; i >= g->n_leaf; i--) {
		const struct gx_t *t = &g->t[i];
		heavy |= t->op == GX_CONV || t->op == GX_POOL || t->op == GX_APOOL || t->op == GX_RNN ||
			 (t->op == GX_NORM && t->fn == N_BATCH);
		many |= paths[i] > 16;
		for (int k = 0; k < t->nin; k++)
			paths[t->in[k]] += paths[i];
	}
	free(paths);
	return heavy || many;
}

void gx_dense_run(struct gx *g)
{
	for (int i = g->n_leaf; i < g->nt; i++)
		for (int k = 0; k < g->t[i].nin; k++)
			g->t[g->t[i].in[k]].uses_left++;
	for (int i = g->n_leaf; i < g->nt; i++) {
		dense_node(g, i);
		for (int k = 0; k < g->t[i].nin; k++) {
			struct gx_t *o = &g->t[g->t[i].in[k]];
			if (--o->uses_left == 0 && o->op != GX_LEAF && g->t[i].in[k] != g->out) {
				free(o->dense);
				o->dense = NULL;
			}
		}
	}
}

int gx_memo(struct gx *g, int ti, const struct gx_box *b)
{
	struct gx_t *t = &g->t[ti];

	if (t->busy || t->op == GX_LEAF || t->numel > GX_LEAF_MAT_MAX ||
	    g->memo_used + t->numel > 2 * GX_LEAF_MAT_MAX)
		return 0;
	t->fetched += gx_box_numel(b);
	if (t->fetched <= t->numel)
		return 0;
	t->busy = 1;
	dense_node(g, ti);
	t->busy = 0;
	g->memo_used += t->numel;
	return t->dense != NULL;
}
