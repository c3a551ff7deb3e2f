/* Reading the store for export (kforge pack): a filtered, byte-stable copy
 * of the store, and every ordered query the dataset writer needs. All rows
 * come back in a fixed order (primary key or a stated one), so the same
 * store always yields the same bytes. Rows are jansson objects keyed by
 * column name, passed to a store_row_cb as in store.h (borrowed). */
#ifndef KF_STORE_EXPORT_H
#define KF_STORE_EXPORT_H

#include <jansson.h>
#include "core/buf.h"
#include "store.h"

struct export_filter {
	const json_t *problems; /* array of problem ids to keep, NULL: all (borrowed) */
	int only_verified;      /* keep kernels verified on at least one GPU */
};

/* Copies src into a new database at dst (which must not exist), in one
 * snapshot of src, with a rollback journal (no WAL): a fresh schema with
 * the kept rows inserted in one transaction in primary-key order. The file
 * depends only on the rows and the SQLite version (not on the order they
 * reached src: a merge of A and B packs like a merge of B and A). */
int store_export_copy(const char *src, const char *dst, const struct export_filter *f,
		      struct buf *err);

/* The rows of one table in primary-key order. Four tables carry their
 * children nested: profiles (+"kernels": profile_kernels rows by idx), ideas (+"categories": [{category, method}]), compiles
 * (+"kernels": compile_kernels rows), evals (+"check_trials": [{idx, seed,
 * max_abs_err, max_rel_err, mismatches, ok}], "time_trials_ms",
 * "cupti_trials_ms": arrays by idx given as JSON text in a string (millions
 * of values: building an object for each would dominate the export), and
 * speedup_eager, speedup_eager_median, speedup_compile from the
 * eval_speedups view). */
int store_export_rows(struct store *s, const char *table, store_row_cb cb, void *ctx,
		      struct buf *err);

/* Formats a real as json_add_canonical does (so spliced text matches its output). */
void store_export_fmt_real(struct buf *b, double v);

/* Kernel files: {path, problem_id, kernel_hash, source} for every (problem,
 * kernel) pair of candidates and evals, ordered by path
 * ("kernels/<problem_id>/<kernel_hash>.cu", byte order). */
int store_export_kernel_files(struct store *s, store_row_cb cb, void *ctx, struct buf *err);

/* Correct evaluations, best per (problem, gpu, kernel) over the
 * non-verification protocols: {problem_id, gpu_name, kernel_hash, eval_id,
 * protocol, time_mean_ms, time_median_ms, speedup_eager, speedup_compile,
 * verified (1 when a 'verified' verdict exists on that gpu), verified_gpus
 * (JSON text: every GPU with a 'verified' verdict for it), request (the
 * LLM request of the kernel's first candidate, or null), source}. Ordered
 * by problem_id, gpu_name, time_mean_ms, kernel_hash. */
int store_export_correct(struct store *s, store_row_cb cb, void *ctx, struct buf *err);

/* Failed evaluations (incorrect, runtime_error, ...) with a kernel:
 * {problem_id, gpu_name, kernel_hash, status, failed_check, source},
 * ordered by problem_id, gpu_name, kernel_hash. */
int store_export_failed(struct store *s, store_row_cb cb, void *ctx, struct buf *err);

/* Candidates with the evaluation on their run's GPU: {run_id, problem_id,
 * round, candidate_id, idea_id, kernel_hash, parent_ids, status, gpu_name,
 * time_mean_ms, speedup_eager}, ordered by run_id, problem_id, round, id. */
int store_export_trajectory(struct store *s, store_row_cb cb, void *ctx, struct buf *err);

/* Rows in a table (exported name or store table). */
int store_export_count(struct store *s, const char *table, long long *n, struct buf *err);

/* Provenance: {gpus: [gpus rows], verified_per_gpu: [{gpu_name, kernels}],
 * protocols, kforge_versions, drivers, cuda_versions: [...],
 * first_created_at, last_created_at}. New reference or NULL. */
json_t *store_export_provenance(struct store *s, struct buf *err);

/* The ids of `ids` (array of strings) that name no problem (new array). */
json_t *store_export_unknown_problems(struct store *s, const json_t *ids, struct buf *err);

/* The columns of a table: [{name, type (declared), notnull, pk}]. */
json_t *store_export_columns(struct store *s, const char *table, struct buf *err);

#endif
