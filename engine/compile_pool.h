/* A pool of threads running compile_candidate jobs (each in its own
 * sandboxed child), so compiles use all cores and overlap GPU work.
 * Thread-safe: any thread may submit and wait. A job is owned by the pool
 * until compile_pool_wait returns it. */
#ifndef KF_COMPILE_POOL_H
#define KF_COMPILE_POOL_H

#include "core/buf.h"
#include "engine/compile.h"

struct compile_pool;
struct compile_job;

/* n_threads 0: online CPUs. opts is copied (its strings must outlive the pool). */
int compile_pool_open(struct compile_pool **pp, int n_threads, const struct compile_opts *opts,
		      struct buf *err);
/* Queues a compile of device_source (copied). Never NULL. */
struct compile_job *compile_pool_submit(struct compile_pool *p, const char *device_source);
/* Blocks until the job is done, moves its result into *r (r must be
 * initialised; its old content is released) and frees the job. Returns
 * compile_candidate's return value, with err set on -1. */
int compile_pool_wait(struct compile_pool *p, struct compile_job *job, struct compile_result *r,
		      struct buf *err);
/* submit + wait. */
int compile_pool_compile(struct compile_pool *p, const char *device_source,
			 struct compile_result *r, struct buf *err);
int compile_pool_threads(const struct compile_pool *p);
/* Finishes the queued jobs, joins the threads; jobs not yet waited for are freed. */
void compile_pool_close(struct compile_pool *p);

#endif
