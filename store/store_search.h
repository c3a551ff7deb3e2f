/* The search's queries: runs, rounds, ideas, candidates and the LLM calls
 * it reads back (budgets, the response cache). collector/search*.c build
 * the rows and write them with store_insert/store_update inside their own
 * transactions; every SELECT they need is here. */
#ifndef KF_STORE_SEARCH_H
#define KF_STORE_SEARCH_H

#include "store.h"

/* Which run store_search_find_run picks (the newest such). */
enum store_run_pick {
	STORE_RUN_UNFINISHED,  /* status running, stopped or failed */
	STORE_RUN_NOT_REPLAY,  /* config.replay = 0 */
};

/* The newest run of that kind as {id, config} (new reference) or NULL in
 * *row; 0, or -1 on error. */
int store_search_find_run(struct store *s, enum store_run_pick pick, json_t **row,
			  struct buf *err);
/* A run's {status, gpu_name} (new reference) or NULL in *row; 0, or -1. */
int store_search_run_get(struct store *s, const char *run_id, json_t **row, struct buf *err);
/* One problem of a run, for resuming its counters: {n, ok, sp, ms, calls,
 * tokens, ideas} (candidates, correct ones, best speedup and time on gpu
 * under protocol, LLM calls, tokens, ideas) in *row (new reference). */
int store_search_problem_stats(struct store *s, const char *run_id, const char *problem_id,
			       const char *gpu, const char *protocol, json_t **row,
			       struct buf *err);

/* A round's status into status: 1 when the round exists, 0 when not, -1. */
int store_search_round_status(struct store *s, const char *run_id, const char *problem_id,
			      int round, struct buf *status, struct buf *err);

/* A problem's candidates in a run, in order (round, insertion), each with
 * its kernel's label and source and its evaluation's id, time and speedup
 * on gpu under protocol: a new array, or NULL on error. */
json_t *store_search_candidates(struct store *s, const char *run_id, const char *problem_id,
				const char *gpu, const char *protocol, struct buf *err);
/* The distinct kernel hashes of candidates before round, sorted: a new
 * array of strings, or NULL. */
json_t *store_search_kernels_before(struct store *s, const char *run_id, const char *problem_id,
				    int round, struct buf *err);
/* The candidate {id, status, kernel_hash, detail} at (round, idea_id (may
 * be NULL), impl), or NULL (also on error, err filled). */
json_t *store_search_candidate_at(struct store *s, const char *run_id, const char *problem_id,
				  int round, const char *idea_id, int impl, struct buf *err);

/* Which ideas store_search_ideas lists. */
enum store_ideas_pick {
	STORE_IDEAS_OF_ROUND,  /* those of round */
	STORE_IDEAS_BEFORE,    /* those of the rounds before */
};
/* A problem's ideas in a run, in order: a new array of {id, round, text,
 * catalogue_id, cats (comma-separated category names)}, or NULL. */
json_t *store_search_ideas(struct store *s, const char *run_id, const char *problem_id, int round,
			   enum store_ideas_pick pick, struct buf *err);

/* ---- LLM calls ---- */

/* Whether the call id is recorded: 1 (*failed set when its error is), 0
 * when not, -1 on error. */
int store_search_call_failed(struct store *s, const char *call_id, int *failed, struct buf *err);

/* What a problem of a run used in the rounds before `round`. */
struct store_search_usage {
	long long calls, tokens, ideas, impls;  /* LLM calls, their tokens, ideas, candidates */
};
int store_search_usage_before(struct store *s, const char *run_id, const char *problem_id,
			      int round, struct store_search_usage *u, struct buf *err);

/* The prompt + completion tokens of a run's LLM calls into *n. */
int store_search_tokens(struct store *s, const char *run_id, long long *n, struct buf *err);

/* The response cache: the first (created_at, id) error-free response to
 * the request with SHA-256 sha, of run_id (NULL: of any run), into out.
 * 1 found, 0 not, -1 on error. */
int store_search_cached_response(struct store *s, const char *sha, const char *run_id,
				 struct buf *out, struct buf *err);

#endif
