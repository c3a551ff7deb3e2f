/* Sandboxed NVRTC compile of a candidate's device code. The compile runs
 * in a child process (`kforge __compile`, or a fork when no executable is
 * given) with CPU-time, address-space and wall-clock limits; NVRTC is
 * loaded there with dlopen (engine/nvrtc.h), so kforge itself starts on
 * machines without it. The child re-runs the include scan before NVRTC
 * sees the code; the caller is expected to have run candidate_parse.
 *
 * Options recorded: --gpu-architecture=ARCH -std=c++17 -lineinfo
 * --ptxas-options=-v [--use_fast_math], plus -I of the toolkit's own
 * headers (not recorded: they are the machine's). ptxas statistics are parsed from
 * NVRTC's log per kernel. */
#ifndef KF_COMPILE_H
#define KF_COMPILE_H

#include <stddef.h>
#include "core/buf.h"

struct compile_opts {
	const char *arch;        /* "sm_90" */
	int fast_math;
	int timeout_s;           /* wall limit of the child (default 30) */
	int cpu_s;               /* RLIMIT_CPU of the child (default 30) */
	size_t as_bytes;         /* RLIMIT_AS of the child (default 8 GiB) */
	const char *kforge_exe;  /* exec'd as `kforge_exe __compile`; NULL: fork without exec
				    (only safe from a single-threaded process) */
};
void compile_opts_default(struct compile_opts *o);

struct kernel_stats {
	char *name;
	int registers;
	int smem_static;         /* bytes */
	int spill_stores;        /* bytes */
	int spill_loads;         /* bytes */
	int stack;               /* bytes of stack frame */
	int cmem;                /* bytes of constant bank 0 (user constants) */
	int max_threads;         /* 0: not known at compile time (the worker asks the driver) */
};

struct compile_result {
	int ok;                  /* 1: compiled, cubin set */
	int timed_out;           /* killed by the wall or CPU limit */
	struct buf message;      /* one line: why it failed ("" when ok) */
	struct buf log;          /* NVRTC's log (bounded) */
	struct buf cubin;
	struct buf options;      /* as recorded, JSON array text */
	char nvrtc_version[16];  /* "13.0" */
	struct kernel_stats *kernels;
	int n_kernels;
	double ms;               /* wall time of the whole compile, child included */
	long long gmem;          /* static device memory (__device__, __managed__), ptxas's count */
};

#define COMPILE_LOG_MAX (256 * 1024)
#define COMPILE_CUBIN_MAX (64u << 20)
/* Static device memory a candidate may declare. It outlives each launch:
 * a module holding more could keep whole outputs from one launch to the
 * next (a cache that returns right answers without the work). Small
 * outputs kept that way are caught by the speed-of-light floor. */
#define COMPILE_GMEM_MAX (4ll << 20)

void compile_result_init(struct compile_result *r);
void compile_result_release(struct compile_result *r);

/* Compiles. Returns 0 when the compile ran, whatever its outcome (look at
 * r->ok / r->timed_out / r->message); -1 only when the sandbox itself
 * failed (cannot fork, NVRTC missing, the child crashed outside NVRTC),
 * with the reason in err. */
int compile_candidate(const struct compile_opts *o, const char *device_source,
		      struct compile_result *r, struct buf *err);

/* 1 when the cubin calls device malloc/free (an undefined symbol of that
 * name): refused, as heap memory outlives a launch. */
int cubin_calls_heap(const void *cubin, size_t len);
/* Calls fn(name, size) for each variable the cubin defines in a .nv.global*
 * section (module __device__/__managed__ variables: what the worker restores
 * before every launch block); fn < 0 stops. The count, or -1 when not ELF64. */
int cubin_globals(const void *cubin, size_t len,
		  int (*fn)(const char *name, unsigned long long size, void *ctx), void *ctx);

/* Parses ptxas -v lines of an NVRTC log into r->kernels (replacing them). */
int compile_parse_ptxas(const char *log, struct compile_result *r);

/* The compile child's body (cli/cmd_compile_child.c): reads the request
 * from in_fd, compiles in this process, writes the reply to out_fd.
 * Returns the process exit status. */
int compile_child_main(int in_fd, int out_fd);

#endif
