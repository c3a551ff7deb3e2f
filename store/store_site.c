#include "store_site.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "core/json.h"
#include "store_lineage.h"
#include "store_verify.h"

/* A candidate's time: its fastest correct collection evaluation on the
 * GPU of its run (verification runs are kept apart: they are another
 * protocol on possibly another GPU). */
#define CAND_TIME \
	"(SELECT MIN(e.time_mean_ms) FROM evals e WHERE e.kernel_hash = c.kernel_hash" \
	" AND +e.problem_id = c.problem_id AND +e.gpu_name = r.gpu_name AND +e.status = 'correct'" \
	" AND e.protocol NOT LIKE 'verify%' AND e.time_mean_ms > 0)"
#define CAND_EAGER \
	"(SELECT b.mean_ms FROM baselines b WHERE b.problem_id = c.problem_id" \
	" AND b.gpu_name = r.gpu_name AND b.variant = 'eager')"
#define COMPILED "c.status NOT IN ('pending', 'format_error', 'compile_error')"
/* Candidates whose correctness a GPU checked (a compile-only run's are
 * 'not_run': "not checked", never "0% correct"). */
#define CHECKED "c.status NOT IN ('pending', 'format_error', 'compile_error', 'not_run')"

static void utf8_clean(struct buf *out, const unsigned char *s, size_t len)
{
	static const char repl[] = "\xEF\xBF\xBD";
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n = 0;
		unsigned int cp = 0, min = 0;

		if (c == 0) {
			buf_adds(out, repl);
			i++;
			continue;
		}
		if (c < 0x80) {
			buf_addc(out, (char)c);
			i++;
			continue;
		}
		if ((c & 0xE0) == 0xC0) {
			n = 1; cp = c & 0x1F; min = 0x80;
		} else if ((c & 0xF0) == 0xE0) {
			n = 2; cp = c & 0x0F; min = 0x800;
		} else if ((c & 0xF8) == 0xF0) {
			n = 3; cp = c & 0x07; min = 0x10000;
		}
		if (!n) {
			buf_adds(out, repl);
			i++;
			continue;
		}
		size_t k;
		for (k = 1; k <= n; k++) {
			if (i + k >= len || (s[i + k] & 0xC0) != 0x80)
				break;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if (k <= n || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
			buf_adds(out, repl);
			i++;
			continue;
		}
		buf_add(out, s + i, n + 1);
		i += n + 1;
	}
}

json_t *store_site_text(const char *s, size_t len)
{
	struct buf b = BUF_INIT;
	json_t *v;

	utf8_clean(&b, (const unsigned char *)s, len);
	v = json_stringn_nocheck(b.s, b.len);
	buf_release(&b);
	return v;
}

static json_t *row_json(sqlite3_stmt *st)
{
	json_t *o = json_object();
	int n = sqlite3_column_count(st);

	for (int i = 0; i < n; i++) {
		const char *name = sqlite3_column_name(st, i);
		json_t *v;

		switch (sqlite3_column_type(st, i)) {
		case SQLITE_INTEGER:
			v = json_integer(sqlite3_column_int64(st, i));
			break;
		case SQLITE_FLOAT: {
			double d = sqlite3_column_double(st, i);
			v = isfinite(d) ? json_real(d) : json_null();
			break;
		}
		case SQLITE_TEXT:
			v = store_site_text((const char *)sqlite3_column_text(st, i),
					    (size_t)sqlite3_column_bytes(st, i));
			break;
		default:
			v = json_null();
		}
		json_object_set_new(o, name, v);
	}
	return o;
}

static int db_fail(struct store_site *ss, struct buf *err, const char *what)
{
	return kf_err(err, "store: %s: %s", what, sqlite3_errmsg(ss->s->db));
}

/* Binds NULL-ended text params, steps every row into a new array. */
static json_t *run_stmt(struct store_site *ss, sqlite3_stmt *st, const char *const *params,
			struct buf *err)
{
	json_t *arr = json_array();
	int rc;

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	for (int i = 0; params && params[i]; i++)
		sqlite3_bind_text(st, i + 1, params[i], -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(arr, row_json(st));
	if (rc != SQLITE_DONE) {
		db_fail(ss, err, "query");
		json_decref(arr);
		arr = NULL;
	}
	sqlite3_reset(st);
	return arr;
}

static json_t *query(struct store_site *ss, const char *sql, const char *const *params,
		     struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *arr;

	if (sqlite3_prepare_v2(ss->s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_fail(ss, err, "prepare");
		return NULL;
	}
	arr = run_stmt(ss, st, params, err);
	sqlite3_finalize(st);
	return arr;
}

static json_t *query_one(struct store_site *ss, const char *sql, const char *const *params,
			 struct buf *err)
{
	json_t *arr = query(ss, sql, params, err), *o;

	if (!arr)
		return NULL;
	o = json_array_get(arr, 0);
	o = o ? json_incref(o) : json_object();
	json_decref(arr);
	return o;
}

static const char *const cached_sql[SS_N] = {
	[SS_KERNEL] = "SELECT hash, source, bytes, created_at FROM kernels WHERE hash = ?",
	[SS_KCOMPILES] = "SELECT id, arch, options, nvrtc_version, status, message, log,"
		" duration_ms, created_at FROM compiles WHERE kernel_hash = ? ORDER BY created_at, id",
	[SS_KCKERNELS] = "SELECT kernel_name, registers, shared_bytes, spill_store_bytes,"
		" spill_load_bytes, stack_bytes, const_bytes FROM compile_kernels"
		" WHERE compile_id = ? ORDER BY kernel_name",
	[SS_KEVALS] = "SELECT e.id, e.problem_id, e.gpu_name, e.protocol, e.status, e.failed_check,"
		" e.detail, e.max_abs_err, e.max_rel_err, e.mismatches, e.time_mean_ms,"
		" e.time_median_ms, e.time_std_ms, e.time_min_ms, e.time_max_ms, e.cupti_mean_ms,"
		" e.n_trials, json_extract(e.env, '$.pruned.decided_after') AS pruned_after,"
		" e.created_at, be.mean_ms AS eager_ms, bc.mean_ms AS compile_ms,"
		" p.flops, p.min_bytes, g.peak_bw_gbs, g.peak_fp32_tflops"
		" FROM evals e JOIN problems p ON p.id = e.problem_id"
		" LEFT JOIN gpus g ON g.name = e.gpu_name"
		" LEFT JOIN baselines be ON be.problem_id = e.problem_id AND be.gpu_name = e.gpu_name"
		"  AND be.variant = 'eager'"
		" LEFT JOIN baselines bc ON bc.problem_id = e.problem_id AND bc.gpu_name = e.gpu_name"
		"  AND bc.variant = 'compile'"
		" WHERE e.kernel_hash = ? ORDER BY e.problem_id, e.gpu_name, e.protocol, e.created_at",
	[SS_KVERIFS] = "SELECT id, eval_id, problem_id, gpu_name, protocol, verdict, failed_check,"
		" review_flags, sanitizer, env, kforge_version, created_at FROM verifications"
		" WHERE kernel_hash = ? ORDER BY problem_id, gpu_name, created_at",
	[SS_KCANDS] = "SELECT c.id, c.problem_id, c.run_id, c.round, c.status, c.idea_id,"
		" i.text AS idea_text, r.proposer, r.model FROM candidates c"
		" LEFT JOIN ideas i ON i.id = c.idea_id LEFT JOIN runs r ON r.id = c.run_id"
		" WHERE c.kernel_hash = ? ORDER BY c.problem_id, c.run_id, c.round, c.id",
};

int store_site_init(struct store_site *ss, struct store *s, struct buf *err)
{
	memset(ss, 0, sizeof(*ss));
	ss->s = s;
	/* Reads only: map the file (up to 1 GiB) instead of copying pages;
	 * mapped pages are the page cache's, not this process's memory. */
	sqlite3_exec(s->db, "PRAGMA mmap_size = 1073741824; PRAGMA cache_size = -16384",
		     NULL, NULL, NULL);
	for (int i = 0; i < SS_N; i++)
		if (sqlite3_prepare_v3(s->db, cached_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
				       &ss->st[i], NULL) != SQLITE_OK) {
			db_fail(ss, err, "prepare");
			store_site_release(ss);
			return -1;
		}
	return 0;
}

void store_site_release(struct store_site *ss)
{
	for (int i = 0; i < SS_N; i++)
		if (ss->st[i])
			sqlite3_finalize(ss->st[i]);
	memset(ss, 0, sizeof(*ss));
}

static json_t *cached(struct store_site *ss, int which, const char *param, struct buf *err)
{
	const char *p[2] = { param, NULL };

	return run_stmt(ss, ss->st[which], p, err);
}

json_t *store_site_kernel(struct store_site *ss, const char *hash, struct buf *err)
{
	json_t *k = cached(ss, SS_KERNEL, hash, err), *o = NULL, *comps = NULL, *v;
	size_t i;

	if (!k)
		return NULL;
	if (!json_array_size(k)) {
		json_decref(k);
		buf_reset(err);
		return NULL;
	}
	o = json_object();
	json_object_set(o, "kernel", json_array_get(k, 0));
	json_decref(k);
	comps = cached(ss, SS_KCOMPILES, hash, err);
	if (!comps)
		goto fail;
	json_array_foreach(comps, i, v) {
		json_t *ck = cached(ss, SS_KCKERNELS, jget_str(v, "id", ""), err);
		if (!ck)
			goto fail;
		json_object_set_new(v, "kernels", ck);
	}
	json_object_set_new(o, "compiles", comps);
	comps = NULL;
	static const struct { int which; const char *key; } rest[] = {
		{ SS_KEVALS, "evals" }, { SS_KVERIFS, "verifications" }, { SS_KCANDS, "candidates" },
	};
	for (i = 0; i < sizeof(rest) / sizeof(rest[0]); i++) {
		json_t *a = cached(ss, rest[i].which, hash, err);
		if (!a)
			goto fail;
		json_object_set_new(o, rest[i].key, a);
	}
	return o;
fail:
	json_decref(comps);
	json_decref(o);
	return NULL;
}

int store_site_each_kernel(struct store_site *ss, const char *lo, const char *hi,
			   int (*cb)(void *ctx, const char *hash), void *ctx, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(ss->s->db, "SELECT hash FROM kernels WHERE (?1 IS NULL OR hash >= ?1)"
			       " AND (?2 IS NULL OR hash < ?2) ORDER BY hash", -1, &st,
			       NULL) != SQLITE_OK)
		return db_fail(ss, err, "prepare");
	if (lo)
		sqlite3_bind_text(st, 1, lo, -1, SQLITE_TRANSIENT);
	if (hi)
		sqlite3_bind_text(st, 2, hi, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *h = (const char *)sqlite3_column_text(st, 0);
		if (h && (ret = cb(ctx, h)) != 0)
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_fail(ss, err, "kernels");
	sqlite3_finalize(st);
	return ret;
}

static long long count(struct store_site *ss, const char *sql, struct buf *err, int *bad)
{
	long long v = 0;

	if (store_query_int(ss->s, sql, NULL, 0, &v, err) < 0)
		*bad = 1;
	return v;
}

json_t *store_site_overview(struct store_site *ss, struct buf *err)
{
	static const struct { const char *key, *sql; } counts[] = {
		{ "problems", "SELECT COUNT(*) FROM problems" },
		{ "kernels", "SELECT COUNT(*) FROM kernels" },
		{ "candidates", "SELECT COUNT(*) FROM candidates" },
		{ "ideas", "SELECT COUNT(*) FROM ideas" },
		{ "compiled", "SELECT COUNT(*) FROM candidates c WHERE " COMPILED },
		{ "correct", "SELECT COUNT(*) FROM candidates WHERE status = 'correct'" },
		{ "checked", "SELECT COUNT(*) FROM candidates c WHERE " CHECKED },
		{ "rounds", "SELECT COUNT(*) FROM rounds" },
		{ "llm_calls", "SELECT COUNT(*) FROM llm_calls" },
		/* total(), not SUM(): any integers the store holds add up
		 * without "integer overflow" (CAST saturates) */
		{ "prompt_tokens", "SELECT CAST(total(prompt_tokens) AS INTEGER) FROM llm_calls" },
		{ "completion_tokens", "SELECT CAST(total(completion_tokens) AS INTEGER) FROM llm_calls" },
		/* Kernel-GPU pairs with a verdict (the latest of each), as "verified" counts. */
		{ "verifications", "SELECT COUNT(*) FROM " KF_VERDICTS("verifications") },
		{ "verified", "SELECT COUNT(*) FROM " KF_VERDICTS("verifications")
			      " WHERE " KF_FLAGGED_VERDICT " = 'verified'" },
	};
	json_t *o = json_object(), *a;
	int bad = 0;

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]) && !bad; i++)
		json_object_set_new(o, counts[i].key, json_integer(count(ss, counts[i].sql, err, &bad)));
	if (bad)
		goto fail;
	a = query(ss, "SELECT g.*, (SELECT COUNT(*) FROM evals e WHERE e.gpu_name = g.name) AS evals,"
		  " (SELECT COUNT(*) FROM verifications v WHERE v.gpu_name = g.name) AS verifications"
		  " FROM gpus g ORDER BY g.name", NULL, err);
	if (!a)
		goto fail;
	json_object_set_new(o, "gpus", a);
	a = query(ss, "SELECT r.proposer, r.model, COUNT(DISTINCT r.id) AS runs,"
		  " COUNT(c.id) AS candidates, COALESCE(SUM(" COMPILED "), 0) AS compiled,"
		  " COALESCE(SUM(c.status = 'correct'), 0) AS correct,"
		  " COALESCE(SUM(" CHECKED "), 0) AS checked"
		  " FROM runs r LEFT JOIN candidates c ON c.run_id = r.id"
		  " GROUP BY r.proposer, r.model ORDER BY r.proposer, r.model", NULL, err);
	if (!a)
		goto fail;
	json_object_set_new(o, "proposers", a);
	a = query(ss, "SELECT id, created_at, finished_at, status, strategy, proposer, model, seed,"
		  " gpu_name, kforge_version FROM runs ORDER BY created_at, id", NULL, err);
	if (!a)
		goto fail;
	json_object_set_new(o, "runs", a);
	return o;
fail:
	json_decref(o);
	return NULL;
}

json_t *store_site_problems(struct store_site *ss, struct buf *err)
{
	return query(ss,
		"SELECT p.id, p.level, p.number, p.name, p.kernelbench_file, p.family, p.op,"
		" p.flops, p.min_bytes, json_extract(p.spec, '$.degenerate') AS degenerate,"
		" json_extract(p.spec, '$.ill_conditioned') AS ill_conditioned,"
		" (SELECT COUNT(*) FROM candidates c WHERE c.problem_id = p.id) AS candidates,"
		" (SELECT COUNT(*) FROM candidates c WHERE c.problem_id = p.id AND " COMPILED ") AS compiled,"
		" (SELECT COUNT(*) FROM candidates c WHERE c.problem_id = p.id AND c.status = 'correct') AS correct,"
		" (SELECT COUNT(*) FROM candidates c WHERE c.problem_id = p.id AND " CHECKED ") AS checked,"
		" (SELECT COUNT(DISTINCT c.kernel_hash) FROM candidates c WHERE c.problem_id = p.id) AS kernels,"
		" (SELECT COUNT(*) FROM (SELECT DISTINCT c.run_id, c.round FROM candidates c"
		"  WHERE c.problem_id = p.id)) AS rounds"
		" FROM problems p ORDER BY p.level, p.number, p.id", NULL, err);
}

#define BEST_SQL(F) \
	"WITH v AS (SELECT kernel_hash, problem_id, gpu_name, " KF_FLAGGED_VERDICT " AS verdict," \
	"  eval_id FROM " KF_VERDICTS("verifications") " WHERE " F ")," \
	" c AS (SELECT problem_id, gpu_name, kernel_hash, MIN(time_mean_ms) AS t FROM evals" \
	"  WHERE status = 'correct' AND time_mean_ms > 0 AND " F \
	"  GROUP BY problem_id, gpu_name, kernel_hash)," \
	" s AS (SELECT c.problem_id, c.gpu_name, c.kernel_hash, v.verdict," \
	"  CASE WHEN v.verdict = 'verified' AND ve.time_mean_ms > 0 THEN ve.time_mean_ms" \
	"   ELSE c.t END AS t" \
	"  FROM c LEFT JOIN v ON v.kernel_hash = c.kernel_hash AND v.problem_id = c.problem_id" \
	"   AND v.gpu_name = c.gpu_name LEFT JOIN evals ve ON ve.id = v.eval_id" \
	"  WHERE v.verdict IS NULL OR v.verdict = 'verified')," \
	" hv AS (SELECT DISTINCT problem_id, gpu_name FROM s WHERE verdict = 'verified')," \
	" r AS (SELECT s.*, ROW_NUMBER() OVER (PARTITION BY s.problem_id, s.gpu_name" \
	"   ORDER BY s.t, s.kernel_hash) AS rn FROM s" \
	"  WHERE s.verdict = 'verified' OR NOT EXISTS (SELECT 1 FROM hv" \
	"   WHERE hv.problem_id = s.problem_id AND hv.gpu_name = s.gpu_name))" \
	" SELECT r.problem_id, r.gpu_name, r.kernel_hash, r.verdict, r.t AS time_ms," \
	"  be.mean_ms AS eager_ms, bc.mean_ms AS compile_ms," \
	"  be.mean_ms / r.t AS speedup_eager, bc.mean_ms / r.t AS speedup_compile" \
	" FROM r LEFT JOIN baselines be ON be.problem_id = r.problem_id" \
	"  AND be.gpu_name = r.gpu_name AND be.variant = 'eager'" \
	" LEFT JOIN baselines bc ON bc.problem_id = r.problem_id" \
	"  AND bc.gpu_name = r.gpu_name AND bc.variant = 'compile'" \
	" WHERE r.rn = 1 ORDER BY r.problem_id, r.gpu_name"
static const char best_sql_all[] = BEST_SQL("1");
/* With a problem, the filter lets SQLite use evals_by_problem. */
static const char best_sql_one[] = BEST_SQL("problem_id = ?1");

json_t *store_site_best(struct store_site *ss, const char *problem_id, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	json_t *arr;

	if (sqlite3_prepare_v2(ss->s->db, problem_id ? best_sql_one : best_sql_all, -1, &st,
			       NULL) != SQLITE_OK) {
		db_fail(ss, err, "prepare");
		return NULL;
	}
	arr = json_array();
	if (problem_id)
		sqlite3_bind_text(st, 1, problem_id, -1, SQLITE_STATIC);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(arr, row_json(st));
	if (rc != SQLITE_DONE) {
		db_fail(ss, err, "best kernels");
		json_decref(arr);
		arr = NULL;
	}
	sqlite3_finalize(st);
	return arr;
}

json_t *store_site_flagged(struct store_site *ss, struct buf *err)
{
	static const char sql[] =
		"SELECT v.problem_id, v.gpu_name, v.kernel_hash, v.review_flags, v.protocol,"
		" v.created_at, e.time_mean_ms AS time_ms FROM " KF_VERDICTS("verifications") " v"
		" LEFT JOIN evals e ON e.id = v.eval_id"
		" WHERE " KF_FLAGGED_VERDICT " = 'flagged' ORDER BY v.problem_id, v.gpu_name, v.kernel_hash";
	sqlite3_stmt *st = NULL;
	json_t *arr;
	int rc;

	if (sqlite3_prepare_v2(ss->s->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_fail(ss, err, "prepare");
		return NULL;
	}
	arr = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(arr, row_json(st));
	if (rc != SQLITE_DONE) {
		db_fail(ss, err, "flagged kernels");
		json_decref(arr);
		arr = NULL;
	}
	sqlite3_finalize(st);
	return arr;
}

json_t *store_site_rounds(struct store_site *ss, const char *problem_id, struct buf *err)
{
	const char *p[] = { problem_id, NULL };

	return query(ss,
		"SELECT c.run_id, c.round, r.gpu_name, COUNT(*) AS candidates,"
		" SUM(" COMPILED ") AS compiled, SUM(c.status = 'correct') AS correct,"
		" SUM(" CHECKED ") AS checked, MIN(" CAND_TIME ") AS best_ms, " CAND_EAGER " AS eager_ms,"
		" (SELECT x.best_candidate FROM rounds x WHERE x.run_id = c.run_id"
		"  AND x.problem_id = c.problem_id AND x.round = c.round) AS best_candidate"
		" FROM candidates c JOIN runs r ON r.id = c.run_id"
		" WHERE c.problem_id = ?1 GROUP BY c.run_id, c.round ORDER BY c.run_id, c.round", p, err);
}

json_t *store_site_candidates(struct store_site *ss, const char *problem_id, struct buf *err)
{
	const char *p[] = { problem_id, NULL };

	return query(ss,
		"SELECT c.id, c.run_id, c.round, c.idea_id, i.text AS idea_text, c.impl_index,"
		" c.kernel_hash, c.parent_ids, c.status, c.detail, " CAND_TIME " AS time_ms,"
		" " CAND_EAGER " AS eager_ms"
		" FROM candidates c JOIN runs r ON r.id = c.run_id LEFT JOIN ideas i ON i.id = c.idea_id"
		" WHERE c.problem_id = ?1 ORDER BY c.run_id, c.round, c.idea_id, c.impl_index, c.id",
		p, err);
}

json_t *store_site_categories(struct store_site *ss, struct buf *err)
{
	return query(ss,
		"SELECT ic.category, COUNT(DISTINCT ic.idea_id) AS ideas, COUNT(c.id) AS candidates,"
		" COALESCE(SUM(" COMPILED "), 0) AS compiled,"
		" COALESCE(SUM(c.status = 'correct'), 0) AS correct,"
		" COALESCE(SUM(" CHECKED "), 0) AS checked,"
		/* a round's best counts only when it is a correct kernel */
		" (SELECT COUNT(*) FROM rounds x JOIN candidates bc ON bc.id = x.best_candidate"
		"  JOIN idea_categories y ON y.idea_id = bc.idea_id"
		"  WHERE y.category = ic.category AND bc.status = 'correct') AS round_bests"
		" FROM idea_categories ic LEFT JOIN candidates c ON c.idea_id = ic.idea_id"
		" GROUP BY ic.category ORDER BY ic.category", NULL, err);
}

int store_site_each_category_speedup(struct store_site *ss,
				     int (*cb)(void *ctx, const char *category, double speedup),
				     void *ctx, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(ss->s->db,
		"SELECT ic.category, " CAND_EAGER " / " CAND_TIME " FROM idea_categories ic"
		" JOIN candidates c ON c.idea_id = ic.idea_id JOIN runs r ON r.id = c.run_id"
		" WHERE c.status = 'correct'", -1, &st, NULL) != SQLITE_OK)
		return db_fail(ss, err, "prepare");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 1) == SQLITE_NULL)
			continue;
		const char *cat = (const char *)sqlite3_column_text(st, 0);
		if (cat && (ret = cb(ctx, cat, sqlite3_column_double(st, 1))) != 0)
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_fail(ss, err, "category speedups");
	sqlite3_finalize(st);
	return ret;
}

json_t *store_site_category_ideas(struct store_site *ss, int limit, struct buf *err)
{
	char lim[32];
	const char *p[] = { lim, NULL };

	snprintf(lim, sizeof(lim), "%d", limit);
	/* Every idea's results in one pass, then the best per category. */
	return query(ss,
		"WITH st AS (SELECT c.idea_id, COUNT(*) AS candidates,"
		"  SUM(c.status = 'correct') AS correct,"
		"  MAX(" CAND_EAGER " / " CAND_TIME ") AS best_speedup"
		"  FROM candidates c JOIN runs r ON r.id = c.run_id"
		"  WHERE c.idea_id IS NOT NULL GROUP BY c.idea_id),"
		" x AS (SELECT ic.category, i.id AS idea_id, i.problem_id, i.run_id, i.round, i.text,"
		"  COALESCE(st.candidates, 0) AS candidates, COALESCE(st.correct, 0) AS correct,"
		"  st.best_speedup, ROW_NUMBER() OVER (PARTITION BY ic.category"
		"   ORDER BY st.best_speedup IS NULL, st.best_speedup DESC, i.id) AS rn"
		"  FROM idea_categories ic JOIN ideas i ON i.id = ic.idea_id"
		"  LEFT JOIN st ON st.idea_id = i.id)"
		" SELECT * FROM x WHERE rn <= CAST(?1 AS INTEGER) ORDER BY category, rn", p, err);
}

json_t *store_site_methodology(struct store_site *ss, struct buf *err)
{
	static const struct { const char *key, *sql; } parts[] = {
		{ "baselines", "SELECT b.problem_id, b.gpu_name, b.variant, b.mean_ms, b.median_ms,"
		  " b.std_ms, b.num_trials, b.source FROM baselines b"
		  " ORDER BY b.problem_id, b.gpu_name, b.variant" },
		{ "protocols", "SELECT protocol, protocol_params, COUNT(*) AS evals FROM evals"
		  " GROUP BY protocol, protocol_params ORDER BY protocol, protocol_params" },
		{ "kforge_versions", "SELECT DISTINCT kforge_version AS version FROM runs"
		  " UNION SELECT DISTINCT kforge_version FROM verifications ORDER BY 1" },
		{ "nvrtc_versions", "SELECT DISTINCT nvrtc_version AS version FROM compiles"
		  " WHERE nvrtc_version IS NOT NULL ORDER BY 1" },
		{ "tolerances", "SELECT json_extract(spec, '$.tolerance') AS tolerance,"
		  " COUNT(*) AS problems FROM problems GROUP BY 1 ORDER BY 1" },
		{ "gpus", "SELECT * FROM gpus ORDER BY name" },
	};
	json_t *o = json_object();

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		json_t *a = query(ss, parts[i].sql, NULL, err);
		if (!a) {
			json_decref(o);
			return NULL;
		}
		json_object_set_new(o, parts[i].key, a);
	}
	return o;
}

json_t *store_site_report(struct store_site *ss, const char *problem_id, struct buf *err)
{
	const char *p[] = { problem_id, NULL };
	json_t *o = NULL, *prob, *a;

	prob = query(ss, "SELECT * FROM problems WHERE id = ?1", p, err);
	if (!prob)
		return NULL;
	if (!json_array_size(prob)) {
		json_decref(prob);
		buf_reset(err);
		return NULL;
	}
	o = json_object();
	json_object_set(o, "problem", json_array_get(prob, 0));
	json_decref(prob);
	a = query_one(ss,
		"SELECT COUNT(*) AS candidates, COALESCE(SUM(" COMPILED "), 0) AS compiled,"
		" COALESCE(SUM(c.status = 'correct'), 0) AS correct,"
		" COALESCE(SUM(" CHECKED "), 0) AS checked,"
		" COUNT(DISTINCT c.kernel_hash) AS kernels,"
		/* Rounds that had candidates: one short of untried ideas has none. */
		" (SELECT COUNT(*) FROM (SELECT DISTINCT c2.run_id, c2.round FROM candidates c2"
		"  WHERE c2.problem_id = ?1)) AS rounds"
		" FROM candidates c WHERE c.problem_id = ?1", p, err);
	if (!a)
		goto fail;
	json_object_set_new(o, "stats", a);
	if (!(a = store_site_rounds(ss, problem_id, err)))
		goto fail;
	json_object_set_new(o, "rounds", a);
	if (!(a = store_site_best(ss, problem_id, err)))
		goto fail;
	json_object_set_new(o, "best", a);
	json_t *b0 = json_array_get(a, 0);
	json_t *k = NULL;
	if (b0) {
		k = store_site_kernel(ss, jget_str(b0, "kernel_hash", ""), err);
		if (!k && err->len)
			goto fail;
	}
	json_object_set_new(o, "best_kernel", k ? k : json_null());
	/* issue 41: the best kernel's profile and the ideas that led to it */
	json_t *prof = NULL, *chain = NULL, *c;
	size_t i;
	if (k) {
		const char *gpu = jget_str(b0, "gpu_name", "");
		if (store_kernel_profile(ss->s, jget_str(b0, "kernel_hash", ""), problem_id, gpu, &prof,
					 err) < 0)
			goto fail;
		json_array_foreach(json_object_get(k, "candidates"), i, c)
			if (!strcmp(jget_str(c, "problem_id", ""), problem_id)) {
				chain = store_idea_chain(ss->s, jget_str(c, "id", ""), gpu,
							 STORE_CHAIN_MAX, err);
				if (!chain)
					goto fail;
				break;
			}
	}
	json_object_set_new(o, "best_profile", prof ? prof : json_null());
	json_object_set_new(o, "chain", chain ? chain : json_array());
	return o;
fail:
	json_decref(o);
	return NULL;
}

json_t *store_site_gpu_names(struct store_site *ss, struct buf *err)
{
	/* a compile-only run's evaluations ('not_run', no GPU) name none */
	return json_column(query(ss, "SELECT gpu_name FROM evals WHERE gpu_name <> ''"
				 " AND status <> 'not_run' GROUP BY gpu_name"
				 " ORDER BY COUNT(*) DESC, gpu_name", NULL, err), "gpu_name");
}

int store_site_generated_at(struct store_site *ss, struct buf *out, struct buf *err)
{
	json_t *gen = NULL;

	if (store_query_one(ss->s,
		"SELECT MAX(x) AS t FROM (SELECT MAX(created_at) AS x FROM candidates"
		" UNION ALL SELECT MAX(created_at) FROM verifications"
		" UNION ALL SELECT MAX(created_at) FROM evals)", NULL, &gen, err) < 0)
		return -1;
	buf_reset(out);
	buf_adds(out, jget_str(gen, "t", ""));
	json_decref(gen);
	return 0;
}
