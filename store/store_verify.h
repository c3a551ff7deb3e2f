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

/* A kernel's verdict for a problem on a GPU is that of its latest verification
 * (newest created_at, then id): re-verifying under a newer protocol supersedes
 * the older verdict, either way (verifications are keyed by evaluation and
 * protocol, so one protocol's verdict is not re-run unless forced). The one
 * definition reports, the site and exports share. T: the verifications table
 * ("verifications", or "src.verifications" of an attached store); a subquery
 * with all its columns. */
#define KF_VERDICTS(T) \
	"(SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY kernel_hash, problem_id," \
	" gpu_name ORDER BY created_at DESC, id) AS vrn FROM " T ") WHERE vrn = 1)"

/* A verification's verdict with review flags counted (issue 37): "verified"
 * with any review flag is "flagged", no verified result (left out of best
 * kernels, fast_p and geomeans until verified again without one). */
#define KF_FLAGGED_VERDICT \
	"(CASE WHEN verdict <> 'verified' OR NOT json_valid(COALESCE(review_flags, '[]')) THEN verdict" \
	" WHEN json_array_length(COALESCE(review_flags, '[]')) > 0 THEN 'flagged' ELSE verdict END)"

/* The env JSON of an evaluation (evals.env), or NULL. */
json_t *store_eval_env(struct store *s, const char *eval_id, struct buf *err);

/* The sanitizer JSON a verification recorded, into out: 1 when it has
 * one, 0 when the verification or its sanitizer column is absent, -1. */
int store_verification_sanitizer(struct store *s, const char *verification_id, struct buf *out,
				 struct buf *err);

/* Records one verification (replacing an earlier one of the same eval). */
int store_put_verification(struct store *s, const json_t *row, struct buf *err);

#endif
