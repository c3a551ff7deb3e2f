/* Read-only queries for the site and the reports. Everything comes back as
 * new jansson values (caller decrefs) whose keys are column names; text is
 * valid UTF-8 (invalid bytes and NUL become U+FFFD) and otherwise as
 * stored, so escaping stays the renderer's job.
 *
 * "Best" follows one rule everywhere (site, reports, kforge report):
 * for a problem on a GPU, the eligible kernels are those with a correct
 * evaluation there and no `failed` verification there; when at least one
 * kernel of the problem is `verified` on that GPU only verified kernels
 * are eligible. A verified kernel is timed by its verification's
 * evaluation, others by their fastest correct evaluation. The best is the
 * fastest eligible kernel. Speedup = baseline mean / kernel mean. */
#ifndef KF_STORE_SITE_H
#define KF_STORE_SITE_H

#include <jansson.h>
#include "core/buf.h"
#include "store.h"

struct sqlite3_stmt;

enum {
	SS_KERNEL, SS_KCOMPILES, SS_KCKERNELS, SS_KEVALS, SS_KVERIFS, SS_KCANDS, SS_N
};

struct store_site {
	struct store *s;                   /* borrowed */
	struct sqlite3_stmt *st[SS_N];     /* owned, prepared on first use */
};

int store_site_init(struct store_site *ss, struct store *s, struct buf *err);
void store_site_release(struct store_site *ss);

/* {problems, kernels, candidates, ideas, compiled, correct, rounds,
 *  llm_calls, prompt_tokens, completion_tokens, gpus: [gpus rows],
 *  proposers: [{proposer, model, runs, candidates, compiled, correct}],
 *  runs: [runs rows without config]} */
json_t *store_site_overview(struct store_site *ss, struct buf *err);

/* Problems ordered by id, each with candidates, compiled, correct, rounds,
 * kernels counts. */
json_t *store_site_problems(struct store_site *ss, struct buf *err);

/* Best kernel per (problem, GPU) by the rule above: [{problem_id,
 * gpu_name, kernel_hash, verdict (or null), time_ms, eager_ms, compile_ms,
 * speedup_eager, speedup_compile}], ordered by problem, GPU. */
json_t *store_site_best(struct store_site *ss, const char *problem_id, struct buf *err);
/* Kernels whose latest verification passed with review flags (not counted
 * as verified: listed apart): {problem_id, gpu_name, kernel_hash,
 * review_flags (JSON text), protocol, created_at, time_ms}. */
json_t *store_site_flagged(struct store_site *ss, struct buf *err);

/* Per run and round of a problem: [{run_id, round, gpu_name, candidates,
 * compiled, correct, best_ms, eager_ms, best_candidate}]. best_ms is the
 * fastest correct collection evaluation on the run's GPU. */
json_t *store_site_rounds(struct store_site *ss, const char *problem_id, struct buf *err);

/* Every candidate of a problem: [{id, run_id, round, idea_id, idea_text,
 * impl_index, kernel_hash, parent_ids, status, detail, time_ms, eager_ms}]. */
json_t *store_site_candidates(struct store_site *ss, const char *problem_id, struct buf *err);

/* One kernel: {kernel: {hash, source, bytes, created_at}, compiles: [...
 * with "kernels": [compile_kernels rows]], evals: [... with eager_ms,
 * compile_ms, flops, min_bytes, peak_bw_gbs, peak_fp32_tflops],
 * verifications: [...], candidates: [{id, problem_id, run_id, round,
 * status, idea_id, idea_text, proposer, model}]}, or NULL with *err empty
 * when there is no such kernel. */
json_t *store_site_kernel(struct store_site *ss, const char *hash, struct buf *err);

/* Calls cb with each kernel hash in [lo, hi) (NULL: unbounded), in hash
 * order; cb returns non-zero to stop. */
int store_site_each_kernel(struct store_site *ss, const char *lo, const char *hi,
			   int (*cb)(void *ctx, const char *hash), void *ctx, struct buf *err);

/* Per idea category: [{category, ideas, candidates, compiled, correct,
 * round_bests (rounds whose best candidate came from such an idea)}]. */
json_t *store_site_categories(struct store_site *ss, struct buf *err);
/* Calls cb with (category, speedup vs eager) for each correct candidate
 * of an idea of that category that has a speedup. */
int store_site_each_category_speedup(struct store_site *ss,
				     int (*cb)(void *ctx, const char *category, double speedup),
				     void *ctx, struct buf *err);
/* The best ideas of each category with their results, at most limit per
 * category: [{category, idea_id, problem_id, run_id, round, text,
 * candidates, correct, best_speedup, rn}], by category then rank. */
json_t *store_site_category_ideas(struct store_site *ss, int limit, struct buf *err);

/* Baselines, GPUs, protocols, tool versions, for the methodology page:
 * {baselines: [...], protocols: [{protocol, protocol_params, evals}],
 *  versions: {kforge: [...], nvrtc: [...], drivers: [...]}, tolerances: [...]} */
json_t *store_site_methodology(struct store_site *ss, struct buf *err);

/* What `kforge report PROBLEM` and reports/PROBLEM.md show: {problem,
 * stats: {candidates, compiled, correct, rounds, kernels}, rounds,
 * best: [...store_site_best], best_kernel: store_site_kernel of the best
 * kernel on the first GPU (or null), best_profile: its profile there
 * (store_lineage.h; or null), chain: store_idea_chain from its first
 * candidate of the problem}. NULL with *err empty when the
 * problem does not exist. */
json_t *store_site_report(struct store_site *ss, const char *problem_id, struct buf *err);

/* Names of the GPUs with evaluations, most evaluations first. */
json_t *store_site_gpu_names(struct store_site *ss, struct buf *err);

/* The newest created_at of candidates, verifications and evals into out
 * ("" in an empty store): the site's "generated at". */
int store_site_generated_at(struct store_site *ss, struct buf *out, struct buf *err);

/* Valid UTF-8 copy of s[0..len) (invalid bytes and NUL -> U+FFFD). */
json_t *store_site_text(const char *s, size_t len);

#endif
