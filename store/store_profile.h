/* Profiles (schema v5): the hardware-counter profile of one evaluation's
 * extra launch block, and its kernels. The JSON form, shared by the
 * engine (which measures it), the dataset export, the site and reports:
 *   {"eval_id", "kernel_hash", "problem_id", "gpu_name", "limiter",
 *    "launches", "kernel_ms", "dram_read_bytes", "dram_write_bytes",
 *    "dram_pct", "l2_hit_pct", "sm_pct", "tensor_pct", "occupancy_pct",
 *    "cost_ms", "tool", "created_at",
 *    "kernels": [{"idx", "name", "duration_ms", "dram_read_bytes", ...,
 *                 "registers", "shared_bytes", "block_threads",
 *                 "grid_blocks", "limiter"}]}
 * (the columns of profiles and profile_kernels; a metric that could not
 * be read is null). */
#ifndef KF_STORE_PROFILE_H
#define KF_STORE_PROFILE_H

#include "store.h"

/* The limiters, in the order reports list them. */
extern const char *const store_profile_limiters[];   /* NULL-ended */
int store_profile_limiter_ok(const char *s);

/* Writes (or replaces) the profile and its kernels in one transaction
 * (joins the caller's when one is open). 0 or -1. */
int store_profile_put(struct store *s, const json_t *prof, struct buf *err);
/* Deletes an evaluation's profile and its kernels (a re-evaluation
 * replaces it). 0 or -1. */
int store_profile_delete(struct store *s, const char *eval_id, struct buf *err);
/* The profile of an evaluation as the JSON above in *out (NULL: none);
 * 0, or -1 on error. */
int store_profile_get(struct store *s, const char *eval_id, json_t **out, struct buf *err);

#endif
