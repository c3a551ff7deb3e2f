/* The search driver: configuration and run identity, resume, the
 * response cache, problems on worker threads, progress. */
#include "search_int.h"
#include "collector/search_order.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "core/log.h"
#include "problem/problem.h"
#include "core/sha256.h"
#include "store/store_problems.h"
#include "store/store_search.h"
#include "core/version.h"
#include "core/xalloc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_flag;
static __thread double tl_start;  /* this thread's problem's start */

void search_thread_started(double t)
{
	tl_start = t;
}

double search_thread_start(void)
{
	return tl_start;
}

void search_request_stop(void)
{
	stop_flag = 1;
}

double search_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int search_stop_requested(struct search *S)
{
	double now = search_now_s();
	const struct search_config *c = S->cfg;
	if (stop_flag)
		return 1;
	if (c->total.wall_s > 0 && now - S->t0 >= c->total.wall_s)
		return 1;
	if (c->per_problem.wall_s > 0 && tl_start > 0 && now - tl_start >= c->per_problem.wall_s)
		return 1;
	return 0;
}

void search_config_default(struct search_config *c)
{
	memset(c, 0, sizeof(*c));
	c->strategy = "branch";
	c->rounds = 3;
	c->k = 4;
	c->m = 2;
	c->top_k = 3;
	c->bank = 2;
	c->reference = 1;
	c->seed = 1;
	c->protocol = "collect-v3";
	/* A search ranks candidates; the verifier times the best at length. */
	c->max_timing_s = 1;
	c->prune_vs_eager = 3;
}

void search_result_init(struct search_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->errors);
}

void search_result_release(struct search_result *r)
{
	buf_release(&r->errors);
}

static json_t *budget_json(const struct search_budget *b)
{
	return json_pack("{s:i,s:i,s:i,s:I,s:f}", "ideas", b->ideas, "impls", b->impls, "llm_calls",
			 b->llm_calls, "tokens", (json_int_t)b->tokens, "wall_s", b->wall_s);
}

json_t *search_config_to_json(const struct search_config *c)
{
	json_t *probs = json_array();
	for (int i = 0; c->problems && i < c->problems->n; i++)
		json_array_append_new(probs, json_string(c->problems->v[i].id));
	json_t *j = json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:b,s:I,s:o,s:o,s:s,s:s?,s:b,s:b,s:s?,s:s,s:o}",
			 "strategy", c->strategy, "rounds", c->rounds, "k", c->k, "m", c->m, "top_k",
			 c->top_k, "bank", c->bank, "reference", c->reference, "seed",
			 (json_int_t)c->seed, "per_problem", budget_json(&c->per_problem), "total",
			 budget_json(&c->total), "proposer", c->proposer ? c->proposer : "builtin",
			 "model", c->model, "replay", c->replay, "compile_only", c->compile_only,
			 "arch", c->arch, "protocol", c->protocol, "problems", probs);
	/* Only when set: the run ids of earlier configurations stay the same. */
	if (j && c->max_timing_s > 0)
		json_object_set_new(j, "max_timing_s", json_real(c->max_timing_s));
	if (j && (c->profile || c->profile_feedback))
		json_object_set_new(j, "profile", json_true());
	if (j && c->profile_feedback)
		json_object_set_new(j, "profile_feedback", json_true());
	if (j && c->prune_vs_eager > 0)
		json_object_set_new(j, "prune_vs_eager", json_real(c->prune_vs_eager));
	return j;
}

static void budget_from(struct search_budget *b, const json_t *j)
{
	b->ideas = (int)jget_int(j, "ideas", 0);
	b->impls = (int)jget_int(j, "impls", 0);
	b->llm_calls = (int)jget_int(j, "llm_calls", 0);
	b->tokens = jget_int(j, "tokens", 0);
	b->wall_s = jget_num(j, "wall_s", 0);
}

int search_config_from_json(struct search_config *c, const json_t *j, struct buf *err)
{
	search_config_default(c);
	if (!json_is_object(j))
		return kf_err(err, "run configuration is not a JSON object");
	c->strategy = jget_str(j, "strategy", "branch");
	c->rounds = (int)jget_int(j, "rounds", c->rounds);
	c->k = (int)jget_int(j, "k", c->k);
	c->m = (int)jget_int(j, "m", c->m);
	c->top_k = (int)jget_int(j, "top_k", c->top_k);
	c->bank = (int)jget_int(j, "bank", c->bank);
	c->reference = jget_bool(j, "reference", 1);
	c->seed = (unsigned long long)jget_int(j, "seed", 1);
	budget_from(&c->per_problem, json_object_get(j, "per_problem"));
	budget_from(&c->total, json_object_get(j, "total"));
	c->proposer = jget_str(j, "proposer", "builtin");
	c->model = jget_str(j, "model", NULL);
	c->replay = jget_bool(j, "replay", 0);
	c->compile_only = jget_bool(j, "compile_only", 0);
	c->arch = jget_str(j, "arch", NULL);
	c->protocol = jget_str(j, "protocol", "collect-v1");   /* runs before the key existed */
	c->max_timing_s = jget_num(j, "max_timing_s", 0);
	c->profile_feedback = jget_bool(j, "profile_feedback", 0);
	c->profile = jget_bool(j, "profile", 0) || c->profile_feedback;
	c->prune_vs_eager = jget_num(j, "prune_vs_eager", 0);
	if (strcmp(c->strategy, "branch") && strcmp(c->strategy, "revise"))
		return kf_err(err, "unknown strategy '%s' (branch or revise)", c->strategy);
	return 0;
}

void search_run_id(const struct search_config *c, char out[64])
{
	json_t *j = search_config_to_json(c);
	struct buf b = BUF_INIT;
	char hex[65];

	/* Wall-time limits are per invocation: not part of the run's identity. */
	json_object_del(json_object_get(j, "per_problem"), "wall_s");
	json_object_del(json_object_get(j, "total"), "wall_s");
	json_add_compact(&b, j);
	sha256_hex(b.s, b.len, hex);
	snprintf(out, 64, "run_%.16s", hex);
	json_decref(j);
	buf_release(&b);
}

/* The newest run of the kind `pick`. */
static int find_run(const char *db_path, enum store_run_pick pick, char run_id[64],
		    json_t **config, struct buf *err)
{
	struct store st;
	json_t *row = NULL;
	int r;

	*config = NULL;
	if (!file_exists(db_path))
		return 0;
	if (store_open(&st, db_path, 0, err) < 0)
		return -1;
	r = store_search_find_run(&st, pick, &row, err);
	store_close(&st);
	if (r < 0)
		return -1;
	if (!row)
		return 0;
	snprintf(run_id, 64, "%s", jget_str(row, "id", ""));
	*config = json_loads(jget_str(row, "config", "{}"), 0, NULL);
	json_decref(row);
	if (!*config)
		return kf_err(err, "run %s: its configuration is not valid JSON", run_id);
	return 1;
}

int search_find_unfinished(const char *db_path, char run_id[64], json_t **config,
			   struct buf *err)
{
	return find_run(db_path, STORE_RUN_UNFINISHED, run_id, config, err);
}

static int load_run(const char *db_path, const char *root, enum store_run_pick pick,
		    struct search_config *c, struct problem_list *pl, json_t **stored,
		    char run_id[64], struct buf *err)
{
	struct buf ids = BUF_INIT;
	char id[64];
	size_t i;
	json_t *x;
	int r = find_run(db_path, pick, run_id, stored, err);

	if (r <= 0)
		return r;
	if (search_config_from_json(c, *stored, err) < 0)
		return -1;
	json_array_foreach(json_object_get(*stored, "problems"), i, x)
		buf_addf(&ids, "%s%s", i ? "," : "", json_string_value(x));
	r = problem_list_resolve(pl, root, ids.s, err);
	buf_release(&ids);
	if (r < 0)
		return kf_err(err, "run %s: %s", run_id, err->s);
	c->problems = pl;
	search_run_id(c, id);
	if (strcmp(id, run_id))
		return kf_err(err, "run %s: its stored configuration gives another id (%s)", run_id, id);
	return 1;
}

int search_load_unfinished(const char *db_path, const char *root, struct search_config *c,
			   struct problem_list *pl, json_t **stored, char run_id[64],
			   struct buf *err)
{
	return load_run(db_path, root, STORE_RUN_UNFINISHED, c, pl, stored, run_id, err);
}

int search_load_latest(const char *db_path, const char *root, struct search_config *c,
		       struct problem_list *pl, json_t **stored, char run_id[64], struct buf *err)
{
	return load_run(db_path, root, STORE_RUN_NOT_REPLAY, c, pl, stored, run_id, err);
}

long long search_tokens_used(const char *db_path, const char *run_id)
{
	struct store st;
	struct buf err = BUF_INIT;
	long long n = 0;

	if (file_exists(db_path) && store_open(&st, db_path, 0, &err) == 0) {
		store_search_tokens(&st, run_id, &n, &err);
		store_close(&st);
	}
	buf_release(&err);
	return n;
}

/* ---- response cache ---- */

struct search_cache {
	struct store st;
	pthread_mutex_t lock;
	char run_id[64];
	int any_run;
};

int search_cache_open(struct search_cache **out, const char *db_path, const char *run_id,
		      int any_run, struct buf *err)
{
	struct search_cache *c = xcalloc(1, sizeof(*c));
	if (store_open(&c->st, db_path, STORE_CREATE, err) < 0) {
		free(c);
		return -1;
	}
	pthread_mutex_init(&c->lock, NULL);
	snprintf(c->run_id, sizeof(c->run_id), "%s", run_id ? run_id : "");
	c->any_run = any_run;
	*out = c;
	return 0;
}

int search_cache_lookup(void *ctx, const char *sha, struct buf *out)
{
	struct search_cache *c = ctx;
	struct buf err = BUF_INIT;
	int r;

	pthread_mutex_lock(&c->lock);
	r = store_search_cached_response(&c->st, sha, c->any_run ? NULL : c->run_id, out, &err);
	pthread_mutex_unlock(&c->lock);
	buf_release(&err);
	return r;
}

void search_cache_close(struct search_cache *c)
{
	if (!c)
		return;
	store_close(&c->st);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* ---- progress ---- */

static void report_progress(struct search *S)
{
	struct search_status st = { S->run_id, S->n, S->p, 0, 0, 0, S->t_calls, S->t_tokens,
				    search_now_s() - S->t0 };
	if (!S->progress)
		return;
	for (int i = 0; i < S->n; i++) {
		st.kernels += S->p[i].kernels;
		st.correct += S->p[i].correct;
		if (strcmp(S->p[i].state, "waiting") && strcmp(S->p[i].state, "running"))
			st.done++;
	}
	S->progress(S->pctx, &st);
}

void search_note(struct sproblem *P, int kernels, int correct, double speedup, double ms,
		 int calls, long long tokens)
{
	struct search *S = P->S;
	struct search_pstat *ps = &S->p[P->idx];

	pthread_mutex_lock(&S->lock);
	ps->kernels += kernels;
	ps->correct += correct;
	if (speedup > ps->best_speedup)
		ps->best_speedup = speedup;
	if (ms > 0 && (ps->best_ms <= 0 || ms < ps->best_ms))
		ps->best_ms = ms;
	ps->llm_calls += calls;
	ps->tokens += tokens;
	if (kernels || calls)
		S->worked[P->idx] = 1;
	S->t_impls += kernels;
	S->t_calls += calls;
	S->t_tokens += tokens;
	report_progress(S);
	pthread_mutex_unlock(&S->lock);
}

static void set_state(struct search *S, int idx, const char *state, int round)
{
	pthread_mutex_lock(&S->lock);
	S->p[idx].state = state;
	if (round >= 0)
		S->p[idx].round = round;
	report_progress(S);
	pthread_mutex_unlock(&S->lock);
}

/* ---- one problem ---- */

/* The proposers' view of the loaded problem. */
static void problem_view(struct sproblem *P)
{
	P->pp.id = P->ref->id;
	P->pp.spec = P->prob->spec;
	P->pp.torch_text = P->prob->torch_text;
	P->pp.reference_src = P->prob->reference_src;
	P->pp.gpu_name = P->S->gpu;
	/* The GPU's target when the search names none: the plans depend on it. */
	P->pp.arch = P->S->cfg->arch ? P->S->cfg->arch : P->S->be->arch ? P->S->be->arch(P->S->be->ctx) : "";
}

static int run_problem(struct search *S, int idx, struct buf *err)
{
	struct sproblem P;
	const struct search_config *c = S->cfg;
	int r = 0, streak = 0, holes = 0;

	memset(&P, 0, sizeof(P));
	P.fail_streak = &streak;
	P.holes = &holes;
	P.S = S;
	P.idx = idx;
	P.ref = &c->problems->v[idx];
	P.prob = &S->probs[idx];
	problem_view(&P);
	sdb_hash8(P.tag, "%s|%s", S->run_id, P.ref->id);
	tl_start = search_now_s();
	set_state(S, idx, "running", 0);
	if (store_open(&P.st, S->db_path, 0, err) < 0) {
		r = -1;
		goto out;
	}
	if (c->reference)
		r = sp_reference(&P, err);
	for (int round = 1; r == SP_OK && round <= c->rounds; round++) {
		set_state(S, idx, "running", round);
		r = !strcmp(c->strategy, "revise") ? sp_revise_turn(&P, round, err)
						   : sp_branch_round(&P, round, err);
	}
	if (r >= 0 && r != SP_STOP && holes)
		r = kf_err(err, "%d proposer calls failed; run kforge search again to retry them", holes);
out:
	if (r < 0 && stop_flag) {
		/* the stop signal reached children (compiles) too: not a failure */
		log_debug("%s: %s (while stopping)", P.ref->id, err->s);
		r = SP_STOP;
	}
	set_state(S, idx, r < 0 ? "failed" : r == SP_STOP ? "stopped" : r == SP_BUDGET ? "budget" : "done", -1);
	store_close(&P.st);
	return r;
}

static void *worker(void *arg)
{
	struct search *S = arg;
	struct buf err = BUF_INIT;

	for (;;) {
		int idx, r;
		pthread_mutex_lock(&S->lock);
		idx = S->next < S->n && !stop_flag ? S->order[S->next++] : -1;
		pthread_mutex_unlock(&S->lock);
		if (idx < 0)
			break;
		buf_reset(&err);
		r = run_problem(S, idx, &err);
		pthread_mutex_lock(&S->lock);
		if (r < 0) {
			S->failed++;
			buf_addf(&S->errors, "%s: %s\n", S->cfg->problems->v[idx].id, err.s);
		} else if (r == SP_STOP) {
			S->interrupted = 1;
		}
		pthread_mutex_unlock(&S->lock);
	}
	buf_release(&err);
	return NULL;
}

/* ---- the run ---- */

static int init_run(struct search *S, struct store *st, struct search_result *res, int *done,
		    struct buf *err)
{
	const struct search_config *c = S->cfg;
	json_t *row = NULL;
	int r = store_search_run_get(st, S->run_id, &row, err);

	*done = 0;
	if (r < 0)
		return -1;
	if (row) {
		res->resumed = 1;
		if (strcmp(jget_str(row, "gpu_name", ""), S->gpu)) {
			kf_err(err, "run %s was started on GPU '%s'; this machine has '%s' (a host "
			       "of several GPU models: --gpu-model chooses)", S->run_id,
			       jget_str(row, "gpu_name", ""), S->gpu);
			json_decref(row);
			return -1;
		}
		*done = !strcmp(jget_str(row, "status", ""), "finished");
		json_decref(row);
		if (*done)
			return 0;
		json_t *set = json_pack("{s:s}", "status", "running"), *where = json_pack("{s:s}", "id", S->run_id);
		r = store_update(st, "runs", set, where, err);
		json_decref(set);
		json_decref(where);
		return r < 0 ? -1 : 0;
	}
	{
		json_t *cj = search_config_to_json(c);
		struct buf cfg = BUF_INIT;
		char now[32];
		json_add_compact(&cfg, cj);
		store_now(now);
		row = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s?,s:I,s:s,s:s,s:s}", "id", S->run_id,
				"created_at", now, "status", "running", "strategy", c->strategy,
				"proposer", S->prop->name ? S->prop->name : c->proposer, "model",
				c->model, "seed", (json_int_t)c->seed, "config", cfg.s, "gpu_name",
				S->gpu, "kforge_version", kforge_version());
		r = store_insert(st, "runs", row, STORE_IGNORE, err);
		json_decref(row);
		json_decref(cj);
		buf_release(&cfg);
	}
	return r < 0 ? -1 : 0;
}

static int load_stats(struct search *S, struct store *st, struct buf *err)
{
	for (int i = 0; i < S->n; i++) {
		json_t *row = NULL;
		int r = store_search_problem_stats(st, S->run_id, S->cfg->problems->v[i].id, S->gpu,
						   S->cfg->protocol, &row, err);
		if (r < 0)
			return -1;
		S->p[i].problem_id = S->cfg->problems->v[i].id;
		S->p[i].state = "waiting";
		S->p[i].kernels = (int)jget_int(row, "n", 0);
		S->p[i].correct = (int)jget_int(row, "ok", 0);
		S->p[i].best_speedup = jget_num(row, "sp", 0);
		S->p[i].best_ms = jget_num(row, "ms", 0);
		S->p[i].llm_calls = (int)jget_int(row, "calls", 0);
		S->p[i].tokens = jget_int(row, "tokens", 0);
		S->t_impls += S->p[i].kernels;
		S->t_calls += S->p[i].llm_calls;
		S->t_tokens += S->p[i].tokens;
		S->t_ideas += (int)jget_int(row, "ideas", 0);
		json_decref(row);
	}
	return 0;
}

/* This invocation's row of search_sessions: the problems it worked on
 * (made a candidate or a proposer call for; else those its workers took),
 * their levels, what it made. */
static int put_session(struct search *S, struct store *st, const char *started, const char *ended,
		       const char *status, struct buf *err)
{
	json_t *probs = json_array(), *levels = json_array(), *row;
	struct buf pj = BUF_INIT, lj = BUF_INIT;
	char id[33];
	int seen[64] = { 0 }, r, any = 0;

	for (int i = 0; i < S->n; i++)
		any |= S->worked[i];
	/* The problems taken, in the order taken (search_order): S->order[0..next). */
	for (int k = 0; k < S->next && k < S->n; k++) {
		int i = S->order[k], lv = S->cfg->problems->v[i].level;
		if (any && !S->worked[i])
			continue;
		json_array_append_new(probs, json_string(S->cfg->problems->v[i].id));
		if (lv >= 0 && lv < 64)
			seen[lv] = 1;
	}
	for (int lv = 0; lv < 64; lv++)
		if (seen[lv])
			json_array_append_new(levels, json_integer(lv));
	json_add_compact(&pj, probs);
	json_add_compact(&lj, levels);
	store_random_id(id);
	row = json_pack("{s:s,s:s,s:s?,s:s,s:s,s:f,s:s,s:s,s:s,s:i,s:i,s:i,s:s}", "id", id, "run_id",
			S->run_id, "gpu_name", S->gpu[0] ? S->gpu : NULL, "started_at", started,
			"ended_at", ended, "wall_s", search_now_s() - S->t0, "status", status,
			"problems", pj.s, "levels", lj.s, "evaluations", S->s_evals, "candidates",
			S->s_cands, "jobs", S->jobs > 0 ? S->jobs : 1, "kforge_version", kforge_version());
	r = row ? store_insert(st, "search_sessions", row, STORE_INSERT, err) : kf_err(err, "out of memory");
	json_decref(row);
	json_decref(probs);
	json_decref(levels);
	buf_release(&pj);
	buf_release(&lj);
	return r < 0 ? -1 : 0;
}

int search_run(const struct search_config *cfg, const char *db_path, const char *root,
	       struct proposer *prop, const struct search_backend *be, int jobs,
	       search_progress_fn progress, void *progress_ctx, struct search_result *res,
	       struct buf *err)
{
	struct search S;
	struct store st;
	pthread_t *th = NULL;
	int done = 0, ret = -1, nth = 0;
	const char *gpu;
	char started[32];

	(void)root;
	if (!cfg->problems || !cfg->problems->n)
		return kf_err(err, "no problems to search");
	if (strcmp(cfg->strategy, "branch") && strcmp(cfg->strategy, "revise"))
		return kf_err(err, "unknown strategy '%s' (branch or revise)", cfg->strategy);
	memset(&S, 0, sizeof(S));
	S.cfg = cfg;
	S.db_path = db_path;
	S.prop = prop;
	S.be = be;
	S.n = cfg->problems->n;
	S.progress = progress;
	S.pctx = progress_ctx;
	S.t0 = search_now_s();
	store_now(started);
	buf_init(&S.errors);
	pthread_mutex_init(&S.lock, NULL);
	gpu = be->gpu_name ? be->gpu_name(be->ctx) : "";
	snprintf(S.gpu, sizeof(S.gpu), "%s", gpu ? gpu : "");
	search_run_id(cfg, S.run_id);
	snprintf(res->run_id, sizeof(res->run_id), "%s", S.run_id);
	S.p = xcalloc((size_t)S.n, sizeof(*S.p));
	S.probs = xcalloc((size_t)S.n, sizeof(*S.probs));
	S.worked = xcalloc((size_t)S.n, sizeof(*S.worked));
	for (int i = 0; i < S.n; i++)
		if (problem_load(&S.probs[i], cfg->problems->v[i].dir, err) < 0)
			goto out_nostore;
	S.order = xcalloc((size_t)S.n, sizeof(*S.order));
	search_order(S.probs, S.n, S.order);
	if (store_open(&st, db_path, STORE_CREATE, err) < 0)
		goto out_nostore;
	if (store_begin(&st, err) < 0)
		goto out;
	for (int i = 0; i < S.n; i++)
		if (store_put_problem(&st, &S.probs[i], err) < 0) {
			store_rollback(&st);
			goto out;
		}
	if (init_run(&S, &st, res, &done, err) < 0) {
		store_rollback(&st);
		goto out;
	}
	if (store_commit(&st, err) < 0)
		goto out;
	if (load_stats(&S, &st, err) < 0)
		goto out;
	if (done) {
		snprintf(res->status, sizeof(res->status), "finished");
		for (int i = 0; i < S.n; i++) {
			res->kernels += S.p[i].kernels;
			res->correct += S.p[i].correct;
		}
		ret = 0;
		goto out;
	}
	if (jobs < 1)
		jobs = 1;
	if (jobs > S.n)
		jobs = S.n;
	S.jobs = jobs;
	th = xcalloc((size_t)jobs, sizeof(*th));
	for (nth = 0; nth < jobs; nth++)
		if (pthread_create(&th[nth], NULL, worker, &S)) {
			kf_err(err, "cannot start a search thread");
			break;
		}
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	if (nth < jobs && !nth)
		goto out;
	if (S.next < S.n)
		S.interrupted = 1;
	{
		const char *status = S.failed ? "failed" : S.interrupted ? "stopped" : "finished";
		char now[32];
		json_t *set, *where = json_pack("{s:s}", "id", S.run_id);
		int r;
		store_now(now);
		set = !strcmp(status, "finished") ? json_pack("{s:s,s:s}", "status", status, "finished_at", now)
						  : json_pack("{s:s}", "status", status);
		/* The run's status and this invocation's session, together. */
		r = store_begin(&st, err);
		if (r == 0)
			r = store_update(&st, "runs", set, where, err);
		if (r >= 0)
			r = put_session(&S, &st, started, now, status, err);
		if (r < 0)
			store_rollback(&st);
		else
			r = store_commit(&st, err);
		json_decref(set);
		json_decref(where);
		if (r < 0)
			goto out;
		snprintf(res->status, sizeof(res->status), "%s", status);
	}
	for (int i = 0; i < S.n; i++) {
		res->kernels += S.p[i].kernels;
		res->correct += S.p[i].correct;
	}
	res->failed_problems = S.failed;
	buf_add(&res->errors, S.errors.s, S.errors.len);
	ret = 0;
out:
	store_close(&st);
out_nostore:
	free(th);
	free(S.p);
	free(S.order);
	free(S.worked);
	for (int i = 0; S.probs && i < S.n; i++)
		problem_release(&S.probs[i]);
	free(S.probs);
	buf_release(&S.errors);
	pthread_mutex_destroy(&S.lock);
	return ret;
}
