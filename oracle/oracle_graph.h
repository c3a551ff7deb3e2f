/* The graph oracle's internals (oracle/oracle_graph*.c), for family "graph"
 * (docs/graph-ir.md): the parsed operator graph, boxes and views, and the
 * evaluation of each op.
 *
 * Evaluation is lazy and by boxes: a node produces the values of a box of
 * its output (a range per dimension) from boxes of its operands, so a
 * sampled element costs what its dependence cone costs, and a whole
 * statistic (a GroupNorm's (n, g), a BatchNorm channel, a softmax row) is
 * one batched evaluation of the operand region it covers, split in chunks
 * of at most GX_CHUNK elements. Statistics, reduction results and packed
 * weights are kept per node for the life of the oracle context; leaves (the
 * spec's inputs) are materialised once they are read densely.
 *
 * Deep graphs (level 3: more than GX_DENSE_NODES nodes with conv, pool,
 * recurrence or batch-norm cones, or nodes reached by many paths:
 * gx_dense_wanted) are evaluated densely instead (oracle/oracle_graph_dense.c): each node's whole output is
 * computed once, in node order, by the same box evaluators over slabs of
 * its first dim, its operands served from their own dense outputs; a dense
 * output is freed once its last consumer is done. */
#ifndef KF_ORACLE_GRAPH_H
#define KF_ORACLE_GRAPH_H

#include "oracle/oracle_int.h"

#define GX_MAXD PROBLEM_MAX_DIMS
#define GX_MAXIN 1024              /* operands of one node (concat, rnn weights) */
#define GX_MAXNODES 4096           /* level-3 34 unrolls 1793 nodes */
#define GX_DENSE_NODES 16          /* deeper graphs may be evaluated densely */
/* Elements per operand evaluation of a statistics pass (1 << 22), and the
 * largest leaf kept whole (1 << 27: 1 GiB of doubles). Variables so that
 * tests reach the chunked and on-the-fly paths with small tensors. */
extern long long gx_chunk, gx_leaf_mat_max;
#define GX_CHUNK gx_chunk
#define GX_LEAF_MAT_MAX gx_leaf_mat_max
/* Sum/mean of a conv's output over all its spatial dims by linearity
 * (gx_conv_spatial_sum): on unless a test turns it off; hits counts uses. */
extern int gx_conv_sum_fast;
extern long long gx_conv_sum_hits;
/* Dense evaluation: -1 as gx_dense_wanted says, 0 never, 1 always (tests);
 * gx_memo_on likewise for gx_memo (-1: deep lazy graphs). */
extern int gx_dense, gx_memo_on;

enum gx_op { GX_LEAF, GX_LINEAR, GX_MATMUL, GX_CONV, GX_POOL, GX_APOOL, GX_ACT, GX_BINARY,
	     GX_REDUCE, GX_SOFTMAX, GX_NORM, GX_DROPOUT, GX_RESHAPE, GX_PERMUTE, GX_CONCAT,
	     GX_EXPAND, GX_SLICE, GX_PAD, GX_CUMSUM, GX_MFILL, GX_RNN, GX_CONST, GX_TAKE, GX_ROLL,
	     GX_COMPARE };

enum gx_act { A_RELU, A_LEAKY_RELU, A_GELU, A_GELU_TANH, A_SIGMOID, A_TANH, A_SILU, A_MISH,
	      A_SOFTPLUS, A_HARDSWISH, A_HARDSIGMOID, A_HARDTANH, A_CLAMP, A_ELU, A_SELU, A_EXP,
	      A_LOG, A_ABS, A_NEG, A_SQRT, A_RSQRT, A_SQUARE, A_IDENTITY };
enum gx_bin { B_ADD, B_SUB, B_MUL, B_DIV, B_MAX, B_MIN, B_POW };
enum gx_red { R_SUM, R_MEAN, R_MAX, R_MIN, R_LSE, R_PROD };
enum gx_normk { N_BATCH, N_GROUP, N_INSTANCE, N_LAYER };
enum gx_rnnk { RN_LSTM, RN_GRU, RN_TANH, RN_RELU };
enum gx_rnno { RO_OUTPUT, RO_HN, RO_CN };

/* lo[d] .. lo[d] + n[d] - 1 along each of nd dims (nd 0: one element). */
struct gx_box {
	int nd;
	long long lo[GX_MAXD], n[GX_MAXD];
};

/* Values over a box: element (i_0, ..., i_{nd-1}) of the box (relative to
 * its lo) is p[sum i_d * st[d]]. A stride 0 broadcasts. own: the buffer to
 * free, or NULL when p points into a cache. */
struct gx_view {
	const double *p;
	long long st[GX_MAXD];
	double *own;
};

/* key -> `width` doubles (open addressing). */
struct gx_map {
	long long *keys;
	double *vals;
	size_t cap, used;
	int width;
};

/* A tensor of the graph: a leaf (spec input or param) or a node's output. */
struct gx_t {
	enum gx_op op;
	const char *name;       /* borrowed from the spec */
	int node;               /* index in attrs.graph, -1 for a leaf */
	int nd;
	long long shape[GX_MAXD], st[GX_MAXD], numel;
	int nin, *in;           /* operand tensor ids, owned */
	int fn;                 /* gx_act, gx_bin, gx_red, gx_normk; pool: 1 = max */
	double a[2];            /* act parameters (slope, beta/threshold, min/max, alpha); binary const */
	int has_a[2];
	int swap, keepdim, log_sm, ceil_mode, cip, transposed, sd;
	int dim;                /* softmax, concat */
	unsigned rmask;         /* reduce: reduced dims of the operand */
	int perm[GX_MAXD];
	/* conv / pool / adaptive pool: spatial axes right-aligned in 3 */
	long long k[3], s[3], p[3], d[3], opad[3], groups;
	double eps, drop_p;
	long long ngroups;      /* group norm */
	int nnd;                /* layer norm: normalized_ndim */
	long long start, step;  /* slice (dim) */
	long long before[GX_MAXD]; /* pad */
	long long diag;         /* masked_fill (fn 1: upper, 0: lower, 2: mask operand; value a[0]) */
	double *cvals;          /* const: the values, owned */
	long long *idx;         /* take: the index (nidx rows of the operand), owned */
	long long nidx;
	long long shift[GX_MAXD]; /* roll: per dim, in [0, size) (0: not rolled); compare: fn 1 = eq */
	struct {
		int kind, layers, dirs, bf, bias, h0, c0, which;
		long long hidden;
	} rnn;
	double *dense;          /* the whole output (dense mode, rnn), row-major */
	int uses_left;          /* dense mode: consumers not yet evaluated */
	int busy;               /* memo: being materialised */
	/* caches, owned */
	struct gx_map stats;    /* norm (count, mean, M2), softmax (max, sum), reduce (value) */
	double *mat;            /* leaf: the whole tensor once read densely */
	long long fetched;      /* leaf: elements generated so far; node: asked for (memo) */
	double *wpack;          /* conv: packed weights */
	long long cob;
	double *rows;           /* linear/matmul: cached row block */
	long long rows_lo, rows_n, dense_reqs;
};

struct gx {
	struct oracle_ctx *c;
	int nt, n_leaf, out;    /* tensors 0..n_leaf-1 are the spec inputs */
	int threads;
	int dense;              /* evaluated densely (gx_dense_run done) */
	int memo;               /* deep but lazy: re-read nodes are kept whole (gx_memo) */
	long long memo_used;    /* doubles kept so */
	struct gx_t *t;         /* n_leaf + the graph's nodes, owned */
};

/* oracle/oracle_graph_parse.c */
int gx_parse(struct gx *g, const struct problem *p, struct buf *err);
void gx_free(void *g);

/* oracle/oracle_graph.c: boxes, views, threads, dispatch */
void *gx_alloc(long long n);                     /* doubles; aborts when out of memory */
long long gx_box_numel(const struct gx_box *b);
void gx_box_full(const struct gx_t *t, struct gx_box *b);
void gx_box_strides(const struct gx_box *b, long long *st);  /* row-major strides of the box */
void gx_view_new(struct gx_view *v, const struct gx_box *b); /* owned, contiguous */
void gx_view_free(struct gx_view *v);
long long gx_view_off(const struct gx_view *v, const struct gx_box *b, long long k); /* k-th element */
/* Copies a view into a contiguous buffer over box b. */
void gx_view_copy(const struct gx_view *v, const struct gx_box *b, double *dst);
/* Makes the last dim's stride 1 (copies when it is not). */
void gx_view_rows(struct gx_view *v, const struct gx_box *b);
/* The values of t over b, row-major into dst. */
void gx_eval_copy(struct gx *g, int t, const struct gx_box *b, double *dst);
void gx_eval(struct gx *g, int t, const struct gx_box *b, struct gx_view *v);
/* Operand `opnd` of a node of shape nd, broadcast to box b (right-aligned,
 * size-1 dims stride 0): a view indexed by b's dims. */
void gx_eval_bcast(struct gx *g, int opnd, const struct gx_box *b, struct gx_view *v);
/* Runs fn(arg, lo, hi) over [0, n) on the context's threads (one when
 * work, in multiply-adds or so, is small). */
void gx_par(struct gx *g, long long n, long long work, void (*fn)(void *, long long, long long),
	    void *arg);
int gx_nthreads(const struct gx *g);

/* oracle/oracle_graph_stats.c */
void gx_map_free(struct gx_map *m);
void gx_reduce_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v);
void gx_softmax_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v);
void gx_norm_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v);

/* oracle/oracle_graph_conv.c */
void gx_conv_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v);
void gx_pool_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v);
void gx_apool_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v);
/* out[(n - n0) * nc + co - c0]: the sum of conv t's output (n, co) over all
 * spatial positions, bias included, without evaluating the output. */
void gx_conv_spatial_sum(struct gx *g, struct gx_t *t, long long n0, long long nn, long long c0,
			 long long nc, double *out);

/* oracle/oracle_graph_l3.c: expand, slice, pad, cumsum, masked_fill, rnn */
void gx_l3_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v);

/* oracle/oracle_graph_dense.c: every node's output, in order (dense mode) */
int gx_dense_wanted(const struct gx *g);
void gx_dense_run(struct gx *g);
/* A deep graph evaluated lazily (attention, MLP chains) keeps a node whole
 * once more than its size has been asked of it (a key projection read by
 * every query row), up to GX_LEAF_MAT_MAX per node and 2 GX_LEAF_MAT_MAX
 * in all; returns 1 when t->dense now holds it. */
int gx_memo(struct gx *g, int ti, const struct gx_box *b);
/* A view of a tensor's whole-output cache over box b. */
void gx_dense_view(const struct gx_t *t, const double *p, const struct gx_box *b,
		   struct gx_view *v);

/* oracle/oracle_graph_mm.c */
/* out[i][j] (ldo apart) = a_i . b_j for m rows a and n rows b of K. */
void gx_gemm(struct gx *g, const double *const *a, long long m, const double *const *b,
	     long long n, long long K, double *out, long long ldo);
void gx_linear_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v);
void gx_matmul_eval(struct gx *g, struct gx_t *t, const struct gx_box *b, struct gx_view *v);

#endif
