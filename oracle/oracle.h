/* oracle/: the CPU oracles, owned by struct oracle_ctx: one per family
 * and the graph oracle of levels 2 and 3 (oracle_graph*.c), in double
 * precision. Includes core/ and problem/.
 *
 * The CPU oracle: double-precision values of a problem's outputs at chosen
 * flat indices, computed from the inputs the counter-based generator gives
 * for a seed (element by element, so full-size problems need no full-size
 * host arrays). `kforge problems check` compares the GPU reference against
 * it on a sample that covers every output row/channel class and the edges.
 *
 * Families are split over oracle/oracle*.c; each exports one function of
 * type oracle_fn, dispatched by the spec's "family". */
#ifndef KF_ORACLE_H
#define KF_ORACLE_H

#include "problem/problem.h"
#include "problem/inputs.h"

struct oracle_ctx {
	const struct problem *p;
	unsigned long long seed;
	void *cache;          /* per-family memo (e.g. BatchNorm channel stats); owned */
	void (*cache_free)(void *);
	struct inputs_gen gen; /* the input generator for (p, seed); owned */
	int threads;          /* for full-tensor passes; 0 = the online CPUs (max 64) */
};

void oracle_ctx_init(struct oracle_ctx *c, const struct problem *p, unsigned long long seed);
/* The same on draw d (inputs.h: the alive draw, a sensitivity redraw). */
void oracle_ctx_init_draw(struct oracle_ctx *c, const struct problem *p, unsigned long long seed,
			  const struct inputs_draw *d);
void oracle_ctx_release(struct oracle_ctx *c);

/* Input tensor `t` (0..n_in-1) at flat index `i`, as the generator makes it
 * (post-processing such as symmetrize or softmax_lastdim included). */
double oracle_input(struct oracle_ctx *c, int t, long long i);

typedef int (*oracle_fn)(struct oracle_ctx *c, int out, long long flat, double *v,
			 struct buf *err);

/* Output `out` (0..n_out-1) at flat index `flat`. 0 or -1 (unknown family). */
int oracle_value(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);

/* A sample of flat indices of output `out` covering first/last elements,
 * every row/channel class, and random interior points; at most max. For
 * family graph, the points share few batch indices (oracle_graph.c). */
int oracle_sample(const struct problem *p, int out, unsigned long long seed, long long *idx,
		  int max);

/* Families (oracle/oracle_*.c). */
int oracle_elementwise(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);
int oracle_reduce(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);
int oracle_norm(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);
int oracle_loss(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);
int oracle_scan(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);
int oracle_attention(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);
int oracle_matmul(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);
int oracle_conv(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);
int oracle_pool(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);
/* Level-2/3 operator graphs (docs/graph-ir.md; oracle/oracle_graph*.c). */
int oracle_graph(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err);

#endif
