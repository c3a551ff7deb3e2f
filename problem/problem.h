/* problem/: the problem suite, owned by struct problem: the one spec reader
 * (problem.c), the one directory index and name resolver (problem_find.c,
 * problem_name.c, problem_list.c), the inputs of every draw (inputs.c,
 * philox.cuh, the same bits on CPU and GPU) and the sensitivity draws.
 * Includes core/ only.
 *
 * A problem: its spec.json parsed and checked (docs/formats.md), with the
 * PyTorch text and the trusted reference candidate beside it. The struct
 * owns everything it points to; problem_release frees it.
 *
 * Tensor order is fixed everywhere (launch arguments, inputs generator,
 * oracle, engine buffers): inputs then params in spec order ("in" tensors,
 * index 0..n_in-1), then outputs (index n_in..n_in+n_out-1). */
#ifndef KF_PROBLEM_H
#define KF_PROBLEM_H

#include <stddef.h>
#include <jansson.h>
#include "core/buf.h"

#define PROBLEM_MAX_DIMS 8
#define PROBLEM_MAX_SETS 4              /* "alive" ranges set to a value per tensor */
#define PROBLEM_MAX_TENSORS 4096        /* inputs, params and outputs (level 3: ~600 params) */
#define PROBLEM_MAX_SIZES 256           /* named sizes; shapes may also use integer dims */
#define PROBLEM_SPEC_MAX (8 << 20)      /* bytes of spec.json: the one cap (docs/problems.md) */
#define PROBLEM_TEXT_MAX (1 << 20)      /* bytes of reference.py / reference.cu */
#define PROBLEM_GUARD_BYTES 65536       /* canary bytes each side of each buffer (memory plan) */

enum kf_dtype { KF_F32, KF_F16, KF_BF16, KF_I64, KF_I32, KF_BOOL };
const char *kf_dtype_name(enum kf_dtype t);       /* "float32", ... */
int kf_dtype_parse(const char *s);                /* enum value or -1 */
size_t kf_dtype_size(enum kf_dtype t);

enum kf_role { KF_ROLE_INPUT, KF_ROLE_PARAM, KF_ROLE_OUTPUT };

enum kf_dist_kind { KF_DIST_UNIFORM, KF_DIST_NORMAL, KF_DIST_RANDINT, KF_DIST_BERNOULLI,
		    KF_DIST_SIGN, KF_DIST_CONSTANT };
enum kf_dist_post { KF_POST_NONE, KF_POST_SYMMETRIZE, KF_POST_TRIU, KF_POST_TRIL,
		    KF_POST_SCALE_BY_RANDOM, KF_POST_SOFTMAX_LASTDIM,
		    KF_POST_SCALED_SOFTMAX /* "post": ["scale_by_random", "softmax_lastdim"] */ };

struct kf_dist {
	enum kf_dist_kind kind;
	double a, b;          /* uniform low/high, normal mean/std, randint low/high, bernoulli p, constant value */
	enum kf_dist_post post;
};

struct problem_tensor {
	char *name;
	enum kf_role role;
	enum kf_dtype dtype;
	int ndim;                              /* 0 for a scalar output */
	long long shape[PROBLEM_MAX_DIMS];     /* resolved from sizes */
	long long numel;
	size_t bytes;
	struct kf_dist dist;                   /* inputs and params only */
	/* spec "alive": the draw of a recurrent model's parameter that keeps
	 * its state alive across all steps (docs/problems.md), used instead of
	 * dist on the "alive" draw: a distribution without post op, then the
	 * flat ranges [set_lo, set_hi) set to set_v (a gate's bias slice). */
	int has_alive;
	struct kf_dist alive;
	int n_set;
	long long set_lo[PROBLEM_MAX_SETS], set_hi[PROBLEM_MAX_SETS];
	double set_v[PROBLEM_MAX_SETS];
};

enum kf_tol { KF_TOL_FP32, KF_TOL_FP16, KF_TOL_BF16, KF_TOL_EXACT };

struct problem {
	char *id;              /* "level1/023_Softmax" */
	char *dir;             /* directory holding spec.json */
	char *name;            /* "Softmax" */
	char *family;          /* "softmax", "matmul", "conv2d", ... */
	char *kernelbench_file;/* "23_Softmax.py" */
	char *operation;
	int level, number;
	int n_sizes;
	char *size_names[PROBLEM_MAX_SIZES];
	long long size_vals[PROBLEM_MAX_SIZES];
	int n_scalars;
	char *scalar_names[PROBLEM_MAX_SIZES];
	double scalar_vals[PROBLEM_MAX_SIZES];
	int n_in, n_out;                       /* n_in counts inputs and params */
	struct problem_tensor *t;              /* n_in + n_out, owned */
	enum kf_tol tol;
	double atol, rtol;
	double flops, min_bytes;
	double floor_flops;        /* spec "floor_flops": FLOPs that an algebraically cheaper
				    * correct algorithm needs, for the speed-of-light floor; 0: flops */
	double wide_bound;         /* spec "wide_bound": r of the U[-r, r) extra draw; 0: none set */
	char *torch_text;      /* reference.py */
	char *reference_src;   /* reference.cu */
	/* The one in-memory form of a spec: every consumer (engine, oracle,
	 * store, search, proposers) gets this struct or its spec. kernels/
	 * take the json_t: the parsed JSON of the one reader; kernels read it
	 * through kernels/builtin_util.c's bt_* accessors. */
	json_t *spec;          /* the parsed spec.json (owned reference) */
	char *spec_text;       /* its bytes as read (the store keeps them and their hash) */
	size_t spec_len;
};

void problem_init(struct problem *p);
void problem_release(struct problem *p);
/* Loads DIR/spec.json, DIR/reference.py, DIR/reference.cu. Every error names
 * the file and the field. */
int problem_load(struct problem *p, const char *dir, struct buf *err);
/* The one reader of spec files, under problem_load (consumers take a
 * loaded struct problem; tools that want only the text or JSON call it):
 * DIR/spec.json of at most PROBLEM_SPEC_MAX bytes, into text and/or parsed
 * into *js (a new reference), either may be NULL. 0, or -1 with err naming
 * the file. */
int problem_read_spec(const char *dir, struct buf *text, json_t **js, struct buf *err);
/* Same from an in-memory spec (texts may be NULL); for tests and fixtures. */
int problem_load_json(struct problem *p, const char *spec_text, const char *origin,
		      struct buf *err);

/* Lookups: 0 and *out on success, -1 when absent. */
int problem_size(const struct problem *p, const char *name, long long *out);
int problem_scalar(const struct problem *p, const char *name, double *out);
int problem_tensor_index(const struct problem *p, const char *name);

/* Naming problems (problem/problem_name.c), the one matcher behind every
 * command that takes a problem. A query is "23" (a bare number is level
 * 1's), "level2/12", the id "level1/023_Softmax", a name "Softmax" (any
 * case), or KernelBench's file name with or without level and ".py":
 * "19_ReLU", "19_ReLU.py", "level2/12_Gemm_Multiply_LeakyReLU.py" (number
 * and name must agree; trailing underscores do not count). */
struct problem_name {
	const char *id;            /* "level1/019_ReLU" */
	int level, number;
};
/* The query named no problem (or several): a usage error, not a failure. */
#define PROBLEM_UNKNOWN (-2)
/* The indices of v[0..n) that QUERY names (at most cap, in v's order):
 * their count, or PROBLEM_UNKNOWN with err "unknown problem 'X'; did you
 * mean 'level1/019_ReLU'?" (no suggestion when nothing is close). */
int problem_name_find(const struct problem_name *v, int n, const char *query, int *idx, int cap,
		      struct buf *err);
/* The one problem QUERY names: its index, or PROBLEM_UNKNOWN (also when
 * it names several). */
int problem_name_one(const struct problem_name *v, int n, const char *query, struct buf *err);

/* The problem index (problem_find.c), the one scan of ROOT/problems:
 * every directory levelN/NNN_Name (level 0 = all) that holds a spec.json,
 * sorted by level then number. problem_find, problem_list_dirs and the
 * PROBLEMS lists (problem_list.c) resolve through it. */
struct problem_index {
	char **dirs;               /* ROOT/problems/levelN/NNN_Name, owned */
	struct problem_name *v;    /* v[i].id points into dirs[i] */
	int n;
};
int problem_index_load(struct problem_index *ix, const char *root, int level, struct buf *err);
void problem_index_release(struct problem_index *ix);
/* Resolves a query (above) under ROOT/problems/ into the directory path:
 * 0, PROBLEM_UNKNOWN, or -1 when the suite cannot be read. */
int problem_find(const char *root, const char *query, struct buf *dir_out, struct buf *err);
/* The id part of a problem directory's path: "ROOT/problems/level1/019_ReLU"
 * -> "level1/019_ReLU" (a pointer into path). */
const char *problem_dir_id(const char *path);
/* The index's directories (level 0 = all). Caller frees each string and
 * the array. */
int problem_list_dirs(const char *root, int level, char ***dirs, int *n, struct buf *err);

/* The bytes the engine needs at once for this problem (inputs, reference
 * outputs, candidate outputs, guards, flush buffer), itemised in `detail`. */
size_t problem_memory_plan(const struct problem *p, size_t l2_flush_bytes, struct buf *detail);
/* Roofline floor in ms from peak bandwidth (GB/s) and FLOP rate (GFLOP/s). */
double problem_roofline_ms(const struct problem *p, double gbps, double gflops);

#endif
