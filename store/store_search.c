#include "store_search.h"
#include "core/json.h"

int store_search_find_run(struct store *s, enum store_run_pick pick, json_t **row,
			  struct buf *err)
{
	static const char *const where[] = {
		[STORE_RUN_UNFINISHED] = "status IN ('running','stopped','failed')",
		[STORE_RUN_NOT_REPLAY] = "json_extract(config, '$.replay') = 0",
	};
	struct buf sql = BUF_INIT;
	int r;

	buf_addf(&sql, "SELECT id, config FROM runs WHERE %s ORDER BY created_at DESC, rowid DESC LIMIT 1",
		 where[pick]);
	r = store_query_one(s, sql.s, NULL, row, err);
	buf_release(&sql);
	return r;
}

int store_search_run_get(struct store *s, const char *run_id, json_t **row, struct buf *err)
{
	json_t *pa = json_pack("[s]", run_id);
	int r = store_query_one(s, "SELECT status, gpu_name FROM runs WHERE id = ?", pa, row, err);
	json_decref(pa);
	return r;
}

int store_search_problem_stats(struct store *s, const char *run_id, const char *problem_id,
			       const char *gpu, const char *protocol, json_t **row,
			       struct buf *err)
{
	json_t *pa = json_pack("[s,s,s,s]", run_id, problem_id, gpu, protocol);
	int r = store_query_one(
		s,
		"SELECT COUNT(*) AS n, SUM(c.status = 'correct') AS ok,"
		" MAX(CASE WHEN c.status = 'correct' THEN s.speedup_eager END) AS sp,"
		" MIN(CASE WHEN c.status = 'correct' THEN e.time_mean_ms END) AS ms,"
		" (SELECT COUNT(*) FROM llm_calls l WHERE l.run_id = ?1 AND l.problem_id = ?2"
		"   AND l.retry_of IS NULL) AS calls,"
		/* total(), not SUM(): no "integer overflow" on any stored count */
		" (SELECT CASE WHEN COUNT(*) THEN"
		"   CAST(total(prompt_tokens) + total(completion_tokens) AS INTEGER) END FROM llm_calls l"
		"   WHERE l.run_id = ?1 AND l.problem_id = ?2 AND l.retry_of IS NULL) AS tokens,"
		" (SELECT COUNT(*) FROM ideas i WHERE i.run_id = ?1 AND i.problem_id = ?2) AS ideas"
		" FROM candidates c LEFT JOIN evals e ON e.kernel_hash = c.kernel_hash"
		"  AND e.problem_id = c.problem_id AND e.gpu_name = ?3 AND e.protocol = ?4"
		" LEFT JOIN eval_speedups s ON s.eval_id = e.id"
		" WHERE c.run_id = ?1 AND c.problem_id = ?2",
		pa, row, err);
	json_decref(pa);
	return r;
}

int store_search_round_status(struct store *s, const char *run_id, const char *problem_id,
			      int round, struct buf *status, struct buf *err)
{
	json_t *row = NULL, *pa = json_pack("[s,s,i]", run_id, problem_id, round);
	int r = store_query_one(s,
				"SELECT status FROM rounds WHERE run_id = ? AND problem_id = ? AND round = ?",
				pa, &row, err);
	json_decref(pa);
	if (r < 0)
		return -1;
	if (!row)
		return 0;
	buf_reset(status);
	buf_adds(status, jget_str(row, "status", ""));
	json_decref(row);
	return 1;
}

json_t *store_search_candidates(struct store *s, const char *run_id, const char *problem_id,
				const char *gpu, const char *protocol, struct buf *err)
{
	json_t *pa = json_pack("[s,s,s,s]", run_id, problem_id, gpu, protocol);
	json_t *r = store_query_all(
		s,
		"SELECT c.id, c.round, c.idea_id, c.impl_index, c.status, c.kernel_hash, c.template_id,"
		/* What the proposer sees: the same across runs, so a replay asks the same. */
		" 'kernel_' || COALESCE(substr(c.kernel_hash, 1, 12), 'none') AS label,"
		" c.params, c.detail, k.source, e.time_mean_ms, s.speedup_eager, e.id AS eval_id"
		" FROM candidates c LEFT JOIN kernels k ON k.hash = c.kernel_hash"
		" LEFT JOIN evals e ON e.kernel_hash = c.kernel_hash AND e.problem_id = c.problem_id"
		"  AND e.gpu_name = ?3 AND e.protocol = ?4"
		" LEFT JOIN eval_speedups s ON s.eval_id = e.id"
		" WHERE c.run_id = ?1 AND c.problem_id = ?2 ORDER BY c.round, c.rowid",
		pa, err);
	json_decref(pa);
	return r;
}

json_t *store_search_kernels_before(struct store *s, const char *run_id, const char *problem_id,
				    int round, struct buf *err)
{
	json_t *pa = json_pack("[s,s,i]", run_id, problem_id, round), *out;

	out = json_column(store_query_all(s,
					  "SELECT DISTINCT kernel_hash FROM candidates WHERE run_id = ? AND"
					  " problem_id = ? AND round < ? AND kernel_hash IS NOT NULL"
					  " ORDER BY kernel_hash", pa, err), "kernel_hash");
	json_decref(pa);
	return out;
}

json_t *store_search_candidate_at(struct store *s, const char *run_id, const char *problem_id,
				  int round, const char *idea_id, int impl, struct buf *err)
{
	json_t *row = NULL, *pa = json_pack("[s,s,i,s?,i]", run_id, problem_id, round, idea_id, impl);
	store_query_one(s,
			"SELECT id, status, kernel_hash, detail FROM candidates WHERE run_id = ? AND"
			" problem_id = ? AND round = ? AND idea_id IS ? AND impl_index = ?",
			pa, &row, err);
	json_decref(pa);
	return row;
}

json_t *store_search_ideas(struct store *s, const char *run_id, const char *problem_id, int round,
			   enum store_ideas_pick pick, struct buf *err)
{
	static const char *const where[] = {
		[STORE_IDEAS_OF_ROUND] = "i.round = ?3",
		[STORE_IDEAS_BEFORE] = "i.round < ?3",
	};
	struct buf sql = BUF_INIT;
	json_t *pa = json_pack("[s,s,i]", run_id, problem_id, round), *rows;

	buf_addf(&sql,
		 "SELECT i.id, i.round, i.text, i.catalogue_id,"
		 " (SELECT group_concat(category) FROM idea_categories WHERE idea_id = i.id) AS cats"
		 " FROM ideas i WHERE i.run_id = ?1 AND i.problem_id = ?2 AND %s ORDER BY i.round, i.rowid",
		 where[pick]);
	rows = store_query_all(s, sql.s, pa, err);
	json_decref(pa);
	buf_release(&sql);
	return rows;
}

int store_search_call_failed(struct store *s, const char *call_id, int *failed, struct buf *err)
{
	json_t *row = NULL, *pa = json_pack("[s]", call_id);
	int r = store_query_one(s, "SELECT error FROM llm_calls WHERE id = ?", pa, &row, err);
	json_decref(pa);
	if (r < 0)
		return -1;
	if (!row)
		return 0;
	*failed = json_is_string(json_object_get(row, "error"));
	json_decref(row);
	return 1;
}

static int count(struct store *s, const char *sql, const char *run_id, const char *problem_id,
		 int round, long long *out, struct buf *err)
{
	json_t *pa = json_pack("[s,s,i]", run_id, problem_id, round);
	int r = store_query_int(s, sql, pa, 0, out, err);
	json_decref(pa);
	return r;
}

int store_search_usage_before(struct store *s, const char *run_id, const char *problem_id,
			      int round, struct store_search_usage *u, struct buf *err)
{
	const char *R = run_id, *P = problem_id;

	/* Budgets count calls, not the failed attempts kept beside them. */
	return count(s, "SELECT COUNT(*) FROM llm_calls WHERE run_id = ?1 AND problem_id = ?2 AND round < ?3"
			" AND retry_of IS NULL", R, P, round, &u->calls, err) < 0 ||
	       count(s, "SELECT CASE WHEN COUNT(*) THEN"
			" CAST(total(prompt_tokens) + total(completion_tokens) AS INTEGER) END FROM llm_calls"
			" WHERE run_id = ?1 AND problem_id = ?2 AND round < ?3 AND retry_of IS NULL", R, P, round,
		     &u->tokens, err) < 0 ||
	       count(s, "SELECT COUNT(*) FROM ideas WHERE run_id = ?1 AND problem_id = ?2 AND round < ?3",
		     R, P, round, &u->ideas, err) < 0 ||
	       count(s, "SELECT COUNT(*) FROM candidates WHERE run_id = ?1 AND problem_id = ?2 AND round < ?3",
		     R, P, round, &u->impls, err) < 0
		       ? -1 : 0;
}

int store_search_tokens(struct store *s, const char *run_id, long long *n, struct buf *err)
{
	json_t *pa = json_pack("[s]", run_id);
	int r = store_query_int(s, "SELECT CASE WHEN COUNT(*) THEN"
				   " CAST(total(prompt_tokens) + total(completion_tokens) AS INTEGER) END"
				   " FROM llm_calls WHERE run_id = ?", pa, 0, n, err);
	json_decref(pa);
	return r;
}

int store_search_cached_response(struct store *s, const char *sha, const char *run_id,
				 struct buf *out, struct buf *err)
{
	json_t *row = NULL, *pa = !run_id ? json_pack("[s]", sha) : json_pack("[s,s]", sha, run_id);
	int r = store_query_one(s,
				!run_id
					? "SELECT response FROM llm_calls WHERE request_sha256 = ?1 AND error IS NULL"
					  " AND response IS NOT NULL ORDER BY created_at, id LIMIT 1"
					: "SELECT response FROM llm_calls WHERE request_sha256 = ?1 AND run_id = ?2"
					  " AND error IS NULL AND response IS NOT NULL ORDER BY created_at, id LIMIT 1",
				pa, &row, err);
	json_decref(pa);
	if (r < 0)
		return -1;
	if (!row)
		return 0;
	buf_reset(out);
	buf_adds(out, jget_str(row, "response", ""));
	json_decref(row);
	return 1;
}
