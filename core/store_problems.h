/* Problems and baselines in the store. */
#ifndef KF_STORE_PROBLEMS_H
#define KF_STORE_PROBLEMS_H

#include "store.h"

/* Upserts the problems row for problems/levelL/<dir> (spec.json and
 * reference.py read from disk; the row changes when the spec does). */
int store_put_problem_dir(struct store *s, const char *problem_dir, struct buf *err);

/* Finds the problem directory of a KernelBench file name ("23_Softmax.py")
 * under root/problems/level<level>/; writes the path to out. */
int problem_dir_for_file(const char *root, int level, const char *file, struct buf *out,
			 struct buf *err);

/* Imports KernelBench's baseline JSON ({"level1": {"<file>.py": {"mean": ...}}}).
 * Returns the number of rows imported, or -1. Unknown files are listed in
 * `skipped` (one per line) and not imported. */
int store_import_baselines(struct store *s, const char *root, const char *path,
			   const char *gpu_name, const char *variant, struct buf *skipped,
			   struct buf *err);

#endif
