/* The search's rows: deterministic ids, idempotent inserts, the queries
 * that seed rounds and condition the proposer. */
#include "search_int.h"
#include "core/json.h"
#include "core/sha256.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	json_t *row = NULL, *pa = json_pack("[s]", id);
	int r = store_query_one(&P->st, "SELECT error FROM llm_calls WHERE id = ?", pa, &row, err);
	json_decref(pa);
	if (r < 0)
		return -1;
	if (!row)
		return 0;
	*failed = json_is_string(json_object_get(row, "error"));
	json_decref(row);
	return 1;
}

static void set_opt_int(json_t *o, const char *k, long long v)
{
	json_object_set_new(o, k, v < 0 ? json_null() : json_integer(v));
}

int sdb_put_call(struct sproblem *P, const char *id, int round, const char *purpose,
		 const struct proposer_record *rec, struct buf *err)
{
	char now[32], hex[65];
	json_t *row;
	int r;

	store_now(now);
	sha256_hex(rec->request.s, rec->request.len, hex);
	row = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:s,s:s,s:s,s:f,s:i,s:i,s:s}", "id", id, "run_id",
			P->S->run_id, "problem_id", P->ref->id, "round", round, "purpose", purpose,
			"proposer", P->S->prop->name ? P->S->prop->name : "unknown", "request",
			rec->request.s, "response", rec->response.s, "request_sha256", hex,
			"latency_ms", rec->latency_ms, "retries", rec->retries, "cached", rec->cached,
			"created_at", now);
	json_object_set_new(row, "model", rec->model.len ? json_string(rec->model.s) : json_null());
	json_object_set_new(row, "http_status",
			    rec->http_status ? json_integer(rec->http_status) : json_null());
	json_object_set_new(row, "error", rec->error.len ? json_string(rec->error.s) : json_null());
	set_opt_int(row, "prompt_tokens", rec->prompt_tokens);
	set_opt_int(row, "completion_tokens", rec->completion_tokens);
	set_opt_int(row, "reasoning_tokens", rec->reasoning_tokens);
	r = store_insert(&P->st, "llm_calls", row, STORE_IGNORE, err);
	json_decref(row);
	return r;
}

static int count(struct sproblem *P, const char *sql, const char *exclude, long long *out,
		 struct buf *err)
{
	json_t *pa = json_pack("[s,s,s?]", P->S->run_id, P->ref->id, exclude);
	int r = store_query_int(&P->st, sql, pa, 0, out, err);
	json_decref(pa);
	return r;
}

int sdb_budget(struct sproblem *P, const char *exclude, int *ideas_left, int *impls_left,
	       struct buf *err)
{
	const struct search_budget *B = &P->S->cfg->per_problem;
	long long calls, tokens, ideas, impls;

	if (count(P, "SELECT COUNT(*) FROM llm_calls WHERE run_id = ?1 AND problem_id = ?2 AND id IS NOT ?3",
		  exclude, &calls, err) < 0 ||
	    count(P, "SELECT SUM(COALESCE(prompt_tokens,0) + COALESCE(completion_tokens,0)) FROM llm_calls "
		     "WHERE run_id = ?1 AND problem_id = ?2 AND id IS NOT ?3", exclude, &tokens, err) < 0 ||
	    count(P, "SELECT COUNT(*) FROM ideas WHERE run_id = ?1 AND problem_id = ?2 AND llm_call_id IS NOT ?3",
		  exclude, &ideas, err) < 0 ||
	    count(P, "SELECT COUNT(*) FROM candidates WHERE run_id = ?1 AND problem_id = ?2 AND llm_call_id IS NOT ?3",
		  exclude, &impls, err) < 0)
		return -1;
	*ideas_left = B->ideas ? (int)(B->ideas - ideas) : INT_MAX;
	*impls_left = B->impls ? (int)(B->impls - impls) : INT_MAX;
	if ((B->llm_calls && calls >= B->llm_calls) || (B->tokens && tokens >= B->tokens) ||
	    *ideas_left <= 0 || *impls_left <= 0)
		return SP_BUDGET;
	return 0;
}

int sdb_round_state(struct sproblem *P, int round, struct buf *err)
{
	json_t *row = NULL, *pa = json_pack("[s,s,i]", P->S->run_id, P->ref->id, round);
	int r = store_query_one(&P->st,
				"SELECT status FROM rounds WHERE run_id = ? AND problem_id = ? AND round = ?",
				pa, &row, err);
	json_decref(pa);
	if (r < 0)
		return -1;
	r = !row ? 0 : strcmp(jget_str(row, "status", ""), "done") ? 1 : 2;
	json_decref(row);
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
	json_t *pa = json_pack("[s,s,s,s]", P->S->run_id, P->ref->id, P->S->gpu,
			       P->S->cfg->protocol);
	json_t *r = store_query_all(
		&P->st,
		"SELECT c.id, c.round, c.idea_id, c.impl_index, c.status, c.kernel_hash, c.template_id,"
		" c.params, c.detail, k.source, e.time_mean_ms, s.speedup_eager"
		" FROM candidates c LEFT JOIN kernels k ON k.hash = c.kernel_hash"
		" LEFT JOIN evals e ON e.kernel_hash = c.kernel_hash AND e.problem_id = c.problem_id"
		"  AND e.gpu_name = ?3 AND e.protocol = ?4"
		" LEFT JOIN eval_speedups s ON s.eval_id = e.id"
		" WHERE c.run_id = ?1 AND c.problem_id = ?2 ORDER BY c.round, c.rowid",
		pa, err);
	json_decref(pa);
	return r;
}

json_t *sdb_candidate_at(struct sproblem *P, int round, const char *idea_id, int impl,
			 struct buf *err)
{
	json_t *row = NULL, *pa = json_pack("[s,s,i,s?,i]", P->S->run_id, P->ref->id, round, idea_id,
					    impl);
	store_query_one(&P->st,
			"SELECT id, status, kernel_hash, detail FROM candidates WHERE run_id = ? AND"
			" problem_id = ? AND round = ? AND idea_id IS ? AND impl_index = ?",
			pa, &row, err);
	json_decref(pa);
	return row;
}

static json_t *idea_rows(struct sproblem *P, const char *where, int round, struct buf *err)
{
	struct buf sql = BUF_INIT;
	json_t *pa = json_pack("[s,s,i]", P->S->run_id, P->ref->id, round), *rows, *r;
	size_t i;

	buf_addf(&sql,
		 "SELECT i.id, i.round, i.text, i.catalogue_id,"
		 " (SELECT group_concat(category) FROM idea_categories WHERE idea_id = i.id) AS cats"
		 " FROM ideas i WHERE i.run_id = ?1 AND i.problem_id = ?2 AND %s ORDER BY i.round, i.rowid",
		 where);
	rows = store_query_all(&P->st, sql.s, pa, err);
	json_decref(pa);
	buf_release(&sql);
	if (!rows)
		return NULL;
	json_array_foreach(rows, i, r) {
		unsigned bits = 0;
		const char *cats = jget_str(r, "cats", "");
		char *copy = strdup(cats), *save = NULL, *t;
		if (!copy)
			abort();
		for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
			bits |= (unsigned)idea_category_parse(t);
		free(copy);
		json_object_set_new(r, "categories", json_integer(bits));
	}
	return rows;
}

json_t *sdb_ideas(struct sproblem *P, int round, struct buf *err)
{
	return idea_rows(P, "i.round = ?3", round, err);
}

json_t *sdb_history(struct sproblem *P, int round, struct buf *err)
{
	json_t *ideas = idea_rows(P, "i.round < ?3", round, err), *cands, *idea, *c;
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
	return strcmp(jget_str(x, "id", ""), jget_str(y, "id", ""));
}

void sdb_rank(json_t *arr)
{
	size_t n = json_array_size(arr);
	json_t **v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		abort();
	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(arr, i));
	qsort(v, n, sizeof(*v), cmp_cand);
	json_array_clear(arr);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, v[i]);
	free(v);
}

int sdb_put_ideas(struct sproblem *P, const char *call_id, int round,
		  const struct proposer_record *rec, const struct idea_list *ideas, int n,
		  const json_t *parent_ideas, struct buf *err)
{
	struct buf parents = BUF_INIT;
	char now[32];
	int r = -1;

	json_add_compact(&parents, parent_ideas);
	store_now(now);
	if (store_begin(&P->st, err) < 0)
		goto out;
	r = sdb_put_call(P, call_id, round, "ideas", rec, err);
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
		row = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:s?,s:s,s:s,s:s}", "id", id, "run_id",
				P->S->run_id, "problem_id", P->ref->id, "round", round, "text", it->text,
				"source", P->S->prop->name && !strcmp(P->S->prop->name, "llm") ? "llm" : "builtin",
				"catalogue_id", it->catalogue_id, "parent_ids", parents.s, "llm_call_id",
				call_id, "created_at", now);
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

static int kernel_exists(struct sproblem *P, const char *hash, struct buf *err)
{
	long long n = 0;
	json_t *pa = json_pack("[s]", hash);
	int r = store_query_int(&P->st, "SELECT COUNT(*) FROM kernels WHERE hash = ?", pa, 0, &n, err);
	json_decref(pa);
	return r < 0 ? -1 : n > 0;
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
		if (P->S->be->eval(P->S->be->ctx, P->ref->id, source, &o, err) < 0)
			goto out;
		status = o.status[0] ? o.status : "runtime_error";
		buf_add(&detail, o.detail.s, o.detail.len > SEARCH_DETAIL_MAX ? SEARCH_DETAIL_MAX : o.detail.len);
		if (o.failed_check[0]) {
			buf_addf(&ptext, "%s: %s", o.failed_check, detail.s);
			buf_reset(&detail);
			buf_add(&detail, ptext.s, ptext.len);
			buf_reset(&ptext);
		}
		if (o.kernel_hash[0]) {
			int k = kernel_exists(P, o.kernel_hash, err);
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
	row = json_pack("{s:s,s:s,s:s,s:i,s:s?,s:i,s:s?,s:s,s:s?,s:s?,s:s?,s:s,s:s,s:s}", "id", id,
			"run_id", P->S->run_id, "problem_id", P->ref->id, "round", round, "idea_id",
			idea_id, "impl_index", impl, "kernel_hash", hash, "parent_ids", ptext.s,
			"template_id", template_id, "params", params ? prm.s : NULL, "llm_call_id",
			call_id, "status", status, "detail", detail.s, "created_at", now);
	if (store_begin(&P->st, err) < 0)
		goto out;
	r = store_insert(&P->st, "candidates", row, STORE_IGNORE, err);
	if (r < 0 || store_commit(&P->st, err) < 0) {
		store_rollback(&P->st);
		r = -1;
		goto out;
	}
	correct = !strcmp(status, "correct");
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
