/* Problems and baselines in the store. */
#ifndef KF_STORE_PROBLEMS_H
#define KF_STORE_PROBLEMS_H

#include "store.h"

/* Upserts the problems row of a loaded problem (its spec's bytes and
 * reference.py; the row changes when the spec does). */
struct problem;
int store_put_problem(struct store *s, const struct problem *p, struct buf *err);

/* Finds the problem directory of a KernelBench file name ("23_Softmax.py")
 * under root/problems/level<level>/; writes the path to out. */
int problem_dir_for_file(const char *root, int level, const char *file, struct buf *out,
			 struct buf *err);

/* Imports KernelBench's baseline JSON ({"level1": {"<file>.py": {"mean": ...}}}).
 * Returns the number of rows imported, or -1. Unknown files are listed in
 * `skipped` (one per line) and not imported. `only` (NULL: every problem)
 * holds the ids ("level2/023_Conv3d_GroupNorm_Mean"), sorted by strcmp, of
 * the problems to import: a dataset of one level gets no rows of the others.
 * `changed` gets how many of them were new or differed from the store's;
 * a row the store holds already (all but imported_at) is not rewritten. */
int store_import_baselines(struct store *s, const char *root, const char *path,
			   const char *gpu_name, const char *variant, const char *const *only,
			   size_t n_only, int *changed, struct buf *skipped, struct buf *err);

/* The baseline means of a problem on a GPU (0 where absent). */
int store_baseline_means(struct store *s, const char *problem_id, const char *gpu, double *eager,
			 double *compile, struct buf *err);

/* The baselines (only those of `gpu` unless NULL): a new array of
 * {problem_id, gpu_name, variant, mean_ms, std_ms, median_ms, num_trials}
 * ordered by problem (level, number), GPU and variant; NULL on error. */
json_t *store_baselines_list(struct store *s, const char *gpu, struct buf *err);

/* Calls cb with each problems row {id, name, torch_text, spec}, ordered by
 * id; cb's non-zero return stops (and is returned), -1 on error. */
int store_problems_each(struct store *s, store_row_cb cb, void *ctx, struct buf *err);

#endif
