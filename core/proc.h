/* Child processes with a wall-clock timeout, resource limits and captured
 * output. The child gets its own process group so a timeout kills all of
 * it. Either argv is exec'd, or fn runs in the forked child (its return
 * value is the exit status). */
#ifndef KF_PROC_H
#define KF_PROC_H

#include <stddef.h>
#include <sys/types.h>
#include "buf.h"

struct proc_limits {
	double wall_s;          /* 0: none */
	long cpu_s;             /* RLIMIT_CPU, 0: none */
	size_t as_bytes;        /* RLIMIT_AS, 0: none */
	size_t fsize_bytes;     /* RLIMIT_FSIZE, 0: none */
	size_t max_output;      /* per stream captured; extra is dropped; 0: 1 MiB */
	int die_with_parent;    /* SIGKILL when the calling thread dies (a killed verifier
				   must not leave a sanitizer run on the GPU) */
};

struct proc_result {
	int exited;             /* 1 if exited normally */
	int status;             /* exit status, or signal number */
	int signaled;
	int timed_out;
	double wall_s;
	struct buf out;         /* stdout captured (owned) */
	struct buf errout;      /* stderr captured (owned) */
	int out_truncated;
};

void proc_result_init(struct proc_result *r);
void proc_result_release(struct proc_result *r);

/* stdin gets `input` (may be NULL). Returns 0 when the child ran (look at
 * r for how it ended), -1 when it could not be started. */
int proc_run(const char *const argv[], const char *input, size_t input_len,
	     const struct proc_limits *lim, struct proc_result *r, struct buf *err);
int proc_run_fn(int (*fn)(void *), void *arg, const char *input, size_t input_len,
		const struct proc_limits *lim, struct proc_result *r, struct buf *err);

/* Describes how the child ended ("exit 3", "killed by SIGSEGV", "timed out
 * after 2.0 s"). */
void proc_describe(const struct proc_result *r, struct buf *out);

double now_s(void); /* monotonic seconds */

#endif
