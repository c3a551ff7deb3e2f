/* Internals shared by collector/search*.c. */
#ifndef KF_SEARCH_INT_H
#define KF_SEARCH_INT_H

#include <pthread.h>
#include "collector/search.h"
#include "problem/problem.h"
#include "store/store.h"

#define SEARCH_DETAIL_MAX (16 * 1024)  /* bytes of eval detail kept per candidate */
#define SEARCH_SEEDS_MAX 16

struct search {
	const struct search_config *cfg;
	const char *db_path;
	struct proposer *prop;
	const struct search_backend *be;
	char run_id[64];
	char gpu[128];
	pthread_mutex_t lock;
	struct search_pstat *p;
	struct problem *probs;     /* the n problems, loaded once (problem_load) */
	int n, next;
	int *order;                /* problems by cost, costliest first (search_order) */
	int t_ideas, t_impls, t_calls;
	long long t_tokens;
	int s_evals, s_cands;      /* this invocation's fresh evaluations and candidate rows */
	unsigned char *worked;     /* per problem: this invocation made a candidate or a call */
	int jobs;
	double t0;
	search_progress_fn progress;
	void *pctx;
	struct buf errors;
	int failed, interrupted;
};

/* One problem's search, on its own thread and store connection. */
struct sproblem {
	struct search *S;
	int idx;
	const struct problem_ref *ref;
	const struct problem *prob; /* S->probs[idx] */
	struct store st;
	struct proposer_problem pp;
	char tag[16];              /* 8 hex digits of hash(run|problem), for ids */
	int *fail_streak;          /* proposer calls failed in a row (under S->lock) */
	int *holes;                /* proposer calls failed in this invocation (under S->lock) */
};

/* A failed proposer call (after the proposer's own retries) leaves its
 * round open and the search goes on; the problem ends "failed" so that the
 * next `kforge search` retries the open rounds' failed calls. After this
 * many failures in a row the problem stops at once (the endpoint is likely
 * down). */
#define SEARCH_FAIL_STREAK 3

/* Step results. */
enum { SP_OK = 0, SP_BUDGET = 1, SP_STOP = 2 };

double search_now_s(void);
/* The per-problem wall clock, per thread (idea threads inherit it). */
void search_thread_started(double t);
double search_thread_start(void);
int search_stop_requested(struct search *S);
void search_note(struct sproblem *P, int kernels, int correct, double speedup, double ms,
		 int calls, long long tokens);

/* search_db.c */
void sdb_hash8(char out[9], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
unsigned long long sdb_seed(const struct sproblem *P, int round, const char *purpose, int idx);
void sdb_call_id(const struct sproblem *P, int round, const char *purpose, const char *key,
		 char out[64]);
/* The llm_calls row of id: 1 (with *error set when it failed), 0, -1. */
int sdb_call_get(struct sproblem *P, const char *id, int *failed, struct buf *err);
/* Records a call (kept if it exists; replaced when `retry` retried a failed one). */
int sdb_put_call(struct sproblem *P, const char *id, int round, const char *purpose,
		 const struct proposer_record *rec, int retry, struct buf *err);
/* The per-problem budget left for round `round`, from the rows of earlier
 * rounds (the same whether or not this round was partly done before a
 * kill): INT_MAX where unlimited. 0, SP_BUDGET when exhausted, or -1. */
struct sbudget {
	int calls, ideas, impls;
	int tokens_ok;
};
int sdb_budget(struct sproblem *P, int round, struct sbudget *b, struct buf *err);
int sdb_round_state(struct sproblem *P, int round, struct buf *err); /* 0 none, 1 open, 2 done */
int sdb_round_open(struct sproblem *P, int round, struct buf *err);
int sdb_round_done(struct sproblem *P, int round, struct buf *err);
/* Candidates of this problem in this run with evaluation results, ordered
 * by round then insertion: [{id, round, idea_id, impl_index, status,
 * kernel_hash, template_id, params, detail, source, time_mean_ms,
 * speedup_eager, eval_id}]. */
json_t *sdb_candidates(struct sproblem *P, struct buf *err);
/* The profile of a candidate row's evaluation (store_profile_get's JSON)
 * in *out, NULL when it has none; 0 or -1. */
int sdb_profile(struct sproblem *P, const json_t *cand, json_t **out, struct buf *err);
/* [hash, ...]: the kernels of the problem's candidates in the run's rounds before `round`. */
json_t *sdb_kernels_before(struct sproblem *P, int round, struct buf *err);
/* The candidate in slot (round, idea_id (may be NULL), impl): new ref or NULL. */
json_t *sdb_candidate_at(struct sproblem *P, int round, const char *idea_id, int impl,
			 struct buf *err);
/* Ideas of a round in order: [{id, text, catalogue_id, categories (bits)}]. */
json_t *sdb_ideas(struct sproblem *P, int round, struct buf *err);
/* Ideas of rounds < round with their outcome. */
json_t *sdb_history(struct sproblem *P, int round, struct buf *err);
/* Is a candidate usable as a seed: "correct", or "not_run" when
 * compiling only. */
int sdb_good(const struct sproblem *P, const json_t *c);
/* Sorts an array of candidates best first (time, then id). */
void sdb_rank(json_t *arr);
int sdb_put_ideas(struct sproblem *P, const char *call_id, int round,
		  const struct proposer_record *rec, int retry, const struct idea_list *ideas, int n,
		  const json_t *parent_ideas, struct buf *err);
/* Evaluates one proposal and records its candidate in one transaction. */
int sdb_eval_put(struct sproblem *P, int round, const char *idea_id, const char *id_part,
		 int impl, const char *source, const char *format_error, const char *template_id,
		 const json_t *params, const json_t *parents, const char *call_id,
		 struct buf *err);

/* search_steps.c */
int sp_reference(struct sproblem *P, struct buf *err);
int sp_branch_round(struct sproblem *P, int round, struct buf *err);
int sp_revise_turn(struct sproblem *P, int turn, struct buf *err);

#endif
