/* The launch block of a candidate, parsed and resolved against a problem
 * and the device limits (docs/formats.md). Everything is checked here,
 * before any launch: expressions in 64-bit checked arithmetic (overflow and
 * division by zero are errors), grid/block/smem against the limits,
 * arguments against each kernel's parameter list parsed from the source.
 * Errors read "LINE:COL: message" with file positions (1-based).
 *
 * Tensor indices are the problem's (core/problem.h): inputs and params
 * 0..n_in-1, then outputs n_in..n_in+n_out-1. Scratch indices are into
 * launch_plan.scratch. The plan owns all its memory. */
#ifndef KF_LAUNCH_H
#define KF_LAUNCH_H

#include <stddef.h>
#include "core/buf.h"
#include "core/problem.h"

struct launch_limits {
	int max_threads_per_block;      /* 1024 */
	long long max_grid[3];          /* 2^31-1, 65535, 65535 */
	int max_block[3];               /* 1024, 1024, 64 */
	long long max_smem_optin;       /* sm_90: 227 KiB = 232448 */
};
/* sm_90 (H100/H200) values, for machines without a GPU. */
void launch_limits_default(struct launch_limits *lim);

enum launch_arg_kind { LARG_TENSOR, LARG_SCRATCH, LARG_INT, LARG_FLOAT };

struct launch_arg {
	enum launch_arg_kind kind;
	int index;             /* tensor index (LARG_TENSOR) or scratch index (LARG_SCRATCH) */
	long long ival;        /* LARG_INT: the value, already checked to fit the parameter */
	double fval;           /* LARG_FLOAT */
	int size;              /* bytes of the C parameter: 4 or 8 (pointers: 8) */
	int is_double;         /* LARG_FLOAT: 1 double, 0 float */
};

struct launch_step {
	char *kernel;          /* extern "C" name */
	unsigned grid[3], block[3];
	unsigned smem;         /* dynamic shared memory bytes */
	struct launch_arg *args;
	int n_args;
	int line;              /* file line of the launch statement */
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
};

#define LAUNCH_MAX_STEPS 64
#define LAUNCH_MAX_SCRATCH 16
#define LAUNCH_MAX_ARGS 64
#define LAUNCH_MAX_SCRATCH_BYTES (8LL << 30)   /* all scratch buffers together */

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
 *            "args":[{"kind":"tensor|scratch|int|float","index","value","size"}]}]} */
void launch_plan_to_json(const struct launch_plan *lp, struct buf *out);
/* The inverse (bounds checked); 0 or -1 with err. */
int launch_plan_from_json(struct launch_plan *lp, const char *json, struct buf *err);

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
