#include "store_merge.h"
#include "store_schema.h"
#include "core/json.h"
#include "core/sha256.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Per-table rules (store_merge.h says why each is what it is). In the SQL
 * fragments s is the source's row, m the merged store's; $S and $M stand
 * for the whole row as JSON text, the last tie-break of every order. */
struct merge_rule {
	const char *table;
	const char *skip;       /* columns not compared (space-separated, padded) */
	const char *resolvable; /* differing rows the rule settles; NULL: conflicts */
	const char *src_wins;   /* the source's row replaces the merged one */
};

#define NEWER_TEXT "$S > $M"
static const struct merge_rule rules[] = {
	{ "kernels", " created_at ", NULL,
	  "s.created_at < m.created_at OR (s.created_at = m.created_at AND $S < $M)" },
	{ "compiles", " log duration_ms created_at ", NULL,
	  "s.created_at < m.created_at OR (s.created_at = m.created_at AND "
	  "(s.duration_ms < m.duration_ms OR (s.duration_ms IS m.duration_ms AND $S < $M)))" },
	{ "runs", NULL,
	  "s.created_at = m.created_at AND s.config IS m.config AND s.seed IS m.seed AND "
	  "s.strategy IS m.strategy AND s.proposer IS m.proposer AND s.model IS m.model",
	  "(s.finished_at IS NOT NULL) > (m.finished_at IS NOT NULL) OR "
	  "((s.finished_at IS NOT NULL) = (m.finished_at IS NOT NULL) AND "
	  "(coalesce(s.finished_at, '') > coalesce(m.finished_at, '') OR "
	  "(s.finished_at IS m.finished_at AND " NEWER_TEXT ")))" },
	{ "rounds", NULL, "s.started_at IS m.started_at AND (s.status = 'open' OR m.status = 'open')",
	  "(s.status = 'done') > (m.status = 'done') OR "
	  "((s.status = 'done') = (m.status = 'done') AND " NEWER_TEXT ")" },
	{ "candidates", NULL,
	  "(s.status = 'pending' OR m.status = 'pending') AND s.kernel_hash IS m.kernel_hash AND "
	  "s.idea_id IS m.idea_id AND s.round = m.round",
	  "(s.status != 'pending') > (m.status != 'pending') OR "
	  "((s.status != 'pending') = (m.status != 'pending') AND " NEWER_TEXT ")" },
	{ "evals", NULL, "1",
	  "(s.status = 'correct') < (m.status = 'correct') OR "
	  "((s.status = 'correct') = (m.status = 'correct') AND "
	  "(s.created_at < m.created_at OR (s.created_at = m.created_at AND $S < $M)))" },
	{ "verifications", NULL, "1", "s.created_at > m.created_at OR (s.created_at = m.created_at AND $S > $M)" },
	{ "baselines", " imported_at ", "1",
	  "s.mean_ms < m.mean_ms OR (s.mean_ms = m.mean_ms AND (s.imported_at < m.imported_at OR "
	  "(s.imported_at IS m.imported_at AND $S < $M)))" },
	{ NULL, NULL, NULL, NULL },
};

/* Tables whose ids are scoped by a run, and their columns that hold such
 * ids (plain, or a JSON array of them): renaming a run renames these. */
struct run_scoped {
	const char *table;
	const char *id_cols[5];
	const char *json_cols[2];
};
static const struct run_scoped scoped[] = {
	{ "runs", { "id", NULL }, { NULL } },
	{ "rounds", { "run_id", "best_candidate", NULL }, { NULL } },
	{ "llm_calls", { "id", "run_id", "retry_of", NULL }, { NULL } },
	{ "ideas", { "id", "run_id", "llm_call_id", NULL }, { "parent_ids", NULL } },
	{ "idea_categories", { "idea_id", NULL }, { NULL } },
	{ "candidates", { "id", "run_id", "idea_id", "llm_call_id", NULL }, { "parent_ids", NULL } },
	{ "search_sessions", { "run_id", NULL }, { NULL } },
	{ NULL, { NULL }, { NULL } },
};

static const struct merge_rule *rule_of(const char *t)
{
	for (const struct merge_rule *r = rules; r->table; r++)
		if (!strcmp(r->table, t))
			return r;
	return NULL;
}

static const struct run_scoped *scoped_of(const char *t)
{
	for (const struct run_scoped *r = scoped; r->table; r++)
		if (!strcmp(r->table, t))
			return r;
	return NULL;
}

static int in_list(const char *const *list, const char *name)
{
	for (int i = 0; list && list[i]; i++)
		if (!strcmp(list[i], name))
			return 1;
	return 0;
}

static int skipped(const struct merge_rule *r, const char *col)
{
	char pad[80];
	if (!r || !r->skip)
		return 0;
	snprintf(pad, sizeof(pad), " %s ", col);
	return strstr(r->skip, pad) != NULL;
}

/* gpus columns resolved by rule rather than compared. */
static int gpus_rule_column(const char *c)
{
	return !strcmp(c, "peak_bw_gbs") || !strcmp(c, "peak_fp32_tflops") || !strcmp(c, "driver") ||
	       !strcmp(c, "cuda_version") || !strcmp(c, "first_seen");
}

/* sql with $S/$M replaced by the rows' JSON text. */
static void add_expanded(struct buf *out, const char *sql, const char *srow, const char *mrow)
{
	for (const char *p = sql; *p; p++) {
		if (p[0] == '$' && (p[1] == 'S' || p[1] == 'M')) {
			buf_adds(out, p[1] == 'S' ? srow : mrow);
			p++;
		} else {
			buf_addc(out, *p);
		}
	}
}

/* The mapped form of an id column / a JSON id list, through temp.<map>. */
static void mapped_col(struct buf *b, const char *alias, const char *col, const char *map, int json)
{
	if (!json) {
		buf_addf(b, "coalesce((SELECT x.new FROM temp.%s x WHERE x.old = %s.%s), %s.%s)", map, alias,
			 col, alias, col);
		return;
	}
	buf_addf(b, "CASE WHEN EXISTS (SELECT 1 FROM json_each(%s.%s) j JOIN temp.%s x ON x.old = j.value) "
		    "THEN (SELECT json_group_array(v) FROM (SELECT coalesce(x.new, j.value) AS v FROM "
		    "json_each(%s.%s) j LEFT JOIN temp.%s x ON x.old = j.value ORDER BY j.key)) ELSE %s.%s END",
		 alias, col, map, alias, col, map, alias, col);
}

static int conflict_cb(void *ctx, json_t *row)
{
	struct buf *out = ctx;
	if (out)
		buf_addf(out, "%s\n", jget_str(row, "d", ""));
	return 0;
}

/* The source side of table t: src.t, or a temp copy with renamed ids. */
static int source_rel(struct store *dst, const char *t, json_t *cols, int have_map, struct buf *rel,
		      struct buf *err)
{
	const struct run_scoped *rs = scoped_of(t);
	struct buf sql = BUF_INIT;
	size_t i;
	json_t *c;
	int r;

	buf_reset(rel);
	if (!rs || !have_map) {
		buf_addf(rel, "src.%s", t);
		return 0;
	}
	buf_addf(&sql, "DROP TABLE IF EXISTS temp.ms_%s; CREATE TEMP TABLE ms_%s AS SELECT ", t, t);
	json_array_foreach(cols, i, c) {
		const char *name = json_string_value(c);
		if (i)
			buf_adds(&sql, ", ");
		if (in_list(rs->id_cols, name))
			mapped_col(&sql, "s", name, "idmap_src", 0);
		else if (in_list(rs->json_cols, name))
			mapped_col(&sql, "s", name, "idmap_src", 1);
		else
			buf_addf(&sql, "s.%s", name);
		buf_addf(&sql, " AS %s", name);
	}
	buf_addf(&sql, " FROM src.%s s", t);
	r = store_exec(dst, sql.s, err);
	buf_release(&sql);
	if (r < 0)
		return -1;
	buf_addf(rel, "temp.ms_%s", t);
	return 0;
}

struct table_sql {
	struct buf on, diff, cmpdiff, srow, mrow, cols;
};

static void table_sql_release(struct table_sql *q)
{
	buf_release(&q->on);
	buf_release(&q->diff);
	buf_release(&q->cmpdiff);
	buf_release(&q->srow);
	buf_release(&q->mrow);
	buf_release(&q->cols);
}

static void table_sql_build(struct table_sql *q, const char *t, json_t *cols)
{
	const char *const *key = store_table_key(t);
	const struct merge_rule *r = rule_of(t);
	size_t i;
	json_t *c;

	memset(q, 0, sizeof(*q));
	for (int k = 0; key[k]; k++)
		buf_addf(&q->on, "%ss.%s = m.%s", k ? " AND " : "", key[k], key[k]);
	buf_adds(&q->srow, "json_array(");
	buf_adds(&q->mrow, "json_array(");
	json_array_foreach(cols, i, c) {
		const char *name = json_string_value(c);
		buf_addf(&q->srow, "%ss.%s", i ? ", " : "", name);
		buf_addf(&q->mrow, "%sm.%s", i ? ", " : "", name);
		buf_addf(&q->cols, "%s%s", i ? ", " : "", name);
		if (in_list(key, name))
			continue;
		buf_addf(&q->diff, "%ss.%s IS NOT m.%s", q->diff.len ? " OR " : "", name, name);
		if (skipped(r, name) || (!strcmp(t, "gpus") && gpus_rule_column(name)))
			continue;
		buf_addf(&q->cmpdiff, "%ss.%s IS NOT m.%s", q->cmpdiff.len ? " OR " : "", name, name);
	}
	buf_addc(&q->srow, ')');
	buf_addc(&q->mrow, ')');
	if (!q->diff.len)
		buf_adds(&q->diff, "0");
	if (!q->cmpdiff.len)
		buf_adds(&q->cmpdiff, "0");
}

/* Rows of eval_trials whose eval the merged store kept over the source's
 * are the source's measurement, not compared and not copied. */
#define TRIALS_KEPT "s.eval_id IN (SELECT id FROM temp.merge_kept)"

/* Profiles follow their evaluation and never conflict. Where the merged
 * store kept its evaluation over a differing source's, it keeps its own
 * profile (or none); where the source's won, the merged one's profile
 * went with its evaluation and the source's is copied; for one
 * evaluation in both, the earlier profile is kept (created_at; the merged
 * store's on a tie), the only one where one store has it. temp.merge_prof:
 * the evaluations whose profile comes from the source. */
static int merge_profiles(struct store *dst, const char *t, json_t *cols, struct merge_stats *st,
			  struct buf *err)
{
	struct buf sql = BUF_INIT, names = BUF_INIT;
	long long nsrc = 0, added = 0;
	size_t i;
	json_t *c;
	int ret = -1;

	json_array_foreach(cols, i, c)
		buf_addf(&names, "%s%s", i ? ", " : "", json_string_value(c));
	if (!strcmp(t, "profiles")) {
		buf_addf(&sql, "INSERT OR IGNORE INTO temp.merge_prof SELECT s.eval_id FROM src.profiles s "
			       "WHERE s.eval_id NOT IN (SELECT id FROM temp.merge_kept) AND NOT EXISTS "
			       "(SELECT 1 FROM main.profiles m WHERE m.eval_id = s.eval_id AND m.created_at <= s.created_at);"
			       "DELETE FROM main.profile_kernels WHERE eval_id IN (SELECT id FROM temp.merge_prof);"
			       "DELETE FROM main.profiles WHERE eval_id IN (SELECT id FROM temp.merge_prof)");
		if (store_exec(dst, sql.s, err) < 0)
			goto out;
	}
	buf_reset(&sql);
	buf_addf(&sql, "SELECT count(*) FROM src.%s", t);
	if (store_query_int(dst, sql.s, NULL, 0, &nsrc, err) < 0)
		goto out;
	buf_reset(&sql);
	buf_addf(&sql, "SELECT count(*) FROM src.%s s WHERE s.eval_id IN (SELECT id FROM temp.merge_prof)", t);
	if (store_query_int(dst, sql.s, NULL, 0, &added, err) < 0)
		goto out;
	buf_reset(&sql);
	buf_addf(&sql, "INSERT OR REPLACE INTO main.%s (%s) SELECT %s FROM src.%s s "
		       "WHERE s.eval_id IN (SELECT id FROM temp.merge_prof)", t, names.s, names.s, t);
	if (store_exec(dst, sql.s, err) < 0)
		goto out;
	st->rows_added += added;
	st->rows_same += nsrc - added;
	ret = 0;
out:
	buf_release(&sql);
	buf_release(&names);
	return ret;
}

static int merge_table(struct store *dst, const char *t, int have_map, struct merge_stats *st,
		       struct buf *conflicts, struct buf *notes, struct buf *err)
{
	const struct merge_rule *r = rule_of(t);
	const int trials = !strcmp(t, "eval_trials");
	json_t *cols = store_table_columns(dst, t, err);
	struct table_sql q;
	struct buf sql = BUF_INIT, rel = BUF_INIT, desc = BUF_INIT, settled = BUF_INIT;
	long long nsrc = 0, added = 0, nconf = 0, nres = 0;
	int ret = -1;

	if (!cols)
		return -1;
	if (!strcmp(t, "profiles") || !strcmp(t, "profile_kernels")) {
		ret = merge_profiles(dst, t, cols, st, err);
		json_decref(cols);
		return ret;
	}
	table_sql_build(&q, t, cols);
	if (source_rel(dst, t, cols, have_map, &rel, err) < 0)
		goto out;
	/* Which differing rows a rule settles. */
	buf_addf(&settled, "(NOT (%s)", q.cmpdiff.s);
	if (r && r->resolvable)
		buf_addf(&settled, " OR (%s)", r->resolvable);
	buf_addc(&settled, ')');

	/* Conflicts: same key, different content, no rule. */
	{
		size_t i;
		json_t *c;
		json_array_foreach(cols, i, c) {
			const char *name = json_string_value(c);
			if (in_list(store_table_key(t), name))
				continue;
			buf_addf(&desc, "%sCASE WHEN s.%s IS NOT m.%s THEN '%s ' ELSE '' END",
				 desc.len ? " || " : "", name, name, name);
		}
		if (!desc.len)
			buf_adds(&desc, "''");
	}
	buf_addf(&sql, "SELECT '%s ' || ", t);
	for (int k = 0; store_table_key(t)[k]; k++)
		buf_addf(&sql, "%ss.%s", k ? " || '/' || " : "", store_table_key(t)[k]);
	buf_addf(&sql, " || ': differs in ' || %s AS d FROM %s s JOIN main.%s m ON %s WHERE (%s) AND NOT %s%s",
		 desc.s, rel.s, t, q.on.s, q.diff.s, settled.s, trials ? " AND NOT " TRIALS_KEPT : "");
	buf_addf(&sql, " LIMIT 50");
	if (store_query(dst, sql.s, NULL, conflict_cb, conflicts, err) < 0)
		goto out;
	buf_reset(&sql);
	buf_addf(&sql, "SELECT count(*) FROM %s s JOIN main.%s m ON %s WHERE (%s) AND NOT %s%s", rel.s, t,
		 q.on.s, q.diff.s, settled.s, trials ? " AND NOT " TRIALS_KEPT : "");
	if (store_query_int(dst, sql.s, NULL, 0, &nconf, err) < 0)
		goto out;
	st->conflicts += nconf;

	/* Settled by rule: counted, noted where a human should look. */
	buf_reset(&sql);
	if (trials)
		buf_addf(&sql, "SELECT count(*) FROM %s s WHERE %s", rel.s, TRIALS_KEPT);
	else
		buf_addf(&sql, "SELECT count(*) FROM %s s JOIN main.%s m ON %s WHERE (%s) AND (%s)", rel.s, t,
			 q.on.s, q.cmpdiff.s, settled.s);
	if (store_query_int(dst, sql.s, NULL, 0, &nres, err) < 0)
		goto out;
	if (!strcmp(t, "evals")) {
		long long n = 0;
		buf_reset(&sql);
		buf_addf(&sql, "SELECT 'evals ' || s.id || ' (' || s.problem_id || ', ' || s.gpu_name || ', ' || "
			       "s.protocol || '): correct in one store, ' || CASE WHEN s.status = 'correct' THEN m.status "
			       "ELSE s.status END || ' in the other; kept the failure' AS d "
			       "FROM %s s JOIN main.%s m ON %s WHERE (s.status = 'correct') != (m.status = 'correct') "
			       "ORDER BY s.id LIMIT 50", rel.s, t, q.on.s);
		if (store_query(dst, sql.s, NULL, conflict_cb, notes, err) < 0)
			goto out;
		buf_reset(&sql);
		buf_addf(&sql, "SELECT count(*) FROM %s s JOIN main.%s m ON %s WHERE "
			       "(s.status = 'correct') != (m.status = 'correct')", rel.s, t, q.on.s);
		if (store_query_int(dst, sql.s, NULL, 0, &n, err) < 0)
			goto out;
		st->status_disagree += n;
	}

	if (!strcmp(t, "gpus")) {
		/* The rule-based columns, deterministic whatever the order. */
		if (store_exec(dst,
			"UPDATE main.gpus SET "
			"peak_bw_gbs = max(coalesce(peak_bw_gbs, 0), coalesce((SELECT s.peak_bw_gbs FROM src.gpus s WHERE s.name = gpus.name), 0)),"
			"peak_fp32_tflops = max(coalesce(peak_fp32_tflops, 0), coalesce((SELECT s.peak_fp32_tflops FROM src.gpus s WHERE s.name = gpus.name), 0)),"
			"driver = coalesce(min(driver, (SELECT s.driver FROM src.gpus s WHERE s.name = gpus.name)), driver),"
			"cuda_version = coalesce(min(cuda_version, (SELECT s.cuda_version FROM src.gpus s WHERE s.name = gpus.name)), cuda_version),"
			"first_seen = min(first_seen, coalesce((SELECT s.first_seen FROM src.gpus s WHERE s.name = gpus.name), first_seen)) "
			"WHERE name IN (SELECT name FROM src.gpus)", err) < 0)
			goto out;
		if (store_exec(dst, "UPDATE main.gpus SET peak_bw_gbs = NULLIF(peak_bw_gbs, 0), "
				    "peak_fp32_tflops = NULLIF(peak_fp32_tflops, 0)", err) < 0)
			goto out;
	}

	if (!nconf && r && r->src_wins) {
		struct buf wins = BUF_INIT;
		add_expanded(&wins, r->src_wins, q.srow.s, q.mrow.s);
		if (!strcmp(t, "evals")) {
			/* Whose trials go with the kept evaluation. */
			buf_reset(&sql);
			buf_addf(&sql, "INSERT OR IGNORE INTO temp.merge_kept SELECT m.id FROM %s s JOIN main.%s m ON %s "
				       "WHERE (%s) AND NOT (%s)", rel.s, t, q.on.s, q.diff.s, wins.s);
			if (store_exec(dst, sql.s, err) < 0) {
				buf_release(&wins);
				goto out;
			}
			/* Its trials and profile go with a replaced evaluation. */
			static const char *const follow[] = { "eval_trials", "profile_kernels", "profiles", NULL };
			for (int f = 0; follow[f]; f++) {
				buf_reset(&sql);
				buf_addf(&sql, "DELETE FROM main.%s WHERE eval_id IN (SELECT m.id FROM %s s JOIN "
					       "main.%s m ON %s WHERE (%s) AND (%s))", follow[f], rel.s, t, q.on.s,
					 q.diff.s, wins.s);
				if (store_exec(dst, sql.s, err) < 0) {
					buf_release(&wins);
					goto out;
				}
			}
		}
		/* The source's row replaces the merged one: delete, then the
		 * INSERT below copies it (foreign keys are deferred). */
		buf_reset(&sql);
		buf_addf(&sql, "DELETE FROM main.%s AS m WHERE EXISTS (SELECT 1 FROM %s s WHERE %s AND (%s) AND (%s))",
			 t, rel.s, q.on.s, q.diff.s, wins.s);
		buf_release(&wins);
		if (store_exec(dst, sql.s, err) < 0)
			goto out;
	}

	buf_reset(&sql);
	buf_addf(&sql, "SELECT count(*) FROM %s s WHERE NOT EXISTS (SELECT 1 FROM main.%s m WHERE %s)%s", rel.s,
		 t, q.on.s, trials ? " AND NOT " TRIALS_KEPT : "");
	if (store_query_int(dst, sql.s, NULL, 0, &added, err) < 0)
		goto out;
	buf_reset(&sql);
	buf_addf(&sql, "SELECT count(*) FROM %s", rel.s);
	if (store_query_int(dst, sql.s, NULL, 0, &nsrc, err) < 0)
		goto out;
	if (!nconf) {
		buf_reset(&sql);
		buf_addf(&sql, "INSERT OR IGNORE INTO main.%s (%s) SELECT %s FROM %s s%s", t, q.cols.s, q.cols.s, rel.s,
			 trials ? " WHERE NOT " TRIALS_KEPT : "");
		if (store_exec(dst, sql.s, err) < 0)
			goto out;
	}
	st->rows_added += added;
	st->resolved += nres;
	st->rows_same += nsrc - added - nres - nconf;
	ret = 0;
out:
	json_decref(cols);
	table_sql_release(&q);
	buf_release(&sql);
	buf_release(&rel);
	buf_release(&desc);
	buf_release(&settled);
	return ret;
}

/* Maps every id of run `run` on one side (schema "src" or "main") to
 * ID~H in temp.<map>. */
static int map_run_ids(struct store *dst, const char *side, const char *map, const char *run,
		       const char *suffix, struct buf *err)
{
	static const char *const owned[] = { "runs", "llm_calls", "ideas", "candidates", NULL };
	struct buf sql = BUF_INIT;
	json_t *prm = json_pack("[s,s]", suffix, run);
	int r = 0;

	for (int i = 0; owned[i] && r >= 0; i++) {
		buf_reset(&sql);
		buf_addf(&sql, "INSERT OR IGNORE INTO temp.%s SELECT id, id || '~' || ?1 FROM %s.%s WHERE %s = ?2",
			 map, side, owned[i], strcmp(owned[i], "runs") ? "run_id" : "id");
		r = store_query(dst, sql.s, prm, NULL, NULL, err);
	}
	json_decref(prm);
	buf_release(&sql);
	return r < 0 ? -1 : 0;
}

/* Renames, in the merged store, the ids listed in temp.idmap_main. */
static int rename_main(struct store *dst, struct buf *err)
{
	struct buf sql = BUF_INIT;
	int r = 0;

	for (const struct run_scoped *rs = scoped; rs->table && r >= 0; rs++) {
		buf_reset(&sql);
		buf_addf(&sql, "UPDATE main.%s AS m SET ", rs->table);
		for (int i = 0; i < 4 && rs->id_cols[i]; i++) {
			buf_addf(&sql, "%s%s = ", i ? ", " : "", rs->id_cols[i]);
			mapped_col(&sql, "m", rs->id_cols[i], "idmap_main", 0);
		}
		for (int i = 0; i < 2 && rs->json_cols[i]; i++) {
			buf_addf(&sql, ", %s = ", rs->json_cols[i]);
			mapped_col(&sql, "m", rs->json_cols[i], "idmap_main", 1);
		}
		r = store_exec(dst, sql.s, err);
	}
	buf_release(&sql);
	return r < 0 ? -1 : 0;
}

struct plan_ctx {
	struct store *dst;
	struct merge_stats *st;
	struct buf *notes;
	struct buf *err;
	int have_src_map, have_main_map;
};

static int plan_cb(void *vctx, json_t *row)
{
	struct plan_ctx *p = vctx;
	const char *id = jget_str(row, "id", ""), *sc = jget_str(row, "sc", ""), *mc = jget_str(row, "mc", "");
	const int src_later = strcmp(sc, mc) > 0;
	const char *later = src_later ? sc : mc;
	struct buf key = BUF_INIT;
	char hex[65], sfx[9];

	buf_addf(&key, "%s|%s", id, later);
	sha256_hex(key.s, key.len, hex);
	buf_release(&key);
	memcpy(sfx, hex, 8);
	sfx[8] = '\0';
	if (p->notes)
		buf_addf(p->notes, "runs %s: two executions (started %s and %s): the later is %s~%s\n", id,
			 strcmp(sc, mc) < 0 ? sc : mc, later, id, sfx);
	p->st->runs_renamed++;
	if (src_later) {
		p->have_src_map = 1;
		return map_run_ids(p->dst, "src", "idmap_src", id, sfx, p->err) < 0 ? 1 : 0;
	}
	p->have_main_map = 1;
	return map_run_ids(p->dst, "main", "idmap_main", id, sfx, p->err) < 0 ? 1 : 0;
}

/* Two executions of one run id: the later is renamed on its side. */
static int plan_runs(struct store *dst, struct merge_stats *st, struct buf *notes, int *have_src_map,
		     struct buf *err)
{
	struct plan_ctx p = { dst, st, notes, err, 0, 0 };
	int r;

	if (store_exec(dst, "DROP TABLE IF EXISTS temp.idmap_src; DROP TABLE IF EXISTS temp.idmap_main;"
			    "CREATE TEMP TABLE idmap_src(old TEXT PRIMARY KEY, new TEXT NOT NULL);"
			    "CREATE TEMP TABLE idmap_main(old TEXT PRIMARY KEY, new TEXT NOT NULL)", err) < 0)
		return -1;
	r = store_query(dst, "SELECT s.id, s.created_at AS sc, m.created_at AS mc FROM src.runs s "
			     "JOIN main.runs m ON s.id = m.id WHERE s.created_at IS NOT m.created_at ORDER BY s.id",
			NULL, plan_cb, &p, err);
	if (r)
		return -1;
	if (p.have_main_map && rename_main(dst, err) < 0)
		return -1;
	*have_src_map = p.have_src_map;
	return 0;
}

int store_merge_from(struct store *dst, const char *src, struct merge_stats *st,
		     struct buf *conflicts, struct buf *notes, struct buf *err)
{
	struct buf copy = BUF_INIT;
	json_t *prm;
	long long before_conf = st->conflicts;
	int ret = -1, have_map = 0;

	/* An older store is merged from a migrated copy: the source is never written. */
	{
		struct buf pre = BUF_INIT;
		int v;
		buf_addf(&pre, "%s.src", dst->path);
		v = store_current_copy(src, pre.s, &copy, err);
		buf_release(&pre);
		if (v < 0)
			goto out;
	}
	if (copy.len)
		src = copy.s;
	prm = json_pack("[s]", src);
	if (store_query(dst, "ATTACH DATABASE ? AS src", prm, NULL, NULL, err) < 0) {
		json_decref(prm);
		goto out;
	}
	json_decref(prm);
	if (store_begin(dst, err) < 0)
		goto detach;
	/* Replaced rows are deleted before their successors are copied. */
	if (store_exec(dst, "PRAGMA defer_foreign_keys = ON; DROP TABLE IF EXISTS temp.merge_kept;"
			    "CREATE TEMP TABLE merge_kept(id TEXT PRIMARY KEY); DROP TABLE IF EXISTS temp.merge_prof;"
			    "CREATE TEMP TABLE merge_prof(id TEXT PRIMARY KEY)", err) < 0 ||
	    plan_runs(dst, st, notes, &have_map, err) < 0) {
		store_rollback(dst);
		goto detach;
	}
	for (int i = 0; store_tables[i]; i++) {
		if (!strcmp(store_tables[i], "meta"))
			continue;
		if (merge_table(dst, store_tables[i], have_map, st, conflicts, notes, err) < 0) {
			store_rollback(dst);
			goto detach;
		}
	}
	if (st->conflicts > before_conf) {
		store_rollback(dst);
		ret = kf_err(err, "%s: %lld conflicting row(s)", src, st->conflicts - before_conf) - 1;
		goto detach;
	}
	if (store_commit(dst, err) < 0)
		goto detach;
	ret = 0;
detach:
	store_exec(dst, "DROP TABLE IF EXISTS temp.merge_kept; DROP TABLE IF EXISTS temp.merge_prof;"
			"DROP TABLE IF EXISTS temp.idmap_src;"
			"DROP TABLE IF EXISTS temp.idmap_main", NULL);
	for (const struct run_scoped *rs = scoped; rs->table; rs++) {
		struct buf d = BUF_INIT;
		buf_addf(&d, "DROP TABLE IF EXISTS temp.ms_%s", rs->table);
		store_exec(dst, d.s, NULL);
		buf_release(&d);
	}
	store_exec(dst, "DETACH DATABASE src", NULL);
out:
	if (copy.len)
		store_copy_remove(copy.s);
	buf_release(&copy);
	return ret;
}
