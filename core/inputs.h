/* The CPU side of the input generator (core/philox.cuh has the
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

#include "core/problem.h"
#include "core/philox.h"

#define INPUTS_MEMO 16   /* softmax row memo entries (direct-mapped by tensor) */

struct inputs_memo {
	int t;                 /* -1: empty */
	long long row;
	double max, sum;
};

struct inputs_gen {
	const struct problem *p;
	unsigned long long seed;
	struct kf_gen_desc *desc;  /* p->n_in; owned unless a fork */
	int fork;
	struct inputs_memo memo[INPUTS_MEMO];
};

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
