/* The graph template (family "graph", KernelBench level 2; internal to
 * kernels/graph/builtin_graph*.c). A plan reads attrs.graph (docs/graph-ir.md),
 * groups each producing node with the elementwise chain that follows it
 * (fuse=1; fuse=0: one group per node), gives every materialized tensor a
 * `scratch float` buffer (reused once dead; a reshape is a view) and emits
 * one kernel per group (two for a norm: statistics, then apply). */
#ifndef KF_BUILTIN_GRAPH_H
#define KF_BUILTIN_GRAPH_H

#include <jansson.h>
#include "core/buf.h"

#define GR_MAX_NODES 4096
#define GR_MAX_TENSORS 4096
#define GR_MAX_RANK 6
#define GR_MAX_IN 3		/* operands of level-2 ops */
#define GR_MAX_CAT 512		/* operands of concat and rnn */
#define GR_MAX_CHAIN 64
#define GR_MAX_BUFS 1024	/* over 16: one arena (offsets) */
#define GR_NAMED_BUFS 16	/* the launch block's scratch declarations */
#define GR_ARENA_ALIGN 64	/* elements: each arena buffer 256-byte aligned, as the
				 * engine's own (the emitters' vector loads need 16) */
#define GR_MAX_LAUNCHES 4096
#define GR_MAX_DIM (1LL << 31)
#define GR_MAX_NUMEL (1LL << 34)
#define GR_TC_ROOM (150LL << 10)
#define GR_MAX_SCRATCH (8LL << 30)	/* the engine's limit on all scratch */

struct gr_tensor {
	const char *name;
	long long shape[GR_MAX_RANK];
	int rank;
	long long numel;
	int is_bool;
	int root;	/* the tensor whose storage it is (itself unless a reshape view) */
	int spec;	/* a spec input, mask or parameter */
	int buf;	/* scratch buffer, -1 none (spec tensor or the output) */
	int users;	/* roots: nodes reading it (a view's readers count) */
	int last;	/* roots: the last group reading it */
};

struct gr_node {
	const json_t *j;
	const char *op;
	int out;
	int in[GR_MAX_CAT];
	int n_in;
	int view;	/* a reshape that is only a view (not the last node) */
};

struct gr_group {
	int head;
	int chain[GR_MAX_CHAIN];	/* elementwise nodes folded into the head's store */
	int n_chain;
	int out;			/* the tensor it writes */
	int alias;			/* an operand whose buffer it writes (in place), -1 */
	int fold;	/* > 0: a linear whose chain[0..fold-1] (affine steps, then a
			 * sum/mean over its features) folds into a GEMV (lsum),
			 * or an attention's nodes (attn) */
	int attn;	/* matmul, scale, mask, softmax, matmul: one kernel */
	int csum;	/* with fold: a conv's spatial sum (builtin_graph_csum.c) */
};

/* The extra operands of an epilogue: kernel parameters epK and their
 * launch-block names. */
struct gr_epi {
	int tensor[GR_MAX_TENSORS];
	int n;
	struct buf params, args, code;
};

struct gr_krec;
struct gr_array {		/* a __device__ const array of the source */
	char *text;		/* type, size and values */
	char name[32];
};

struct gr_plan {
	const json_t *spec;
	struct gr_tensor t[GR_MAX_TENSORS];
	int nt;
	struct gr_node n[GR_MAX_NODES];
	int nn;
	struct gr_group g[GR_MAX_NODES];
	int ng;
	long long buf_cap[GR_MAX_BUFS];
	int buf_dbl[GR_MAX_BUFS], buf_busy[GR_MAX_BUFS], nbuf;
	const long long *off;	/* buffer offsets in the arenas, NULL: named buffers */
	long long tc_base;	/* with off: the float arena's elements of the graph's buffers,
				 * where the emitters' scratch starts (builtin_graph_arena.c) */
	long long tc_scratch;	/* with off: the emitters' scratch, the largest emitter's */
	long long arenad_bytes;	/* with off: the double arena's bytes */
	int launches;
	unsigned helpers;	/* GR_H_* emitted so far */
	int alias;		/* the group being emitted writes over this tensor */
	const char *qual;	/* the next kernel's qualifiers (__launch_bounds__) */
	long long smem;		/* the next kernel's dynamic shared memory (bytes) */
	const char *pre, *post;	/* text around the next kernel (#define, #undef) */
	struct gr_krec *kr;	/* the kernels (builtin_graph_dedup.c) */
	int nkr, kcap;
	struct gr_array *arr;	/* written once per content (dedup >= 1) */
	int narr, acap;
	size_t kbytes;		/* of distinct kernel text so far */
	int dedup;		/* 0 none, 1 identical kernels once, 2 also lift
				 * constants while over src_budget, 3 always */
	long long src_budget;
	int once;		/* gr_once drops repeated helper blocks */
	int arena;		/* 1: the arena whatever the buffers (tests at small sizes) */
	/* parameters */
	int fuse, tc, mma, fold, block, BM, BN, BK, TM, TN;
	int conv_wmma;		/* convs on conv_epi's older wmma core */
	int split3;		/* tensor cores with the 3xTF32 split (deep nets: more bits) */
	int conv_split3;	/* the same for convolutions */
	int conv_mma;		/* convolutions on conv_epi's mma.sync core (else wgmma) */
	int conv_wg;		/* warpgroups a block of the wgmma conv core (1: two blocks an SM) */
	int conv_ps;		/* that core's PS: x's small parts split once, by its copy */
	int conv_pw;		/* PW: 1x1 convs as batched GEMMs (builtin_conv_epi_pw.c) */
	int conv_po;		/* PO: a transposed conv's phases fastest in grid.x */
	int attn;		/* attention chains in one kernel (else only where the scores
				 * would need over 2^29 floats) */
	int attn_tile;		/* attn 2: 64 queries by 64 keys a block step (else a row) */
	int skinny;		/* linears of at most 16 rows: a warp per output column */
	int share;		/* emitters' kernels of equal text written once (share=1) */
	int no_cat_prefix;	/* cat_prefix=0: concats copy every operand (gr_concat_prefix) */
	struct buf shared;	/* their records, NAME \1 TEXT \2 (builtin_graph_share.c) */
	int dacc;		/* the direct conv sums in double (level-3 default) */
	int red;		/* reduction kernels: -1 by size, 0 a block per output, 1
				 * a thread per output and split statistics wherever they
				 * apply (builtin_graph_red.c) */
	long long tc_room;	/* level 3: tc only while the source is under this (0: always,
				 * -1: never) */
	int f64;		/* the rendering rewritten in double (builtin_graph_f64.c) */
	int dmma;		/* with f64: convs, linears and matmuls on the fp64 tensor
				 * cores (1: mma m8n8k4, 2: m16n8k16 on sm_90) */
	struct buf guards;	/* "\nKF_X\n" for each helper block in src (gr_once) */
	struct buf src, launch;
};

enum { GR_H_SUM = 1, GR_H_MAX = 2, GR_H_MIN = 4 };

void gr_plan_init(struct gr_plan *p);
void gr_plan_release(struct gr_plan *p);
/* Reads the spec's graph; 0, or negative with err filled. */
int gr_plan_build(struct gr_plan *p, const json_t *spec, struct buf *err);
/* Groups, buffers and code (p->src, p->launch). */
int gr_plan_emit(struct gr_plan *p, struct buf *err);

/* act, binary, dropout, or a reshape that copies (the last node). */
int gr_is_ew(const struct gr_plan *p, int k);
/* A free scratch buffer of numel floats (dbl: doubles), grown to fit. */
int gr_take_buf(struct gr_plan *p, long long numel, int dbl, struct buf *err);
/* A node's attribute helpers. */
long long gr_int(const json_t *node, const char *key, int idx, long long dflt);
double gr_num(const json_t *node, const char *key, double dflt);
const char *gr_str(const json_t *node, const char *key);
/* The launch-block name of tensor k's storage, written to tmp (names are
 * at most 64 bytes). */
const char *gr_store(const struct gr_plan *p, int k, char *tmp, size_t n);
/* The launch-block name of scratch buffer b ("buf3", "arena + 1024"). */
const char *gr_buf_name(const struct gr_plan *p, int b, char *tmp, size_t n);
/* A float literal ("2.000000000e+00f"); negative if not finite. */
int gr_lit(struct buf *b, double v, struct buf *err);

/* builtin_graph_ew.c: the epilogue of group g (bias of a linear/conv head,
 * then the chain) as statements over `float v` and `long long ei` (the flat
 * index of the head's output); head elementwise nodes too. */
void gr_epi_init(struct gr_epi *e);
void gr_epi_release(struct gr_epi *e);
/* One elementwise node as a step: operands whose root is `running` read v,
 * others load at their broadcast index from ei. */
int gr_epi_step(struct gr_plan *p, struct gr_epi *e, int node, int running, struct buf *err);
/* A parameter tensor read as ep[index expr] (bias: index "ei / S % C"). */
int gr_epi_add_load(struct gr_plan *p, struct gr_epi *e, int tensor, const char *index,
		    const char *op, struct buf *err);
/* The operand parameter name of tensor k in e ("ep3"), adding it. */
const char *gr_epi_operand(struct gr_plan *p, struct gr_epi *e, int k, char *tmp, size_t n);
int gr_epi_chain(struct gr_plan *p, struct gr_epi *e, int g, struct buf *err);

/* builtin_graph_ops.c: the head kernel of group g with epilogue e. */
int gr_emit_head(struct gr_plan *p, int g, struct gr_epi *e, struct buf *err);
/* The block_sum / block_max / block_min device helpers (GR_H_* bits), once. */
void gr_helpers(struct gr_plan *p, unsigned h);

/* Step codes: t + X, t - X, X - t, t * X, t / X, -t, t. */
enum { ST_NO, ST_ADD, ST_SUB, ST_RSUB, ST_MUL, ST_DIV, ST_NEG, ST_ID };
/* builtin_graph_lsum.c: node k as an affine step of the running tensor run,
 * its code, and in *other the operand (-1: the node's constant). */
int gr_affine_step(const struct gr_plan *p, int k, int run, int *other);
/* builtin_graph_lsum.c: sum_j (x . W_j + b_j) = x . (sum_j W_j) + sum_j b_j.
 * The node after which linear node k's result, through affine steps with
 * constants or per-feature tensors, is summed (or averaged) over its
 * features and nothing else reads it: the reduce node, else -1. */
int gr_lsum_match(const struct gr_plan *p, int k);
/* Group g's two kernels: column sums of the weight in double, then a
 * dot product per row with e (the reduce's chain) in its store. */
int gr_lsum_head(struct gr_plan *p, int g, struct gr_epi *e, struct buf *err);
/* builtin_graph_csum.c: a conv whose result reaches a sum or mean over all
 * its spatial dims only through steps by constants (nodes k+1..): that
 * reduce node, else -1. Group g's two kernels: x's sums per channel and
 * class of positions (the taps reaching them), then per output channel each
 * tap's weight times the sums it reaches; both in double. */
int gr_csum_match(const struct gr_plan *p, int k);
int gr_csum_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err);
/* builtin_graph_ops.c: gemm_epi_emit (kernels/emit/builtin_epi.h) with the
 * graph's core and split, the text shared (gr_share_emitted), helper blocks
 * once, launches counted. 0 emitted, 1 not supported, negative on error. */
struct gemm_shape;
struct epi;
int gr_gemm_tc(struct gr_plan *p, const char *name, const struct gemm_shape *sh, const char *a,
	       const char *b, const char *c, const struct epi *ep, struct buf *err);
/* builtin_graph_arena.c: in the arena pass (p->off), the scratch that an
 * emitter declared in the launches it appended from `from` moved into the
 * float arena past the graph's buffers (all emitters share that region: each
 * one's scratch lives only during its own launches). 0 (also without
 * p->off), 1 where a declaration is not a float buffer of constant size or
 * would pass the scratch limit (the caller drops the emitted text). */
int gr_arena_scratch(struct gr_plan *p, size_t from, struct buf *err);
/* builtin_graph_share.c: the text an emitter appended to p->src from src0
 * (kernel name `name`), when an earlier emitted text equals it but for the
 * name, dropped, and the launches appended from `from` call the earlier
 * kernels. */
int gr_share_emitted(struct gr_plan *p, size_t src0, size_t from, const char *name, struct buf *err);
/* builtin_graph_dedup.c: records a kernel (p->qual, p->pre, p->post
 * around it) and its launch; gr_dedup_finish writes them out. */
int gr_kernel(struct gr_plan *p, const char *name, const char *params, const char *body,
	      const char *grid, long long block, const char *args, struct buf *err);

int gr_dedup_finish(struct gr_plan *p, struct buf *err);
/* Writes `__device__ const TYPE PREFIX<gi>[n] = {vals};`, or finds an
 * earlier array of the same content: its name in name. */
int gr_array(struct gr_plan *p, const char *type, const char *prefix, int gi, size_t n,
	     const char *vals, char *name, size_t nn, struct buf *err);
void gr_dedup_release(struct gr_plan *p);

/* The store of one element (ei = idx, v = val, the epilogue, y[ei] = v), the
 * head's signature (inputs, y, epilogue operands) and launch arguments. */
void gr_store_elem(struct buf *b, const char *ind, const char *idx, const char *val,
		   const struct gr_epi *e);
int gr_tc_fits(const struct gr_plan *p);
/* Drops from src[from..] each guarded helper block (#ifndef KF_X, #define
 * KF_X, ... #endif at the top level) whose guard src already defines: the
 * preprocessor would skip it, but it would count against the source budget. */
void gr_once(struct gr_plan *p, size_t from);
void gr_sig(struct buf *b, const struct gr_plan *p, const char *in_params, const struct gr_epi *e);
void gr_args(struct buf *b, const struct gr_plan *p, int gi, const char *in_args,
	     const struct gr_epi *e);

/* builtin_graph_red.c: a contiguous tensor as merged (size, stride,
 * reduced) dims, size-1 dims dropped. */
struct gr_rview {
	int n;
	long long size[GR_MAX_RANK], stride[GR_MAX_RANK];
	int red[GR_MAX_RANK];
};
void gr_make_view(struct gr_rview *v, const long long *shape, int rank, unsigned redmask);
/* R: values a reduction reads per output; outs: outputs. */
void gr_view_counts(const struct gr_rview *v, long long *R, long long *outs);
/* 1: a thread per output (the innermost dim kept, by p->red and size). */
int gr_red_thread(const struct gr_plan *p, const struct gr_rview *v);
/* The threads of a block per output of R values (32..256, a power of 2). */
long long gr_red_block(long long R);
/* Output o's base offset (head: `o`, `base`; thread: returns past the
 * last output) and the loop over its values reading `const double a` from
 * src (loop: the caller closes its brace); R and outs. */
void gr_red_loops(const struct gr_rview *v, int thread, const char *src, struct buf *head,
		  struct buf *loop, long long *R, long long *outs);
/* The kernels writing stats[2 * o] = mean, stats[2 * o + 1] = 1 / sqrt(var +
 * eps) for each output o of view v over x (launch names xs, sb): two passes
 * in double, split over blocks where there are few statistics. */
int gr_norm_stats(struct gr_plan *p, int gi, const char *kind, const struct gr_rview *v,
		  const char *xs, const char *sb, double eps, struct buf *err);
/* A sum, mean, max or min of view v over x (launch name xs) split over
 * blocks where there are few outputs: 0, 1 where it does not split (the
 * caller emits a block per output), negative on error. */
int gr_reduce_split(struct gr_plan *p, int gi, const char *fn, const struct gr_rview *v,
		    const char *xs, const struct gr_epi *e, struct buf *err);

/* builtin_graph_f64.c: the rendered candidate s (header, kernels, launch
 * block) of plan p rewritten in double: kernels, scratch buffers and a
 * double copy of each float32 input and of the output, with the kernels
 * converting them around the graph. 0, or negative with err filled (a
 * construct without a double form, a name taken, scratch over the limit). */
int gr_f64_promote(const struct gr_plan *p, struct buf *s, struct buf *err);

/* builtin_graph_dmma.c: a convolution of one group (or a linear: 1 x 1 over
 * rows; or a transposed one whose kernel is its stride, unpadded: a GEMM
 * over the input's pixels) as an implicit GEMM on the fp64 tensor cores,
 * written in double for the f64 rendering (dmma=1). Operands x, w as launch
 * names, the output as gr_store gives it; the spatial geometry of x, the
 * output, kernel, stride, padding and dilation, each padded to three axes
 * (D, H, W). 0 emitted, 1 where it does not apply (the caller emits its own
 * kernel), negative on error. */
struct gr_dmma_geo {
	long long nb, ci, co, in[3], out[3], k[3], s[3], pad[3], dil[3];
	int transposed;
};
int gr_dmma_conv(struct gr_plan *p, int gi, const struct gr_epi *e, const char *xs, const char *ws,
		 const struct gr_dmma_geo *g, struct buf *err);
/* The same for a batched matmul: Z batches of [M x K] [K x N], row-major,
 * boffs setting aoff and boff from the batch z (builtin_graph3.c). */
int gr_dmma_mm(struct gr_plan *p, int gi, const struct gr_epi *e, long long M, long long N, long long K,
	       long long Z, const char *boffs, const char *an, const char *bn, struct buf *err);

/* builtin_graph3.c: level-3 ops (matmul, permute, concat, expand, slice,
 * pad, cumsum, masked_fill, rnn). Shape checks of node k at build time. */
int gr_check3(const struct gr_plan *p, int k, struct buf *err);
void gr_concat_prefix(struct gr_plan *p);
int gr_head3(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err);
/* The last node of an attention chain from matmul node k, else -1. */
int gr_attn_match(const struct gr_plan *p, int k);
int gr_attn_head(struct gr_plan *p, int gi, struct gr_epi *e, struct buf *err);

#endif
