/* Merging stores made on different machines or GPUs. Rows are unioned by
 * primary key, table by table in dependency order. A key present on both
 * sides with different content is a conflict: it is reported (table, key,
 * column) and never silently resolved. The one rule-based table is gpus:
 * its identity columns must agree; measured ceilings take the maximum and
 * driver/cuda_version/first_seen the smallest value, so the result does
 * not depend on the order of the inputs. meta is per store and not merged.
 * Merging is idempotent: A+B = B+A = (A+B)+B. */
#ifndef KF_STORE_MERGE_H
#define KF_STORE_MERGE_H

#include "store.h"

struct merge_stats {
	long long rows_added;
	long long rows_same;
	long long conflicts;
};

/* Merges the store at `src` into the open store `dst`, in one transaction.
 * Conflicts are appended to `conflicts` (one per line, at most 50 listed)
 * and counted; the merge of that source is rolled back when any exist.
 * Returns 0, -1 on error, -2 on conflicts. */
int store_merge_from(struct store *dst, const char *src, struct merge_stats *st,
		     struct buf *conflicts, struct buf *err);

#endif
