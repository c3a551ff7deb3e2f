#include "store_merge.h"
#include "store_schema.h"
#include "json.h"

#include <string.h>

/* gpus columns resolved by rule rather than compared. */
static int gpus_rule_column(const char *c)
{
	return !strcmp(c, "peak_bw_gbs") || !strcmp(c, "peak_fp32_tflops") || !strcmp(c, "driver") ||
	       !strcmp(c, "cuda_version") || !strcmp(c, "first_seen");
}

/* compiles columns that differ between two compiles of the same source
 * with the same options (the ptxas log's "Compile time", the duration, the
 * date): not a conflict; the earlier compile's row is kept. */
static int compiles_rule_column(const char *c)
{
	return !strcmp(c, "log") || !strcmp(c, "duration_ms") || !strcmp(c, "created_at");
}

static void key_expr(struct buf *sql, const char *const *key, const char *alias)
{
	for (int i = 0; key[i]; i++)
		buf_addf(sql, "%s%s.%s", i ? " || '/' || " : "", alias, key[i]);
}

static int conflict_cb(void *ctx, json_t *row)
{
	struct buf *out = ctx;
	buf_addf(out, "%s\n", jget_str(row, "d", ""));
	return 0;
}

static int merge_table(struct store *dst, const char *t, struct merge_stats *st,
		       struct buf *conflicts, struct buf *err)
{
	const char *const *key = store_table_key(t);
	json_t *cols = store_table_columns(dst, t, err);
	struct buf sql = BUF_INIT, cmp = BUF_INIT, on = BUF_INIT, desc = BUF_INIT;
	long long before = 0, after = 0, nconf = 0, nsrc = 0;
	size_t i;
	json_t *c;
	int ret = -1;

	if (!cols)
		return -1;
	for (int k = 0; key[k]; k++)
		buf_addf(&on, "%ss.%s = m.%s", k ? " AND " : "", key[k], key[k]);
	json_array_foreach(cols, i, c) {
		const char *name = json_string_value(c);
		int is_key = 0;
		for (int k = 0; key[k]; k++)
			is_key |= !strcmp(key[k], name);
		if (is_key || (!strcmp(t, "gpus") && gpus_rule_column(name)) ||
		    (!strcmp(t, "compiles") && compiles_rule_column(name)))
			continue;
		buf_addf(&cmp, "%ss.%s IS NOT m.%s", cmp.len ? " OR " : "", name, name);
		buf_addf(&desc, "%sCASE WHEN s.%s IS NOT m.%s THEN '%s ' ELSE '' END", desc.len ? " || " : "",
			 name, name, name);
	}
	/* Conflicts first: same key, different content. */
	if (cmp.len) {
		buf_addf(&sql, "SELECT '%s ' || ", t);
		key_expr(&sql, key, "s");
		buf_addf(&sql, " || ': differs in ' || %s AS d FROM src.%s s JOIN main.%s m ON %s WHERE %s LIMIT 50",
			 desc.s, t, t, on.s, cmp.s);
		if (store_query(dst, sql.s, NULL, conflict_cb, conflicts, err) < 0)
			goto out;
		buf_reset(&sql);
		buf_addf(&sql, "SELECT count(*) FROM src.%s s JOIN main.%s m ON %s WHERE %s", t, t, on.s, cmp.s);
		if (store_query_int(dst, sql.s, NULL, 0, &nconf, err) < 0)
			goto out;
		st->conflicts += nconf;
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
	if (!strcmp(t, "compiles") &&
	    store_exec(dst,
		"UPDATE main.compiles AS m SET log = s.log, duration_ms = s.duration_ms, "
		"created_at = s.created_at FROM src.compiles AS s WHERE s.id = m.id AND "
		"(s.created_at < m.created_at OR (s.created_at = m.created_at AND "
		"(s.duration_ms < m.duration_ms OR (s.duration_ms IS m.duration_ms AND s.log < m.log))))",
		err) < 0)
		goto out;
	buf_reset(&sql);
	buf_addf(&sql, "SELECT count(*) FROM main.%s", t);
	if (store_query_int(dst, sql.s, NULL, 0, &before, err) < 0)
		goto out;
	buf_reset(&sql);
	buf_addf(&sql, "INSERT OR IGNORE INTO main.%s SELECT * FROM src.%s", t, t);
	if (store_exec(dst, sql.s, err) < 0)
		goto out;
	buf_reset(&sql);
	buf_addf(&sql, "SELECT count(*) FROM main.%s", t);
	if (store_query_int(dst, sql.s, NULL, 0, &after, err) < 0)
		goto out;
	buf_reset(&sql);
	buf_addf(&sql, "SELECT count(*) FROM src.%s", t);
	if (store_query_int(dst, sql.s, NULL, 0, &nsrc, err) < 0)
		goto out;
	st->rows_added += after - before;
	st->rows_same += nsrc - (after - before) - nconf;
	ret = 0;
out:
	json_decref(cols);
	buf_release(&sql);
	buf_release(&cmp);
	buf_release(&on);
	buf_release(&desc);
	return ret;
}

int store_merge_from(struct store *dst, const char *src, struct merge_stats *st,
		     struct buf *conflicts, struct buf *err)
{
	struct store probe;
	json_t *prm;
	long long before_conf = st->conflicts;
	int ret = -1;

	/* Opening it first checks it is a store of a schema we know (and
	 * migrates nothing: read-only). */
	if (store_open(&probe, src, STORE_READONLY, err) < 0)
		return -1;
	store_close(&probe);
	prm = json_pack("[s]", src);
	if (store_query(dst, "ATTACH DATABASE ? AS src", prm, NULL, NULL, err) < 0) {
		json_decref(prm);
		return -1;
	}
	json_decref(prm);
	if (store_begin(dst, err) < 0)
		goto detach;
	for (int i = 0; store_tables[i]; i++) {
		if (!strcmp(store_tables[i], "meta"))
			continue;
		if (merge_table(dst, store_tables[i], st, conflicts, err) < 0) {
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
	store_exec(dst, "DETACH DATABASE src", NULL);
	return ret;
}
