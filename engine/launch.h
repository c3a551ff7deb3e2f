/* The launch block of a candidate, parsed and resolved against a problem
 * and the device limits (docs/formats.md). Everything is checked here,
 * before any launch: expressions in 64-bit checked arithmetic (overflow and
 * division by zero are errors), grid/block/smem against the limits,
 * arguments against each kernel's parameter list parsed from the source.
 * Errors read "LINE:COL: message" with file positions (1-based).
 *
 * Tensor indices are the problem's (problem/problem.h): inputs and params
 * 0..n_in-1, then outputs n_in..n_in+n_out-1. Scratch indices are into
 * launch_plan.scratch. The plan owns all its memory. */
#ifndef KF_LAUNCH_H
#define KF_LAUNCH_H

#include <stddef.h>
#include "core/buf.h"
#include "problem/problem.h"

struct launch_limits {
	int max_threads_per_block;      /* 1024 */
	long long max_grid[3];          /* 2^31-1, 65535, 65535 */
	int max_block[3];               /* 1024, 1024, 64 */
	long long max_smem_optin;       /* sm_90: 227 KiB = 232448 */
};
/* sm_90 (H100/H200) values, for machines without a GPU. */
void launch_limits_default(struct launch_limits *lim);

enum launch_arg_kind { LARG_TENSOR, LARG_SCRATCH, LARG_INT, LARG_FLOAT };

/* Integer expressions over loop variables, in postfix order. Sizes are
 * folded in at build; so is every part without a loop variable: a
 * constant is one LX_CONST. */
enum lx_kind { LX_CONST, LX_VAR, LX_NEG, LX_ADD, LX_SUB, LX_MUL, LX_DIV, LX_MOD, LX_MIN, LX_MAX,
	       LX_CEIL_DIV };

struct lx_op {
	int op;                /* enum lx_kind */
	long long v;           /* LX_CONST: the value; LX_VAR: its loop's depth (0: outermost) */
	int line, col;         /* file position (for errors at build; 0 from JSON) */
};

struct launch_expr {
	struct lx_op *op;      /* owned; NULL when n == 0 (no expression) */
	int n;
};

struct launch_arg {
	enum launch_arg_kind kind;
	int index;             /* tensor index (LARG_TENSOR) or scratch index (LARG_SCRATCH) */
	long long ival;        /* LARG_INT: the value, already checked to fit the parameter;
				* LARG_TENSOR/SCRATCH: element offset (`x + EXPR`), checked in range */
	double fval;           /* LARG_FLOAT */
	int size;              /* bytes of the C parameter: 4 or 8 (pointers: 8) */
	int is_double;         /* LARG_FLOAT: 1 double, 0 float */
	struct launch_expr expr; /* n > 0: ival/fval (or the offset) depends on loop variables */
	int line, col;         /* build only: where the argument is */
};

struct launch_step {
	char *kernel;          /* extern "C" name */
	unsigned grid[3], block[3];
	unsigned smem;         /* dynamic shared memory bytes */
	struct launch_arg *args;
	int n_args;
	int line;              /* file line of the launch statement */
	/* In a loop, grid/block/smem may depend on loop variables: dyn = 1,
	 * dims[0..2] grid, [3..5] block, [6] smem, and the fields above hold
	 * the largest block (threads) and smem of all iterations (what the
	 * kernel must allow) and the first grid. */
	int dyn;
	struct launch_expr dims[7];
	int depth;             /* loops around it */
	int pos[3][2];         /* build only: line, col of grid, block, smem */
	int col;               /* build only: column of the kernel name */
};

enum launch_cmp { LCMP_LT, LCMP_LE, LCMP_GT, LCMP_GE };

/* for (int VAR = init; VAR CMP bound; VAR += step) { steps [first, end) },
 * C's semantics: init once, bound and step every iteration. Loops are in
 * source order (an outer loop before the loops inside it). */
struct launch_loop {
	char *var;
	int depth;             /* 0: outermost; its variable is vars[depth] */
	int first, end;        /* its body's steps (at least one) */
	int skip;              /* index of the next loop not inside this one */
	int cmp;               /* enum launch_cmp */
	struct launch_expr init, bound, step;
	int line, col;         /* of `for` */
};

struct launch_scratch {
	char *name;
	size_t elem_size;
	long long count;       /* elements, > 0 */
	int zeroed;            /* 1: memset 0 before each launch block; 0: 0xFF fill */
};

struct launch_plan {
	struct launch_step *steps;
	int n_steps;
	struct launch_scratch *scratch;
	int n_scratch;
	struct launch_loop *loops;
	int n_loops;
	long long n_launches;  /* launches of one block, loops expanded */
};

#define LAUNCH_MAX_STEPS 4096          /* launch statements in the text */
#define LAUNCH_MAX_LAUNCHES (1 << 20)  /* launches of the block with its loops expanded */
#define LAUNCH_MAX_LOOP_DEPTH 4
#define LAUNCH_MAX_EXPR 512            /* operations of one expression after folding */
#define LAUNCH_MAX_SCRATCH 64
#define LAUNCH_MAX_ARGS 64
#define LAUNCH_MAX_SCRATCH_BYTES (8LL << 30)   /* all scratch buffers together */
#define LAUNCH_JSON_MAX (16u << 20)    /* bytes of a plan's JSON */

void launch_plan_init(struct launch_plan *lp);
void launch_plan_release(struct launch_plan *lp);

/* Parses the launch block of candidate_text (a whole candidate file, see
 * engine/candidate.h), resolves it against p and lim, and matches the
 * arguments to the kernels' signatures in the same text. 0, or -1 with a
 * format error in err (lp is then empty). */
int launch_plan_build(struct launch_plan *lp, const struct problem *p,
		      const char *candidate_text, const struct launch_limits *lim,
		      struct buf *err);

/* The plan as JSON text (for logs, the store and the worker protocol):
 * {"scratch":[{"name","elem_size","count","zeroed"}],
 *  "steps":[{"kernel","grid":[3],"block":[3],"smem","line",
 *            "args":[{"kind":"tensor|scratch|int|float","index","value","size"[,"offset"]
 *                     [,"expr":E]}] [,"dyn":{"grid":[E,E,E],"block":[E,E,E],"smem":E}]}]
 *  [,"loops":[{"var","depth","first","end","cmp":"<|<=|>|>=","init":E,"bound":E,"step":E,
 *              "line"}], "launches":N]}
 * E: an expression in postfix, numbers and strings ("$D" loop variable D,
 * "+", "-", "*", "/", "%", "neg", "min", "max", "ceil_div"). A plan without
 * loops has no "loops", "dyn", "expr" or "offset": 0. */
void launch_plan_to_json(const struct launch_plan *lp, struct buf *out);
/* The inverse (bounds, nesting and expressions checked); 0 or -1 with err. */
int launch_plan_from_json(struct launch_plan *lp, const char *json, struct buf *err);

/* ---- Executing a plan (engine/launch_run.c) ----------------------------- */

/* One launch with the loop variables' values applied. */
struct launch_call {
	unsigned grid[3], block[3], smem;
	long long ival[LAUNCH_MAX_ARGS];   /* LARG_INT value; tensor/scratch element offset */
	double fval[LAUNCH_MAX_ARGS];      /* LARG_FLOAT */
};

/* Evaluates e for vars; 0, or -1 with the reason in err ("LINE:COL: ..."
 * when the expression has positions). */
int launch_expr_eval(const struct launch_expr *e, const long long *vars, long long *v,
		     struct buf *err);
/* Step s for vars (grid/block/smem and arguments; not checked against
 * limits, which plan build did). 0 or -1 with err. */
int launch_step_eval(const struct launch_step *st, const long long *vars, struct launch_call *c,
		     struct buf *err);
/* Calls fn(ctx, step, vars) for every launch of the block in order, loops
 * expanded (vars[d]: the variable of the loop at depth d). Returns 0, fn's
 * nonzero return, or -1 with err (loop arithmetic, a step that does not
 * move towards the bound, a variable past int, over LAUNCH_MAX_LAUNCHES
 * launches or loop iterations). */
typedef int (*launch_walk_fn)(void *ctx, int step, const long long *vars);
int launch_plan_walk(const struct launch_plan *lp, launch_walk_fn fn, void *ctx, struct buf *err);
/* "t = 37" or "i = 1, t = 37": the variables of the loops around step s. */
void launch_vars_desc(const struct launch_plan *lp, int s, const long long *vars, struct buf *out);
void launch_expr_release(struct launch_expr *e);

/* ---- Kernel signatures (engine/signature.c) ---------------------------- */

enum sig_base {
	SIG_VOID, SIG_FLOAT, SIG_DOUBLE, SIG_HALF, SIG_BF16, SIG_BOOL,
	SIG_CHAR, SIG_SCHAR, SIG_UCHAR, SIG_SHORT, SIG_USHORT,
	SIG_INT, SIG_UINT, SIG_LONG, SIG_ULONG, SIG_LLONG, SIG_ULLONG,
	SIG_OTHER      /* a struct, float4, template type...: pointers to it accept no tensor */
};

struct sig_param {
	enum sig_base base;
	int is_pointer;        /* one level of pointer */
	int is_const;
	int is_ref;            /* a C++ reference: kforge cannot pass it */
	int vec;               /* 1, or 2/4 for float2, float4, half2, int4...: element base, vector width */
	char *type_text;       /* as written, for messages ("const float*") */
	char *name;            /* may be "" */
};

struct kernel_sig {
	char *name;
	struct sig_param *params;
	int n_params;
	int line;              /* file line of the kernel's name */
	int extern_c;          /* 0: a __global__ without extern "C" (mangled, not launchable) */
	int launch_bounds;     /* N of __launch_bounds__(N, ...) when N is a literal, else 0 */
};

struct kernel_sigs {
	struct kernel_sig *k;
	int n;
};

void kernel_sigs_init(struct kernel_sigs *s);
void kernel_sigs_release(struct kernel_sigs *s);
/* Finds every `extern "C" __global__` function (also inside an
 * extern "C" { } block) in the code, skipping comments, strings and the
 * preprocessor. 0 or -1 with "LINE:COL: ..." in err. */
int kernel_sigs_parse(struct kernel_sigs *s, const char *src, struct buf *err);
const struct kernel_sig *kernel_sigs_find(const struct kernel_sigs *s, const char *name);

#endif
