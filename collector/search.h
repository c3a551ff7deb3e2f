/* collector/: what collects the data, owned by struct search: the search
 * (rounds, resume, shards, Slurm), the proposer interface, the LLM client
 * and the built-in proposer's ideas and catalogue. Includes every layer
 * below it (kernels/ for the built-in templates, engine/ to evaluate).
 *
 * The search: per problem, rounds of ideas -> implementations ->
 * evaluations (strategy "branch"), or one line of kernels revised turn by
 * turn (strategy "revise"), everything recorded in the store (runs,
 * rounds, llm_calls, ideas, idea_categories, candidates; the engine writes
 * kernels, compiles and evals).
 *
 * Resume: every step has a deterministic id and is committed in one
 * transaction, and a step whose rows exist is not done again, so a
 * search killed at any instant and started again ends with the rows of an
 * uninterrupted run. A proposer call whose response is stored is served
 * from the store (the response cache) instead of being made again.
 * Determinism: given the seed, the rows depend only on each problem's own
 * history, whatever the thread interleaving; only the *total* budgets
 * (across problems) and wall-time budgets depend on timing.
 *
 * The search talks to the engine and the proposer through function
 * tables, so tests run it with fakes (tests/helpers/searchfake.c). */
#ifndef KF_SEARCH_H
#define KF_SEARCH_H

#include <jansson.h>
#include "problem/problem_list.h"
#include "collector/proposer.h"
#include "core/buf.h"
#include "engine/engine.h"

/* Limits; 0 means unlimited. */
struct search_budget {
	int ideas;                 /* ideas generated */
	int impls;                 /* implementations (candidates) evaluated */
	int llm_calls;             /* proposer calls */
	long long tokens;          /* prompt + completion tokens reported */
	double wall_s;             /* seconds in this invocation */
};

struct search_config {
	const char *strategy;      /* "branch" (default) or "revise" */
	int rounds;                /* branch: rounds after round 0; revise: turns */
	int k;                     /* ideas per round (branch) */
	int m;                     /* implementations per idea */
	int top_k;                 /* best correct kernels of the last round that seed the next */
	int bank;                  /* good earlier kernels added to the seeds */
	int reference;             /* round 0 evaluates the problem's reference.cu */
	unsigned long long seed;
	struct search_budget per_problem, total;
	const char *proposer;      /* "builtin", "llm", or a test's name */
	const char *model;         /* recorded; NULL when the proposer decides */
	int replay;                /* proposer served from recorded calls only */
	int compile_only;
	const char *arch;          /* compile_only: target arch */
	const char *gpu_model;     /* the GPU model to run on (engine_config.gpu_model; NULL: its
				      default); not in the run's config: the run records its GPU */
	const char *protocol;      /* evaluation protocol name ("collect-v1") */
	double max_timing_s;       /* timed trials stop after this much kernel time
				      (at least 10 trials); 0: all of them (default 1) */
	int profile;               /* a CUPTI profile of each correct candidate (0; engine/) */
	int profile_feedback;      /* prompts carry the seed kernels' profiles (needs profile) */
	double prune_vs_eager;     /* timed trials stop after 3 once the mean is over this many
				      times PyTorch eager's on this GPU; 0: never (default 3) */
	const struct problem_list *problems;
};
void search_config_default(struct search_config *c);

/* What the search needs from the engine (engine_eval in production). */
struct search_backend {
	void *ctx;
	int (*eval)(void *ctx, const char *problem_id, const char *candidate,
		    struct eval_outcome *out, struct buf *err);
	const char *(*gpu_name)(void *ctx);
	/* The target ("sm_90a"; NULL or "" unknown): the built-in proposer's
	 * plans depend on it (kernels/plans.c). NULL: none. */
	const char *(*arch)(void *ctx);
	/* The GPUs it evaluates on at once (NULL or 0: one). */
	int (*n_gpus)(void *ctx);
};

/* The real backend over engine.h; engine_open is referenced weakly so
 * kforge links before the engine exists (then this fails clearly). */
int search_backend_engine(struct search_backend *be, const char *root, const char *db_path,
			  const struct search_config *cfg, struct buf *err);
void search_backend_engine_close(struct search_backend *be);

/* Progress, per problem and in total. */
struct search_pstat {
	const char *problem_id;
	int round;                 /* current round (or turn) */
	int kernels, correct;      /* candidates evaluated / correct (this run, all invocations) */
	double best_speedup;       /* 0 when none */
	double best_ms;
	int llm_calls;
	long long tokens;
	const char *state;         /* "waiting", "running", "done", "budget", "stopped", "failed" */
};
struct search_status {
	const char *run_id;
	int n;
	const struct search_pstat *p;
	int kernels, correct, done, llm_calls;
	long long tokens;
	double elapsed_s;
};
typedef void (*search_progress_fn)(void *ctx, const struct search_status *st);

struct search_result {
	char run_id[64];
	char status[16];           /* finished / stopped / failed */
	int resumed;               /* the run existed before this invocation */
	int kernels, correct, failed_problems;
	struct buf errors;         /* one line per failed problem */
};
void search_result_init(struct search_result *r);
void search_result_release(struct search_result *r);

/* The run's configuration as stored in runs.config (canonical JSON, no
 * secrets), and back. Problems are stored as ids. */
json_t *search_config_to_json(const struct search_config *c);
/* Fills c from j; strings point into j (keep it alive). problems is left
 * NULL: resolve json "problems" with problem_list_resolve. */
int search_config_from_json(struct search_config *c, const json_t *j, struct buf *err);
/* "run_" + a hash of the configuration: the same search is the same run. */
void search_run_id(const struct search_config *c, char out[64]);

/* The unfinished run of the store (status running or stopped), newest
 * first: 1 with its id and config, 0 when none, -1 on error. */
int search_find_unfinished(const char *db_path, char run_id[64], json_t **config,
			   struct buf *err);

/* Loads the unfinished run of the store for resuming: its configuration
 * into c (strings point into *stored, which the caller releases), its
 * problems resolved under root into pl, its id. 1, 0 when none, -1 on
 * error (also when the stored configuration does not give back the id). */
int search_load_unfinished(const char *db_path, const char *root, struct search_config *c,
			   struct problem_list *pl, json_t **stored, char run_id[64],
			   struct buf *err);

/* The same for the newest run that is not itself a replay (for
 * `kforge search --replay` with no other options). */
int search_load_latest(const char *db_path, const char *root, struct search_config *c,
		       struct problem_list *pl, json_t **stored, char run_id[64], struct buf *err);

/* The response cache over llm_calls.request_sha256, for the proposer's
 * cache hook. Scoped to one run (resume) or to the whole store (replay). */
struct search_cache;
int search_cache_open(struct search_cache **c, const char *db_path, const char *run_id,
		      int any_run, struct buf *err);
int search_cache_lookup(void *ctx, const char *request_sha256, struct buf *out);
void search_cache_close(struct search_cache *c);

/* Prompt + completion tokens the run's recorded calls used (0 when none). */
long long search_tokens_used(const char *db_path, const char *run_id);

/* Stops the search at the next step boundary (async-signal-safe). */
void search_request_stop(void);

/* Runs (or resumes) the search. `jobs` problems run concurrently. 0 when
 * the run finished or stopped cleanly (see res->status), -1 on an error
 * that stopped it. */
int search_run(const struct search_config *cfg, const char *db_path, const char *root,
	       struct proposer *prop, const struct search_backend *be, int jobs,
	       search_progress_fn progress, void *progress_ctx, struct search_result *res,
	       struct buf *err);

#endif
