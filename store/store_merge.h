/* Merging stores made on different machines or GPUs. Rows are unioned by
 * primary key, table by table in dependency order. Two honest stores can
 * hold the same key with different content, and each such case has a rule
 * that does not depend on the order of the inputs:
 * - kernels, compiles: the same content seen at two times: the earliest
 *   row is kept (created_at, then the compile's duration and log);
 * - gpus: identity columns must agree; measured ceilings take the maximum,
 *   driver/cuda_version/first_seen the smallest value;
 * - evals (with their trials): one kernel measured twice on one GPU model
 *   under one protocol: a failed status beats "correct" (a failure on any
 *   machine is evidence), then the earliest measurement is kept;
 * - verifications: the latest (a kernel's verdict is its latest);
 * - baselines: the faster (speedups stay conservative), then the earliest;
 * - runs: a run's id is its configuration's hash, so two executions of one
 *   configuration share it. The earliest execution keeps the id; every
 *   later one (by created_at) is renamed RUN~H (H from its id and start
 *   time), with its rounds, LLM calls, ideas and candidates and every
 *   reference to them. Copies of one execution (same start) are unioned,
 *   the more advanced row winning (finished over running, a done round
 *   over an open one, an evaluated candidate over a pending one).
 * - search_sessions: one row per search invocation, under an id made once
 *   (random), so a row merged again is the same row; a renamed run's
 *   sessions follow it.
 * Anything else that differs (a problem's spec, an idea's text, ...) is a
 * conflict: listed (table, key, columns), and the merge of that source is
 * rolled back. Rows resolved by rule are counted and described in `notes`.
 * meta is per store and not merged. A+B = B+A = (A+B)+B. */
#ifndef KF_STORE_MERGE_H
#define KF_STORE_MERGE_H

#include "store.h"

struct merge_stats {
	long long rows_added;
	long long rows_same;
	long long conflicts;
	long long resolved;        /* same key, different content, settled by rule */
	long long runs_renamed;    /* later executions given RUN~H ids */
	long long status_disagree; /* evals correct on one side only */
};

/* Merges the store at `src` into the open store `dst`, in one transaction.
 * Conflicts are appended to `conflicts` (one per line, at most 50 listed
 * per table) and counted; the merge of that source is rolled back when any
 * exist. Rule-based resolutions worth a human's look (status disagreements,
 * renamed runs) are appended to `notes` (may be NULL).
 * Returns 0, -1 on error, -2 on conflicts. */
int store_merge_from(struct store *dst, const char *src, struct merge_stats *st,
		     struct buf *conflicts, struct buf *notes, struct buf *err);

#endif
