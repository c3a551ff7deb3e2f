/* Queries and writes of the verifier. */
#ifndef KF_STORE_VERIFY_H
#define KF_STORE_VERIFY_H

#include "store.h"

/* Kernels to verify on gpu_name: the top_k correct kernels per problem
 * under `protocol` by mean time, plus (per_category) the best kernel of
 * each idea category. New array of {problem_id, kernel_hash, source,
 * time_mean_ms}, ordered by problem then time. */
json_t *store_verify_candidates(struct store *s, const char *gpu_name, const char *protocol,
				int top_k, int per_category, struct buf *err);

/* The env JSON of an evaluation (evals.env), or NULL. */
json_t *store_eval_env(struct store *s, const char *eval_id, struct buf *err);

/* Records one verification (replacing an earlier one of the same eval). */
int store_put_verification(struct store *s, const json_t *row, struct buf *err);

#endif
