#include "store_export.h"
#include "store_schema.h"
#include "store_verify.h"
#include "core/json.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- the filtered copy ------------------------------------------------ */

/* Selections live in temp tables; the filter values are bound, never
 * pasted. ?1 = problems JSON array or NULL, ?2 = only_verified. */
static const char sel_sql[] =
	"CREATE TEMP TABLE sel_p(id TEXT PRIMARY KEY);\n"
	"CREATE TEMP TABLE sel_k(hash TEXT PRIMARY KEY);\n"
	"CREATE TEMP TABLE sel_r(id TEXT PRIMARY KEY);\n";
static const char *const sel_fill[] = {
	"INSERT INTO sel_p SELECT id FROM src.problems WHERE ?1 IS NULL"
	" OR id IN (SELECT value FROM json_each(?1))",
	"INSERT INTO sel_k SELECT hash FROM src.kernels WHERE ?1 IS NULL AND NOT ?2",
	"INSERT OR IGNORE INTO sel_k SELECT kernel_hash FROM src.candidates"
	" WHERE ?1 IS NOT NULL AND NOT ?2 AND kernel_hash IS NOT NULL AND problem_id IN sel_p"
	" UNION SELECT kernel_hash FROM src.evals WHERE ?1 IS NOT NULL AND NOT ?2 AND problem_id IN sel_p"
	" UNION SELECT kernel_hash FROM src.verifications WHERE ?1 IS NOT NULL AND NOT ?2"
	"   AND problem_id IN sel_p",
	"INSERT OR IGNORE INTO sel_k SELECT kernel_hash FROM " KF_VERDICTS("src.verifications")
	" WHERE ?2 AND " KF_FLAGGED_VERDICT " = 'verified' AND problem_id IN sel_p",
	"INSERT OR IGNORE INTO sel_r SELECT run_id FROM src.rounds WHERE problem_id IN sel_p"
	" UNION SELECT run_id FROM src.ideas WHERE problem_id IN sel_p"
	" UNION SELECT run_id FROM src.candidates WHERE problem_id IN sel_p"
	" UNION SELECT run_id FROM src.llm_calls WHERE problem_id IN sel_p"
	" UNION SELECT id FROM src.runs WHERE ?1 IS NULL",
	NULL,
};

/* Per table: the WHERE clause over src.<table> when filtering, and the
 * primary key the copy is ordered by. */
static const struct {
	const char *table, *where, *key;
} copy_plan[] = {
	{ "meta", "1", "key" },
	{ "gpus", "1", "name" },
	{ "problems", "id IN sel_p", "id" },
	{ "runs", "id IN sel_r", "id" },
	{ "rounds", "problem_id IN sel_p", "run_id, problem_id, round" },
	{ "llm_calls", "run_id IN sel_r AND (problem_id IN sel_p OR (problem_id IS NULL AND ?1 IS NULL))", "id" },
	{ "ideas", "problem_id IN sel_p", "id" },
	{ "idea_categories", "idea_id IN (SELECT id FROM main.ideas)", "idea_id, category" },
	{ "kernels", "hash IN sel_k", "hash" },
	{ "candidates", "problem_id IN sel_p AND (kernel_hash IN sel_k OR (kernel_hash IS NULL AND NOT ?2))", "id" },
	{ "compiles", "kernel_hash IN sel_k", "id" },
	{ "compile_kernels", "compile_id IN (SELECT id FROM main.compiles)", "compile_id, kernel_name" },
	{ "evals", "problem_id IN sel_p AND kernel_hash IN sel_k", "id" },
	{ "eval_trials", "eval_id IN (SELECT id FROM main.evals)", "eval_id, kind, idx" },
	{ "verifications", "problem_id IN sel_p AND kernel_hash IN sel_k"
	  " AND eval_id IN (SELECT id FROM main.evals)", "id" },
	{ "baselines", "problem_id IN sel_p", "problem_id, gpu_name, variant" },
	{ "profiles", "eval_id IN (SELECT id FROM main.evals)", "eval_id" },
	{ "profile_kernels", "eval_id IN (SELECT eval_id FROM main.profiles)", "eval_id, idx" },
	{ "search_sessions", "run_id IN (SELECT id FROM main.runs) AND (?1 IS NULL OR EXISTS"
	  " (SELECT 1 FROM json_each(problems) j WHERE j.value IN sel_p))", "id" },
};

static int xerr(sqlite3 *db, struct buf *err, const char *what)
{
	return kf_err(err, "export: %s: %s", what, sqlite3_errmsg(db));
}

static int exec(sqlite3 *db, const char *sql, struct buf *err)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		kf_err(err, "export: %s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* Runs one statement with ?1 = problems (text or NULL), ?2 = only_verified. */
static int run_bound(sqlite3 *db, const char *sql, const char *problems, int ov, struct buf *err)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return xerr(db, err, "prepare");
	if (sqlite3_bind_parameter_count(st) >= 1) {
		if (problems)
			sqlite3_bind_text(st, 1, problems, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 1);
	}
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int(st, 2, ov);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return xerr(db, err, "copy");
	return 0;
}

/* The source's columns in the copy's order, NULL for one the source lacks:
 * a store of an older schema, read as it is (read-only, not migrated),
 * packs like a migrated one (migrations only add columns). */
static int copy_columns(sqlite3 *db, const char *table, struct buf *cols, struct buf *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	buf_reset(cols);
	if (sqlite3_prepare_v2(db, "SELECT m.name, s.name IS NOT NULL FROM pragma_table_info(?1, 'main') m"
			       " LEFT JOIN pragma_table_info(?1, 'src') s ON s.name = m.name ORDER BY m.cid",
			       -1, &st, NULL) != SQLITE_OK)
		return xerr(db, err, "columns");
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		buf_addf(cols, "%s%s", cols->len ? ", " : "",
			 sqlite3_column_int(st, 1) ? (const char *)sqlite3_column_text(st, 0) : "NULL");
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE || !cols->len)
		return kf_err(err, "export: no columns for %s: %s", table, sqlite3_errmsg(db));
	return 0;
}

int store_export_copy(const char *src, const char *dst, const struct export_filter *f,
		      struct buf *err)
{
	sqlite3 *db = NULL;
	struct buf sql = BUF_INIT, probs = BUF_INIT;
	sqlite3_stmt *st = NULL;
	const char *pj = NULL;
	int ret = -1;
	char pragma[64];
	struct buf cols = BUF_INIT;

	if (access(dst, F_OK) == 0)
		return kf_err(err, "export: %s exists", dst);
	/* Whole stores too go through the ordered copy, not a page-for-page
	 * backup: the pack of a merge must not depend on the merge's order. */
	if (f && f->problems) {
		json_add_compact(&probs, f->problems);
		pj = probs.s;
	}
	if (sqlite3_open_v2(dst, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		xerr(db, err, "create copy");
		goto out;
	}
	/* Fixed page size and journal: the header then holds nothing that
	 * depends on how or where the copy was made. */
	if (exec(db, "PRAGMA page_size = 4096; PRAGMA journal_mode = DELETE;"
		 " PRAGMA foreign_keys = OFF; PRAGMA synchronous = OFF", err) < 0)
		goto out;
	for (int i = 0; i < store_n_migrations; i++)
		if (exec(db, store_migrations[i].sql, err) < 0)
			goto out;
	snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
	if (exec(db, pragma, err) < 0)
		goto out;
	if (sqlite3_prepare_v2(db, "ATTACH ?1 AS src", -1, &st, NULL) != SQLITE_OK) {
		xerr(db, err, "attach");
		goto out;
	}
	sqlite3_bind_text(st, 1, src, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE) {
		xerr(db, err, "attach");
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (exec(db, "BEGIN", err) < 0 || exec(db, sel_sql, err) < 0)
		goto out;
	for (int i = 0; sel_fill[i]; i++)
		if (run_bound(db, sel_fill[i], pj, f ? f->only_verified : 0, err) < 0)
			goto out;
	for (size_t i = 0; i < sizeof(copy_plan) / sizeof(copy_plan[0]); i++) {
		/* Rows go in primary-key order: stores with the same rows (a merge
		 * of A and B, or of B and A) give the same bytes. */
		if (copy_columns(db, copy_plan[i].table, &cols, err) < 0)
			goto out;
		buf_setf(&sql, "INSERT INTO main.%s SELECT %s FROM src.%s WHERE %s ORDER BY %s",
			 copy_plan[i].table, cols.s, copy_plan[i].table, copy_plan[i].where,
			 copy_plan[i].key);
		if (run_bound(db, sql.s, pj, f ? f->only_verified : 0, err) < 0) {
			kf_err(err, "export: copying %s: %s", copy_plan[i].table, sqlite3_errmsg(db));
			goto out;
		}
	}
	if (exec(db, "DROP TABLE temp.sel_p; DROP TABLE temp.sel_k; DROP TABLE temp.sel_r; COMMIT",
		 err) < 0)
		goto out;
	if (exec(db, "DETACH src", err) < 0)
		goto out;
	ret = 0;
out:
	sqlite3_finalize(st);
	if (db && sqlite3_close(db) != SQLITE_OK && ret == 0)
		ret = kf_err(err, "export: closing the copy failed");
	if (ret < 0)
		unlink(dst);
	buf_release(&sql);
	buf_release(&probs);
	buf_release(&cols);
	return ret;
}

/* ---- ordered reads ----------------------------------------------------- */

static json_t *col_json(sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(st, i));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(st, i));
	case SQLITE_TEXT:
	case SQLITE_BLOB:
		return json_stringn_nocheck((const char *)sqlite3_column_text(st, i),
					    (size_t)sqlite3_column_bytes(st, i));
	default:
		return json_null();
	}
}

static json_t *row_json(sqlite3_stmt *st, const char *skip)
{
	json_t *o = json_object();
	int n = sqlite3_column_count(st);
	for (int i = 0; i < n; i++) {
		const char *name = sqlite3_column_name(st, i);
		if (skip && !strcmp(name, skip))
			continue;
		json_object_set_new_nocheck(o, name, col_json(st, i));
	}
	return o;
}

void store_export_fmt_real(struct buf *b, double v)
{
	json_add_real(b, v);
}

/* Appends one value of a trial column to a JSON array text. */
static void add_trial_value(struct buf *b, sqlite3_stmt *st, int i)
{
	if (b->len > 1)
		buf_addc(b, ',');
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_FLOAT:
		store_export_fmt_real(b, sqlite3_column_double(st, i));
		break;
	case SQLITE_NULL:
		buf_adds(b, "null");
		break;
	default: {
		json_t *v = col_json(st, i);
		json_add_compact(b, v);
		json_decref(v);
	}
	}
}

enum nest_kind { NEST_LIST, NEST_TRIALS };

/* Parent rows (key in column 0) with their children attached; the child
 * statement takes the parent key as ?1. Per-parent lookups rather than a
 * merge-join over the children's key order: children are stored together
 * by parent, so this reads them sequentially instead of one random page
 * per child row. */
static int nested(struct store *s, const char *psql, const char *csql, const char *field,
		  enum nest_kind kind, store_row_cb cb, void *ctx, struct buf *err)
{
	sqlite3_stmt *ps = NULL, *cs = NULL;
	struct buf tm = BUF_INIT, cu = BUF_INIT;
	int prc, crc, ret = 0, cu_vals;

	if (sqlite3_prepare_v2(s->db, psql, -1, &ps, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, csql, -1, &cs, NULL) != SQLITE_OK) {
		ret = xerr(s->db, err, "prepare");
		goto out;
	}
	while ((prc = sqlite3_step(ps)) == SQLITE_ROW) {
		json_t *row = row_json(ps, NULL);
		json_t *list = json_array();
		buf_reset(&tm);
		buf_reset(&cu);
		buf_addc(&tm, '[');
		buf_addc(&cu, '[');
		cu_vals = 0;
		sqlite3_reset(cs);
		sqlite3_bind_value(cs, 1, sqlite3_column_value(ps, 0));
		while ((crc = sqlite3_step(cs)) == SQLITE_ROW) {
			if (kind == NEST_TRIALS && !strcmp((const char *)sqlite3_column_text(cs, 1), "time")) {
				add_trial_value(&tm, cs, 4);
				add_trial_value(&cu, cs, 5);
				cu_vals += sqlite3_column_type(cs, 5) != SQLITE_NULL;
			} else if (kind == NEST_TRIALS) {
				json_t *t = json_object();
				json_object_set_new(t, "idx", col_json(cs, 2));
				json_object_set_new(t, "seed", col_json(cs, 3));
				json_object_set_new(t, "max_abs_err", col_json(cs, 6));
				json_object_set_new(t, "max_rel_err", col_json(cs, 7));
				json_object_set_new(t, "mismatches", col_json(cs, 8));
				json_object_set_new(t, "ok", col_json(cs, 9));
				json_array_append_new(list, t);
			} else {
				json_array_append_new(list, row_json(cs, sqlite3_column_name(cs, 0)));
			}
		}
		json_object_set_new(row, field, list);
		if (kind == NEST_TRIALS) {
			buf_addc(&tm, ']');
			buf_addc(&cu, ']');
			/* No CUPTI time at all: [], not a list of nulls (Arrow's JSON
			 * reader builds invalid offsets for a list that starts with
			 * null, apache/arrow#51305). */
			if (!cu_vals)
				buf_setf(&cu, "[]");
			json_object_set_new(row, "time_trials_ms", json_stringn(tm.s, tm.len));
			json_object_set_new(row, "cupti_trials_ms", json_stringn(cu.s, cu.len));
		}
		if (crc != SQLITE_DONE) {
			json_decref(row);
			ret = xerr(s->db, err, "query");
			goto out;
		}
		ret = cb(ctx, row);
		json_decref(row);
		if (ret)
			goto out;
	}
	if (prc != SQLITE_DONE)
		ret = xerr(s->db, err, "query");
out:
	sqlite3_finalize(ps);
	sqlite3_finalize(cs);
	buf_release(&tm);
	buf_release(&cu);
	return ret;
}

int store_export_rows(struct store *s, const char *table, store_row_cb cb, void *ctx,
		      struct buf *err)
{
	const char *const *key = store_table_key(table);
	struct buf sql = BUF_INIT;
	int ret;

	if (!key)
		return kf_err(err, "export: unknown table '%s'", table);
	if (!strcmp(table, "ideas"))
		return nested(s, "SELECT * FROM ideas ORDER BY id",
			      "SELECT idea_id, category, method FROM idea_categories WHERE idea_id = ?1"
			      " ORDER BY category",
			      "categories", NEST_LIST, cb, ctx, err);
	if (!strcmp(table, "compiles"))
		return nested(s, "SELECT * FROM compiles ORDER BY id",
			      "SELECT * FROM compile_kernels WHERE compile_id = ?1 ORDER BY kernel_name",
			      "kernels", NEST_LIST, cb, ctx, err);
	if (!strcmp(table, "evals"))
		return nested(s, "SELECT e.*, v.speedup_eager, v.speedup_eager_median, v.speedup_compile"
			      " FROM evals e JOIN eval_speedups v ON v.eval_id = e.id ORDER BY e.id",
			      "SELECT eval_id, kind, idx, seed, time_ms, cupti_ms, max_abs_err, max_rel_err,"
			      " mismatches, ok FROM eval_trials WHERE eval_id = ?1 ORDER BY kind, idx",
			      "check_trials", NEST_TRIALS, cb, ctx, err);
	if (!strcmp(table, "profiles"))
		return nested(s, "SELECT * FROM profiles ORDER BY eval_id",
			      "SELECT * FROM profile_kernels WHERE eval_id = ?1 ORDER BY idx",
			      "kernels", NEST_LIST, cb, ctx, err);
	buf_addf(&sql, "SELECT * FROM %s ORDER BY ", table);
	for (int i = 0; key[i]; i++)
		buf_addf(&sql, "%s%s", i ? ", " : "", key[i]);
	ret = store_query(s, sql.s, NULL, cb, ctx, err);
	buf_release(&sql);
	return ret;
}

int store_export_kernel_files(struct store *s, store_row_cb cb, void *ctx, struct buf *err)
{
	return store_query(s,
		"SELECT x.path, x.problem_id, x.kernel_hash, k.source FROM"
		" (SELECT 'kernels/' || problem_id || '/' || kernel_hash || '.cu' AS path, problem_id,"
		"   kernel_hash FROM (SELECT problem_id, kernel_hash FROM candidates"
		"   WHERE kernel_hash IS NOT NULL UNION SELECT problem_id, kernel_hash FROM evals)"
		"   ORDER BY path) x JOIN kernels k ON k.hash = x.kernel_hash ORDER BY x.path",
		NULL, cb, ctx, err);
}

int store_export_correct(struct store *s, store_row_cb cb, void *ctx, struct buf *err)
{
	return store_query(s,
		"SELECT b.*, EXISTS(SELECT 1 FROM " KF_VERDICTS("verifications") " v"
		"   WHERE v.kernel_hash = b.kernel_hash"
		"   AND v.problem_id = b.problem_id AND v.gpu_name = b.gpu_name"
		"   AND " KF_FLAGGED_VERDICT " = 'verified') AS verified,"
		" (SELECT json_group_array(g) FROM (SELECT DISTINCT gpu_name AS g FROM "
		KF_VERDICTS("verifications") " v"
		"   WHERE v.kernel_hash = b.kernel_hash AND v.problem_id = b.problem_id"
		"   AND " KF_FLAGGED_VERDICT " = 'verified' ORDER BY g)) AS verified_gpus,"
		" (SELECT l.request FROM candidates c JOIN llm_calls l ON l.id = c.llm_call_id"
		"   WHERE c.kernel_hash = b.kernel_hash AND c.problem_id = b.problem_id"
		"   ORDER BY c.id LIMIT 1) AS request,"
		" (SELECT source FROM kernels WHERE hash = b.kernel_hash) AS source"
		" FROM (SELECT e.problem_id, e.gpu_name, e.kernel_hash, e.id AS eval_id, e.protocol,"
		"   e.time_mean_ms, e.time_median_ms, v.speedup_eager, v.speedup_compile,"
		"   row_number() OVER (PARTITION BY e.problem_id, e.gpu_name, e.kernel_hash"
		"     ORDER BY e.time_mean_ms, e.id) AS rn"
		"   FROM evals e JOIN eval_speedups v ON v.eval_id = e.id"
		"   WHERE e.status = 'correct' AND e.time_mean_ms > 0 AND e.protocol NOT LIKE 'verify%') b"
		" WHERE b.rn = 1 ORDER BY b.problem_id, b.gpu_name, b.time_mean_ms, b.kernel_hash",
		NULL, cb, ctx, err);
}

int store_export_failed(struct store *s, store_row_cb cb, void *ctx, struct buf *err)
{
	return store_query(s,
		"SELECT e.problem_id, e.gpu_name, e.kernel_hash, min(e.status) AS status,"
		" min(e.failed_check) AS failed_check,"
		" (SELECT source FROM kernels WHERE hash = e.kernel_hash) AS source"
		" FROM evals e WHERE e.status NOT IN ('correct', 'not_run')"
		"  AND e.protocol NOT LIKE 'verify%'"
		" GROUP BY e.problem_id, e.gpu_name, e.kernel_hash"
		" ORDER BY e.problem_id, e.gpu_name, e.kernel_hash",
		NULL, cb, ctx, err);
}

int store_export_trajectory(struct store *s, store_row_cb cb, void *ctx, struct buf *err)
{
	return store_query(s,
		"SELECT c.run_id, c.problem_id, c.round, c.id AS candidate_id, c.idea_id, c.kernel_hash,"
		" c.parent_ids, coalesce(e.status, c.status) AS status, r.gpu_name,"
		" CASE WHEN e.status = 'correct' THEN e.time_mean_ms END AS time_mean_ms,"
		" CASE WHEN e.status = 'correct' THEN v.speedup_eager END AS speedup_eager"
		" FROM candidates c JOIN runs r ON r.id = c.run_id"
		" LEFT JOIN evals e ON e.id = (SELECT x.id FROM evals x WHERE x.kernel_hash = c.kernel_hash"
		"   AND x.problem_id = c.problem_id AND (r.gpu_name IS NULL OR x.gpu_name = r.gpu_name)"
		"   AND x.protocol NOT LIKE 'verify%' ORDER BY x.created_at, x.id LIMIT 1)"
		" LEFT JOIN eval_speedups v ON v.eval_id = e.id"
		" ORDER BY c.run_id, c.problem_id, c.round, c.id",
		NULL, cb, ctx, err);
}

int store_export_count(struct store *s, const char *table, long long *n, struct buf *err)
{
	char sql[96];
	if (!store_table_key(table))
		return kf_err(err, "export: unknown table '%s'", table);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", table);
	return store_query_int(s, sql, NULL, 0, n, err);
}

json_t *store_export_provenance(struct store *s, struct buf *err)
{
	json_t *out = NULL, *gpus = NULL, *row = NULL;

	gpus = store_query_all(s, "SELECT * FROM gpus ORDER BY name", NULL, err);
	if (!gpus)
		return NULL;
	if (store_query_one(s,
		"SELECT (SELECT json_group_array(p) FROM (SELECT protocol AS p FROM evals UNION"
		"   SELECT protocol FROM verifications ORDER BY 1)) AS protocols,"
		" (SELECT json_group_array(v) FROM (SELECT kforge_version AS v FROM runs UNION"
		"   SELECT kforge_version FROM verifications ORDER BY 1)) AS kforge_versions,"
		" (SELECT json_group_array(d) FROM (SELECT DISTINCT driver AS d FROM gpus"
		"   WHERE driver IS NOT NULL ORDER BY 1)) AS drivers,"
		" (SELECT json_group_array(d) FROM (SELECT DISTINCT cuda_version AS d FROM gpus"
		"   WHERE cuda_version IS NOT NULL ORDER BY 1)) AS cuda_versions,"
		" (SELECT min(t) FROM (SELECT min(created_at) AS t FROM runs UNION ALL"
		"   SELECT min(created_at) FROM evals UNION ALL SELECT min(created_at) FROM kernels UNION ALL"
		"   SELECT min(created_at) FROM verifications)) AS first_created_at,"
		" (SELECT max(t) FROM (SELECT max(coalesce(finished_at, created_at)) AS t FROM runs"
		"   UNION ALL SELECT max(created_at) FROM evals UNION ALL SELECT max(created_at) FROM kernels"
		"   UNION ALL SELECT max(created_at) FROM verifications UNION ALL"
		"   SELECT max(imported_at) FROM baselines)) AS last_created_at",
		NULL, &row, err) < 0 || !row) {
		json_decref(gpus);
		return NULL;
	}
	out = json_object();
	json_object_set_new(out, "gpus", gpus);
	json_object_set_new(out, "verified_per_gpu", store_query_all(s,
		"SELECT gpu_name, count(*) AS kernels FROM (SELECT DISTINCT gpu_name, problem_id,"
		" kernel_hash FROM " KF_VERDICTS("verifications") " WHERE " KF_FLAGGED_VERDICT " = 'verified')"
		" GROUP BY gpu_name"
		" ORDER BY gpu_name", NULL, err));
	if (!json_object_get(out, "verified_per_gpu")) {
		json_decref(row);
		json_decref(out);
		return NULL;
	}
	for (const char *const *k = (const char *const[]){ "protocols", "kforge_versions", "drivers",
							  "cuda_versions", NULL }; *k; k++) {
		const char *t = jget_str(row, *k, "[]");
		json_t *v = json_loads(t, 0, NULL);
		json_object_set_new(out, *k, v ? v : json_array());
	}
	json_object_set(out, "first_created_at", json_object_get(row, "first_created_at"));
	json_object_set(out, "last_created_at", json_object_get(row, "last_created_at"));
	json_decref(row);
	return out;
}

json_t *store_export_columns(struct store *s, const char *table, struct buf *err)
{
	char sql[128];
	if (!store_table_key(table)) {
		kf_err(err, "export: unknown table '%s'", table);
		return NULL;
	}
	snprintf(sql, sizeof(sql),
		 "SELECT name, type, \"notnull\", pk FROM pragma_table_info('%s') ORDER BY cid", table);
	return store_query_all(s, sql, NULL, err);
}

json_t *store_export_unknown_problems(struct store *s, const json_t *ids, struct buf *err)
{
	json_t *params = json_array(), *rows;
	struct buf b = BUF_INIT;

	json_add_compact(&b, ids);
	json_array_append_new(params, json_string(b.s));
	rows = store_query_all(s, "SELECT j.value AS id FROM json_each(?1) j"
			       " WHERE j.value NOT IN (SELECT id FROM problems) ORDER BY j.key", params, err);
	json_decref(params);
	buf_release(&b);
	return json_column(rows, "id");
}
