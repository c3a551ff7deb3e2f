/* The search's rows: deterministic ids, idempotent inserts, the queries
 * that seed rounds and condition the proposer. */
#include "search_int.h"
#include "store/store_profile.h"
#include "core/json.h"
#include "core/sha256.h"
#include "store/store_llm.h"
#include "store/store_eval.h"
#include "store/store_search.h"
#include "core/utf8.h"
#include "core/xalloc.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Texts from the model, the compiler or the engine may not be valid UTF-8
 * (a response cut off or from a careless server, a log cut inside a
 * character): the store keeps valid UTF-8, with U+FFFD for the rest, so
 * that the dataset's JSON can carry every row. */
static void set_textn(json_t *o, const char *key, const char *s, size_t n)
{
	json_object_set_new(o, key, s ? json_utf8(s, n) : json_null());
}

static void set_text(json_t *o, const char *key, const char *s)
{
	set_textn(o, key, s, s ? strlen(s) : 0);
}

void sdb_hash8(char out[9], const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	char hex[65];
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	sha256_hex(b.s, b.len, hex);
	memcpy(out, hex, 8);
	out[8] = '\0';
	buf_release(&b);
}

unsigned long long sdb_seed(const struct sproblem *P, int round, const char *purpose, int idx)
{
	struct buf b = BUF_INIT;
	char hex[65];
	unsigned long long v = 0;

	buf_addf(&b, "%llu|%s|%d|%s|%d", P->S->cfg->seed, P->ref->id, round, purpose, idx);
	sha256_hex(b.s, b.len, hex);
	for (int i = 0; i < 16; i++)
		v = v << 4 | (unsigned long long)(hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
	buf_release(&b);
	return v;
}

void sdb_call_id(const struct sproblem *P, int round, const char *purpose, const char *key,
		 char out[64])
{
	struct buf b = BUF_INIT;
	char hex[65];

	buf_addf(&b, "%s|%s|%d|%s|%s", P->S->run_id, P->ref->id, round, purpose, key);
	sha256_hex(b.s, b.len, hex);
	snprintf(out, 64, "call_r%d_%s_%.16s", round, purpose, hex);
	buf_release(&b);
}

int sdb_call_get(struct sproblem *P, const char *id, int *failed, struct buf *err)
{
	return store_search_call_failed(&P->st, id, failed, err);
}

static void set_opt_int(json_t *o, const char *k, long long v)
{
	json_object_set_new(o, k, v < 0 ? json_null() : json_integer(v));
}

int sdb_put_call(struct sproblem *P, const char *id, int round, const char *purpose,
		 const struct proposer_record *rec, int retry, struct buf *err)
{
	char now[32], hex[65];
	json_t *row;
	int r;

	store_now(now);
	sha256_hex(rec->request.s, rec->request.len, hex);
	row = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:s,s:f,s:i,s:i,s:s}", "id", id, "run_id",
			P->S->run_id, "problem_id", P->ref->id, "round", round, "purpose", purpose,
			"proposer", P->S->prop->name ? P->S->prop->name : "unknown", "request_sha256",
			hex, "latency_ms", rec->latency_ms, "retries", rec->retries, "cached", rec->cached,
			"created_at", now);
	/* Byte-exact where the replay reads it (calls without an error: their
	 * response parsed as JSON, which is UTF-8). */
	set_textn(row, "request", rec->request.s, rec->request.len);
	set_textn(row, "response", rec->response.s, rec->response.len);
	set_text(row, "model", rec->model.len ? rec->model.s : NULL);
	json_object_set_new(row, "http_status",
			    rec->http_status ? json_integer(rec->http_status) : json_null());
	set_text(row, "error", rec->error.len ? rec->error.s : NULL);
	set_text(row, "attempts", rec->attempts.len ? rec->attempts.s : NULL);
	set_opt_int(row, "prompt_tokens", rec->prompt_tokens);
	set_opt_int(row, "completion_tokens", rec->completion_tokens);
	set_opt_int(row, "reasoning_tokens", rec->reasoning_tokens);
	r = store_insert(&P->st, "llm_calls", row, STORE_IGNORE, err);
	if (r == 0 && retry) {
		/* The failed attempt stays, as ID#N; this one takes the id. */
		int attempt = store_llm_call_archive(&P->st, id, err);
		if (attempt < 0) {
			json_decref(row);
			return -1;
		}
		json_object_set_new(row, "attempt", json_integer(attempt));
		r = store_insert(&P->st, "llm_calls", row, STORE_REPLACE, err);
	}
	json_decref(row);
	return r;
}

static int left(int limit, long long used)
{
	return !limit ? INT_MAX : used >= limit ? 0 : (int)(limit - used);
}

int sdb_budget(struct sproblem *P, int round, struct sbudget *b, struct buf *err)
{
	const struct search_budget *B = &P->S->cfg->per_problem;
	struct store_search_usage u;

	if (store_search_usage_before(&P->st, P->S->run_id, P->ref->id, round, &u, err) < 0)
		return -1;
	b->calls = left(B->llm_calls, u.calls);
	b->ideas = left(B->ideas, u.ideas);
	b->impls = left(B->impls, u.impls);
	b->tokens_ok = !B->tokens || u.tokens < B->tokens;
	return !b->calls || !b->ideas || !b->impls || !b->tokens_ok ? SP_BUDGET : 0;
}

int sdb_round_state(struct sproblem *P, int round, struct buf *err)
{
	struct buf status = BUF_INIT;
	int r = store_search_round_status(&P->st, P->S->run_id, P->ref->id, round, &status, err);

	if (r > 0)
		r = strcmp(status.s, "done") ? 1 : 2;
	buf_release(&status);
	return r;
}

int sdb_round_open(struct sproblem *P, int round, struct buf *err)
{
	char now[32];
	json_t *row;
	int r;

	store_now(now);
	row = json_pack("{s:s,s:s,s:i,s:s,s:s}", "run_id", P->S->run_id, "problem_id", P->ref->id,
			"round", round, "status", "open", "started_at", now);
	r = store_insert(&P->st, "rounds", row, STORE_IGNORE, err);
	json_decref(row);
	return r < 0 ? -1 : 0;
}

int sdb_round_done(struct sproblem *P, int round, struct buf *err)
{
	json_t *cands = sdb_candidates(P, err), *best = json_array(), *c, *set, *where;
	char now[32];
	size_t i;
	int r;

	if (!cands) {
		json_decref(best);
		return -1;
	}
	json_array_foreach(cands, i, c)
		if (jget_int(c, "round", -1) == round && sdb_good(P, c))
			json_array_append(best, c);
	sdb_rank(best);
	store_now(now);
	set = json_pack("{s:s,s:s,s:o}", "status", "done", "finished_at", now, "best_candidate",
			json_array_size(best) ? json_incref(json_object_get(json_array_get(best, 0), "id"))
					      : json_null());
	where = json_pack("{s:s,s:s,s:i,s:s}", "run_id", P->S->run_id, "problem_id", P->ref->id,
			  "round", round, "status", "open");
	r = store_update(&P->st, "rounds", set, where, err);
	json_decref(set);
	json_decref(where);
	json_decref(cands);
	json_decref(best);
	return r < 0 ? -1 : 0;
}

json_t *sdb_candidates(struct sproblem *P, struct buf *err)
{
	return store_search_candidates(&P->st, P->S->run_id, P->ref->id, P->S->gpu,
				       P->S->cfg->protocol, err);
}

int sdb_profile(struct sproblem *P, const json_t *cand, json_t **out, struct buf *err)
{
	const char *eid = jget_str(cand, "eval_id", NULL);

	*out = NULL;
	return eid ? store_profile_get(&P->st, eid, out, err) : 0;
}

json_t *sdb_kernels_before(struct sproblem *P, int round, struct buf *err)
{
	return store_search_kernels_before(&P->st, P->S->run_id, P->ref->id, round, err);
}

json_t *sdb_candidate_at(struct sproblem *P, int round, const char *idea_id, int impl,
			 struct buf *err)
{
	return store_search_candidate_at(&P->st, P->S->run_id, P->ref->id, round, idea_id, impl,
					 err);
}

static json_t *idea_rows(struct sproblem *P, enum store_ideas_pick pick, int round,
			 struct buf *err)
{
	json_t *rows = store_search_ideas(&P->st, P->S->run_id, P->ref->id, round, pick, err), *r;
	size_t i;

	if (!rows)
		return NULL;
	json_array_foreach(rows, i, r) {
		unsigned bits = 0;
		const char *cats = jget_str(r, "cats", "");
		char *copy = xstrdup(cats), *save = NULL, *t;
		for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			bits |= (unsigned)idea_category_parse(t);
		free(copy);
		json_object_set_new(r, "categories", json_integer(bits));
	}
	return rows;
}

json_t *sdb_ideas(struct sproblem *P, int round, struct buf *err)
{
	return idea_rows(P, STORE_IDEAS_OF_ROUND, round, err);
}

json_t *sdb_history(struct sproblem *P, int round, struct buf *err)
{
	json_t *ideas = idea_rows(P, STORE_IDEAS_BEFORE, round, err), *cands, *idea, *c;
	size_t i, j;

	if (!ideas)
		return NULL;
	cands = sdb_candidates(P, err);
	if (!cands) {
		json_decref(ideas);
		return NULL;
	}
	json_array_foreach(ideas, i, idea) {
		int kernels = 0, correct = 0;
		double best = 0;
		const char *id = jget_str(idea, "id", "");
		json_array_foreach(cands, j, c) {
			if (strcmp(jget_str(c, "idea_id", ""), id))
				continue;
			kernels++;
			if (!strcmp(jget_str(c, "status", ""), "correct")) {
				correct++;
				if (jget_num(c, "speedup_eager", 0) > best)
					best = jget_num(c, "speedup_eager", 0);
			}
		}
		json_object_set_new(idea, "kernels", json_integer(kernels));
		json_object_set_new(idea, "correct", json_integer(correct));
		json_object_set_new(idea, "best_speedup", json_real(best));
	}
	json_decref(cands);
	return ideas;
}

int sdb_good(const struct sproblem *P, const json_t *c)
{
	const char *st = jget_str(c, "status", "");
	return !strcmp(st, "correct") || (P->S->cfg->compile_only && !strcmp(st, "not_run"));
}

static int cmp_cand(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	double tx = jget_num(x, "time_mean_ms", 0), ty = jget_num(y, "time_mean_ms", 0);
	if (tx <= 0 && ty > 0)
		return 1;
	if (ty <= 0 && tx > 0)
		return -1;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	/* Ties by content, which is the same in every run (ids are not). */
	int c = strcmp(jget_str(x, "kernel_hash", ""), jget_str(y, "kernel_hash", ""));
	return c ? c : strcmp(jget_str(x, "id", ""), jget_str(y, "id", ""));
}

void sdb_rank(json_t *arr)
{
	size_t n = json_array_size(arr);
	json_t **v = xcalloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), cmp_cand);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
}

int sdb_put_ideas(struct sproblem *P, const char *call_id, int round,
		  const struct proposer_record *rec, int retry, const struct idea_list *ideas, int n,
		  const json_t *parent_ideas, struct buf *err)
{
	struct buf parents = BUF_INIT;
	char now[32];
	int r = -1;

	json_add_compact(&parents, parent_ideas);
	store_now(now);
	if (store_begin(&P->st, err) < 0)
		goto out;
	r = sdb_put_call(P, call_id, round, "ideas", rec, retry, err);
	if (r < 0)
		goto fail;
	for (int i = 0; i < n && r >= 0; i++) {
		const struct idea *it = &ideas->v[i];
		unsigned cats = it->categories;
		const char *method = it->category_method;
		char h[9], id[64];
		json_t *row;

		if (!it->text || !*it->text)
			continue;
		sdb_hash8(h, "%s|%s|%d|%d", P->S->run_id, P->ref->id, round, i);
		snprintf(id, sizeof(id), "idea_r%d_%s", round, h);
		row = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:s,s:s}", "id", id, "run_id",
				P->S->run_id, "problem_id", P->ref->id, "round", round,
				"source", P->S->prop->name && !strcmp(P->S->prop->name, "llm") ? "llm" : "builtin",
				"parent_ids", parents.s, "llm_call_id", call_id, "created_at", now);
		set_text(row, "text", it->text);
		set_text(row, "catalogue_id", it->catalogue_id);
		r = store_insert(&P->st, "ideas", row, STORE_IGNORE, err);
		json_decref(row);
		if (!cats) {
			cats = idea_classify_keywords(it->text);
			method = "keyword";
		}
		if (!method || (strcmp(method, "model") && strcmp(method, "keyword") &&
				strcmp(method, "catalogue")))
			method = "model";
		for (int b = 0; b < CAT_COUNT && r >= 0; b++) {
			if (!(cats & (1u << b)))
				continue;
			row = json_pack("{s:s,s:s,s:s}", "idea_id", id, "category",
					idea_category_name(b), "method", method);
			r = store_insert(&P->st, "idea_categories", row, STORE_IGNORE, err);
			json_decref(row);
		}
	}
	if (r < 0)
		goto fail;
	r = store_commit(&P->st, err);
	goto out;
fail:
	store_rollback(&P->st);
	r = -1;
out:
	buf_release(&parents);
	return r;
}

int sdb_eval_put(struct sproblem *P, int round, const char *idea_id, const char *id_part,
		 int impl, const char *source, const char *format_error, const char *template_id,
		 const json_t *params, const json_t *parents, const char *call_id,
		 struct buf *err)
{
	struct eval_outcome o;
	struct buf ptext = BUF_INIT, prm = BUF_INIT, detail = BUF_INIT;
	char now[32], id[160];
	const char *status = "format_error";
	const char *hash = NULL;
	json_t *row = NULL;
	int r = -1, correct = 0;

	eval_outcome_init(&o);
	if (source) {
		/* As written: bytes that are not UTF-8 are the engine's format error. */
		r = P->S->be->eval(P->S->be->ctx, P->ref->id, source, &o, err);
		if (r < 0)
			goto out;
		r = -1;
		status = o.status[0] ? o.status : "runtime_error";
		buf_add(&detail, o.detail.s, o.detail.len > SEARCH_DETAIL_MAX ? SEARCH_DETAIL_MAX : o.detail.len);
		if (o.failed_check[0]) {
			buf_addf(&ptext, "%s: %s", o.failed_check, detail.s);
			buf_reset(&detail);
			buf_add(&detail, ptext.s, ptext.len);
			buf_reset(&ptext);
		}
		if (o.kernel_hash[0]) {
			int k = store_kernel_exists(&P->st, o.kernel_hash, err);
			if (k < 0)
				goto out;
			if (k)
				hash = o.kernel_hash;
		}
	} else {
		buf_adds(&detail, format_error ? format_error : "the response held no candidate");
	}
	snprintf(id, sizeof(id), "kernel_r%d_%s_%d_%.6s", round, id_part, impl, hash ? hash : "none");
	json_add_compact(&ptext, parents);
	if (params)
		json_add_compact(&prm, params);
	store_now(now);
	row = json_pack("{s:s,s:s,s:s,s:i,s:s?,s:i,s:s?,s:s,s:s?,s:s?,s:s,s:s}", "id", id,
			"run_id", P->S->run_id, "problem_id", P->ref->id, "round", round, "idea_id",
			idea_id, "impl_index", impl, "kernel_hash", hash, "parent_ids", ptext.s,
			"params", params ? prm.s : NULL, "llm_call_id", call_id, "status", status,
			"created_at", now);
	set_text(row, "template_id", template_id);
	set_text(row, "detail", detail.s);
	if (store_begin(&P->st, err) < 0)
		goto out;
	r = store_insert(&P->st, "candidates", row, STORE_IGNORE, err);
	if (r < 0 || store_commit(&P->st, err) < 0) {
		store_rollback(&P->st);
		r = -1;
		goto out;
	}
	correct = !strcmp(status, "correct");
	pthread_mutex_lock(&P->S->lock);
	P->S->s_evals += source && !o.cached;
	P->S->s_cands += r;
	pthread_mutex_unlock(&P->S->lock);
	search_note(P, r, r && correct, correct ? o.speedup_eager : 0, correct ? o.time_mean_ms : 0,
		    0, 0);
	r = 0;
out:
	json_decref(row);
	eval_outcome_release(&o);
	buf_release(&ptext);
	buf_release(&prm);
	buf_release(&detail);
	return r;
}
