/* The CPU side of the input generator (problem/philox.cuh has the
 * definition): the value of input tensor t at flat index i for a seed,
 * element by element, so full-size problems need no full-size arrays.
 * The GPU fill kernels (engine/cuda/inputs.cuh) give the same bits.
 *
 * struct inputs_gen borrows the problem (which must outlive it) and owns
 * the per-tensor descriptions and a small memo of softmax row statistics.
 * A fork (for another thread) shares the descriptions with its parent,
 * which must outlive it, and has a memo of its own. */
#ifndef KF_INPUTS_H
#define KF_INPUTS_H

#include "problem/problem.h"
#include "problem/philox.h"

#define INPUTS_MEMO 16   /* softmax row memo entries (direct-mapped by tensor) */

struct inputs_memo {
	int t;                 /* -1: empty */
	long long row;
	double max, sum;
};

/* Which draw (docs/engine.md, "Sensitivity trials"): the spec's, or the
 * "alive" one (problem.h: a recurrent model's parameters that keep its
 * state alive); and for a sensitivity trial one tensor redrawn with
 * another seed, whole or in a region (flat i with i % stride < block: the
 * first steps of a sequence input; block k = i / stride of the region
 * takes the values of a tensor drawn with seed INPUTS_REDRAW_SEED + k at
 * index i % stride). */
struct inputs_draw {
	int alive;
	int redraw;                /* the tensor redrawn; -1: none */
	long long stride, block;   /* stride 0: the whole tensor */
};

/* The seed a redrawn tensor takes instead of seed. */
#define INPUTS_REDRAW_SEED(s) ((s) ^ 0x5EED0F5E4517ull)

struct inputs_gen {
	const struct problem *p;
	unsigned long long seed;
	struct kf_gen_desc *desc;  /* p->n_in; owned unless a fork */
	int fork;
	struct inputs_draw draw;
	struct kf_gen_desc redesc; /* a redrawn region's values */
	struct inputs_memo memo[INPUTS_MEMO];
};

/* The spec's draw: alive 0, no redraw. */
void inputs_draw_spec(struct inputs_draw *d);
/* How tensor t's values are drawn under d, before its alive "set" ranges
 * and outside a redrawn region (the whole-tensor redraw's seed included). */
void inputs_desc_draw(const struct problem *p, int t, unsigned long long seed,
		      const struct inputs_draw *d, struct kf_gen_desc *out);
/* 1 when flat index i of tensor t is in d's redrawn region (not whole). */
int inputs_draw_region(const struct inputs_draw *d, int t, long long i);
/* 1 and *v when d is alive and i is in one of t's "set" ranges. */
int inputs_draw_set(const struct problem *p, const struct inputs_draw *d, int t, long long i,
		    double *v);
/* A generator for draw d (NULL: the spec's). */
void inputs_gen_init_draw(struct inputs_gen *g, const struct problem *p, unsigned long long seed,
			  const struct inputs_draw *d);

void inputs_gen_init(struct inputs_gen *g, const struct problem *p, unsigned long long seed);
void inputs_gen_release(struct inputs_gen *g);
/* dst: a generator for another thread (same values, its own memo); release it too. */
void inputs_gen_fork(struct inputs_gen *dst, const struct inputs_gen *src);

/* Fills *d with how tensor t (an input or param) is generated. */
void inputs_desc(const struct problem *p, int t, unsigned long long seed, struct kf_gen_desc *d);

/* Storage bits (dtype's width, zero-extended) and value of element i of
 * input tensor t (0..n_in-1), post op included. */
unsigned long long inputs_bits(struct inputs_gen *g, int t, long long i);
double inputs_value(struct inputs_gen *g, int t, long long i);

/* Writes elements [start, start+count) of tensor t into dst in the
 * dtype's storage format (little-endian, kf_dtype_size bytes each). */
int inputs_fill(struct inputs_gen *g, int t, long long start, long long count, void *dst,
		struct buf *err);

/* Same, split over `threads` threads (0: the online CPUs), each with its
 * own copy of the generator. */
int inputs_fill_mt(struct inputs_gen *g, int t, long long start, long long count, void *dst,
		   int threads, struct buf *err);

/* The NVRTC source of the GPU fill kernels: philox.cuh then inputs.cuh. */
void inputs_device_source(struct buf *src);

#endif
