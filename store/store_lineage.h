/* Profiles and lineage as the site and the reports show them (issue 41).
 * A kernel's profile on a GPU: the latest profile (store_profile.h) of its
 * correct evaluations of the problem there. A kernel's time on a GPU in a
 * lineage or a diff: its latest correct evaluation there (any protocol);
 * speedup = the GPU's eager baseline mean / that time. Parents are the
 * first of candidates.parent_ids. */
#ifndef KF_STORE_LINEAGE_H
#define KF_STORE_LINEAGE_H

#include "store.h"

/* The profile of kernel hash for problem_id on gpu in *out (NULL: none).
 * 0, or -1 with err. */
int store_kernel_profile(struct store *s, const char *hash, const char *problem_id,
			 const char *gpu, json_t **out, struct buf *err);

/* The chain of candidates that led to cand_id, root first, at most max
 * steps (the steps nearest cand_id are kept): [{id, run_id, round, status,
 * kernel_hash, idea_id, idea_text, time_ms, eager_ms, speedup}] (time on
 * gpu). NULL with err on error. */
#define STORE_CHAIN_MAX 50   /* steps of a chain in reports */
json_t *store_idea_chain(struct store *s, const char *cand_id, const char *gpu, int max,
			 struct buf *err);

/* The candidates of a problem that have a parent with a kernel, in run,
 * round order: [{id, run_id, round, gpu_name (the run's), status,
 * kernel_hash, idea_id, idea_text, parent_id, parent_round, parent_hash,
 * time_ms, parent_ms, eager_ms}]. */
json_t *store_problem_diffs(struct store *s, const char *problem_id, struct buf *err);

/* Per idea category, how the limiter changed from the parent's profile to
 * the child's, over candidates of the category's ideas whose kernel and
 * parent kernel both have a profile on the run's GPU: [{category, before,
 * after, n}]. */
json_t *store_limiter_shifts(struct store *s, struct buf *err);

#endif
