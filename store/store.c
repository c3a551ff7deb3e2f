#include "store.h"
#include "store_schema.h"
#include "core/json.h"
#include "core/log.h"
#include "core/xalloc.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static int db_err(struct store *s, struct buf *err, const char *what)
{
	return kf_err(err, "store %s: %s: %s", s->path ? s->path : "", what,
		      s->db ? sqlite3_errmsg(s->db) : "not open");
}

int store_exec(struct store *s, const char *sql, struct buf *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		kf_err(err, "store %s: %s", s->path, msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int get_user_version(struct store *s, int *v, struct buf *err)
{
	long long x = 0;
	if (store_query_int(s, "PRAGMA user_version", NULL, 0, &x, err) < 0)
		return -1;
	*v = (int)x;
	return 0;
}

static int migrate(struct store *s, struct buf *err)
{
	int v = 0;

	if (get_user_version(s, &v, err) < 0)
		return -1;
	s->version = v;
	if (v > STORE_SCHEMA_VERSION)
		return kf_err(err, "store %s has schema v%d, newer than this kforge (v%d); upgrade kforge",
			      s->path, v, STORE_SCHEMA_VERSION);
	if (v == STORE_SCHEMA_VERSION)
		return 0;
	/* Read-only, an older store is read as it is: migrations only add,
	 * and nothing that reads a store needs what they add (merge reads a
	 * migrated copy). s->version says which it is. */
	if (s->readonly && v >= 1)
		return 0;
	if (s->readonly)
		return kf_err(err, "%s is not a kforge store (schema v%d)", s->path, v);
	for (int i = 0; i < store_n_migrations; i++) {
		const struct store_migration *m = &store_migrations[i];
		char pragma[64];
		if (m->version <= v)
			continue;
		if (store_begin(s, err) < 0)
			return -1;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", m->version);
		if (store_exec(s, m->sql, err) < 0 || store_exec(s, pragma, err) < 0) {
			store_rollback(s);
			return -1;
		}
		if (store_commit(s, err) < 0)
			return -1;
	}
	if (v >= 1 && !s->quiet)
		log_info("migrated store %s from schema v%d to v%d", s->path, v, STORE_SCHEMA_VERSION);
	return 0;
}

int store_open(struct store *s, const char *path, int flags, struct buf *err)
{
	int oflags = (flags & STORE_READONLY) ? SQLITE_OPEN_READONLY
					      : SQLITE_OPEN_READWRITE | ((flags & STORE_CREATE) ? SQLITE_OPEN_CREATE : 0);

	memset(s, 0, sizeof(*s));
	s->path = xstrdup(path);
	s->readonly = !!(flags & STORE_READONLY);
	s->quiet = !!(flags & STORE_QUIET);
	if (!(flags & STORE_CREATE) && access(path, F_OK) != 0) {
		kf_err(err, "no store at %s (run a search first, or pass --db)", path);
		goto fail;
	}
	if (sqlite3_open_v2(path, &s->db, oflags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		db_err(s, err, "open");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 30000);
	sqlite3_extended_result_codes(s->db, 1);
	if (!s->readonly && store_exec(s, "PRAGMA journal_mode = WAL", err) < 0)
		goto fail;
	if (store_exec(s, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL", err) < 0)
		goto fail;
	if (migrate(s, err) < 0)
		goto fail;
	return 0;
fail:
	store_close(s);
	return -1;
}

void store_close(struct store *s)
{
	if (s->db)
		sqlite3_close_v2(s->db);
	free(s->path);
	json_decref(s->colcache);
	memset(s, 0, sizeof(*s));
}

int store_begin(struct store *s, struct buf *err)
{
	if (s->in_tx)
		return kf_err(err, "store: nested transaction");
	if (store_exec(s, "BEGIN IMMEDIATE", err) < 0)
		return -1;
	s->in_tx = 1;
	return 0;
}

int store_commit(struct store *s, struct buf *err)
{
	if (store_exec(s, "COMMIT", err) < 0) {
		store_rollback(s);
		return -1;
	}
	s->in_tx = 0;
	return 0;
}

void store_rollback(struct store *s)
{
	if (s->db && !sqlite3_get_autocommit(s->db))
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	s->in_tx = 0;
}

/* Binds a JSON value to parameter i. */
static int bind_json(sqlite3_stmt *st, int i, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL:
		return sqlite3_bind_null(st, i);
	case JSON_TRUE:
		return sqlite3_bind_int(st, i, 1);
	case JSON_FALSE:
		return sqlite3_bind_int(st, i, 0);
	case JSON_INTEGER:
		return sqlite3_bind_int64(st, i, json_integer_value(v));
	case JSON_REAL: {
		double d = json_real_value(v);
		return isfinite(d) ? sqlite3_bind_double(st, i, d) : sqlite3_bind_null(st, i);
	}
	case JSON_STRING:
		return sqlite3_bind_text(st, i, json_string_value(v), (int)json_string_length(v),
					 SQLITE_TRANSIENT);
	default: {
		/* Objects and arrays are stored as compact JSON text. */
		struct buf b = BUF_INIT;
		int r;
		json_add_compact(&b, v);
		r = sqlite3_bind_text(st, i, b.s, (int)b.len, SQLITE_TRANSIENT);
		buf_release(&b);
		return r;
	}
	}
}

static json_t *column_json(sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(st, i));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(st, i));
	case SQLITE_TEXT:
		return json_stringn_nocheck((const char *)sqlite3_column_text(st, i),
					    (size_t)sqlite3_column_bytes(st, i));
	case SQLITE_BLOB:
		return json_stringn_nocheck((const char *)sqlite3_column_blob(st, i),
					    (size_t)sqlite3_column_bytes(st, i));
	default:
		return json_null();
	}
}

static int prepare(struct store *s, const char *sql, const json_t *params, sqlite3_stmt **st,
		   struct buf *err)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return db_err(s, err, "prepare");
	for (size_t i = 0; params && i < json_array_size(params); i++)
		if (bind_json(*st, (int)i + 1, json_array_get(params, i)) != SQLITE_OK) {
			sqlite3_finalize(*st);
			return db_err(s, err, "bind");
		}
	return 0;
}

int store_query(struct store *s, const char *sql, const json_t *params, store_row_cb cb,
		void *ctx, struct buf *err)
{
	sqlite3_stmt *st;
	int rc, ret = 0;

	if (prepare(s, sql, params, &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int n = sqlite3_column_count(st);
		json_t *row = json_object();
		for (int i = 0; i < n; i++)
			json_object_set_new_nocheck(row, sqlite3_column_name(st, i), column_json(st, i));
		ret = cb ? cb(ctx, row) : 0;
		json_decref(row);
		if (ret)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = db_err(s, err, "query");
	sqlite3_finalize(st);
	return ret;
}

static int one_cb(void *ctx, json_t *row)
{
	*(json_t **)ctx = json_incref(row);
	return 1;
}

int store_query_one(struct store *s, const char *sql, const json_t *params, json_t **row,
		    struct buf *err)
{
	*row = NULL;
	return store_query(s, sql, params, one_cb, row, err) < 0 ? -1 : 0;
}

static int all_cb(void *ctx, json_t *row)
{
	json_array_append(ctx, row);
	return 0;
}

json_t *store_query_all(struct store *s, const char *sql, const json_t *params, struct buf *err)
{
	json_t *arr = json_array();
	if (store_query(s, sql, params, all_cb, arr, err) < 0) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

int store_query_int(struct store *s, const char *sql, const json_t *params, long long def,
		    long long *out, struct buf *err)
{
	sqlite3_stmt *st;
	int rc;

	*out = def;
	if (prepare(s, sql, params, &st, err) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_err(s, err, "query");
	return 0;
}

/* Primary keys per table (the schema's, kept here so merge and
 * STORE_SAME need no PRAGMA round trip). */
static const char *const k_id[] = { "id", NULL };
static const char *const k_key[] = { "key", NULL };
static const char *const k_name[] = { "name", NULL };
static const char *const k_hash[] = { "hash", NULL };
static const char *const k_rounds[] = { "run_id", "problem_id", "round", NULL };
static const char *const k_cats[] = { "idea_id", "category", NULL };
static const char *const k_ck[] = { "compile_id", "kernel_name", NULL };
static const char *const k_trials[] = { "eval_id", "kind", "idx", NULL };
static const char *const k_base[] = { "problem_id", "gpu_name", "variant", NULL };
static const char *const k_eval[] = { "eval_id", NULL };
static const char *const k_pk[] = { "eval_id", "idx", NULL };

const char *const *store_table_key(const char *t)
{
	static const struct {
		const char *t;
		const char *const *k;
	} map[] = {
		{ "meta", k_key }, { "gpus", k_name }, { "problems", k_id }, { "runs", k_id },
		{ "rounds", k_rounds }, { "llm_calls", k_id }, { "ideas", k_id },
		{ "idea_categories", k_cats }, { "kernels", k_hash }, { "candidates", k_id },
		{ "compiles", k_id }, { "compile_kernels", k_ck }, { "evals", k_id },
		{ "eval_trials", k_trials }, { "verifications", k_id }, { "baselines", k_base },
		{ "profiles", k_eval }, { "profile_kernels", k_pk }, { "search_sessions", k_id },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].t, t))
			return map[i].k;
	return NULL;
}

static int valid_ident(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

json_t *store_table_columns(struct store *s, const char *table, struct buf *err)
{
	char sql[128];

	if (!valid_ident(table) || !store_table_key(table)) {
		kf_err(err, "store: unknown table '%s'", table);
		return NULL;
	}
	snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s') ORDER BY cid", table);
	return json_column(store_query_all(s, sql, NULL, err), "name");
}

static int check_columns(struct store *s, const char *table, const json_t *obj, struct buf *err)
{
	const char *k;
	json_t *v;
	json_t *cols;
	int ret = 0;

	if (!s->colcache)
		s->colcache = json_object();
	cols = json_incref(json_object_get(s->colcache, table));
	if (!cols) {
		cols = store_table_columns(s, table, err);
		if (!cols)
			return -1;
		json_object_set(s->colcache, table, cols);
	}
	json_object_foreach((json_t *)obj, k, v) {
		size_t i;
		json_t *c;
		int found = 0;
		json_array_foreach(cols, i, c)
			if (!strcmp(json_string_value(c), k))
				found = 1;
		if (!found || !valid_ident(k)) {
			ret = kf_err(err, "store: table %s has no column '%s'", table, k);
			break;
		}
	}
	json_decref(cols);
	return ret;
}

/* Loose equality for STORE_SAME: numbers compare by value. */
static int same_value(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_is_boolean(a) && json_is_integer(b))
		return (json_is_true(a) ? 1 : 0) == json_integer_value(b);
	if (json_is_string(b) && (json_is_object(a) || json_is_array(a))) {
		struct buf t = BUF_INIT;
		int eq;
		json_add_compact(&t, a);
		eq = !strcmp(t.s, json_string_value(b));
		buf_release(&t);
		return eq;
	}
	return json_equal(a, b);
}

static int compare_existing(struct store *s, const char *table, const json_t *row,
			    struct buf *err)
{
	const char *const *key = store_table_key(table);
	struct buf sql = BUF_INIT, keydesc = BUF_INIT;
	json_t *params = json_array(), *old = NULL;
	const char *k;
	json_t *v;
	int ret = 0;

	buf_addf(&sql, "SELECT * FROM %s WHERE ", table);
	for (int i = 0; key[i]; i++) {
		json_t *kv = json_object_get(row, key[i]);
		buf_addf(&sql, "%s%s = ?", i ? " AND " : "", key[i]);
		json_array_append(params, kv ? kv : json_null());
		if (json_is_string(kv))
			buf_addf(&keydesc, "%s%s", i ? "/" : "", json_string_value(kv));
		else
			buf_addf(&keydesc, "%s%lld", i ? "/" : "", (long long)json_integer_value(kv));
	}
	if (store_query_one(s, sql.s, params, &old, err) < 0) {
		ret = -1;
		goto out;
	}
	if (!old)
		goto out;
	json_object_foreach((json_t *)row, k, v) {
		json_t *o = json_object_get(old, k);
		if (!o || (json_is_null(o) && json_is_null(v)))
			continue;
		if (!same_value(v, o)) {
			ret = kf_err(err, "conflict in %s: row %s exists with a different %s", table,
				     keydesc.s, k) - 1;
			break;
		}
	}
out:
	json_decref(old);
	json_decref(params);
	buf_release(&sql);
	buf_release(&keydesc);
	return ret;
}

int store_insert(struct store *s, const char *table, const json_t *row,
		 enum store_conflict mode, struct buf *err)
{
	struct buf sql = BUF_INIT;
	json_t *params = json_array();
	sqlite3_stmt *st = NULL;
	const char *k;
	json_t *v;
	int n = 0, ret = -1, rc;

	/* A row that failed to build (json_pack refuses text that is not
	 * UTF-8) must not turn into "INSERT INTO t() VALUES()". */
	if (!json_is_object(row) || !json_object_size(row)) {
		kf_err(err, "store: no values for a row of %s (a text that is not UTF-8?)", table);
		goto out;
	}
	if (check_columns(s, table, row, err) < 0)
		goto out;
	buf_addf(&sql, "INSERT %s INTO %s(",
		 mode == STORE_INSERT ? "" : mode == STORE_REPLACE ? "OR REPLACE" : "OR IGNORE",
		 table);
	json_object_foreach((json_t *)row, k, v) {
		buf_addf(&sql, "%s%s", n++ ? ", " : "", k);
		json_array_append(params, v);
	}
	buf_adds(&sql, ") VALUES(");
	for (int i = 0; i < n; i++)
		buf_adds(&sql, i ? ", ?" : "?");
	buf_adds(&sql, ")");
	if (prepare(s, sql.s, params, &st, err) < 0)
		goto out;
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		db_err(s, err, table);
		goto out;
	}
	ret = sqlite3_changes(s->db) > 0;
	if (ret == 0 && mode == STORE_SAME)
		ret = compare_existing(s, table, row, err);
out:
	if (st)
		sqlite3_finalize(st);
	json_decref(params);
	buf_release(&sql);
	return ret;
}

int store_update(struct store *s, const char *table, const json_t *set, const json_t *where,
		 struct buf *err)
{
	struct buf sql = BUF_INIT;
	json_t *params = json_array();
	sqlite3_stmt *st = NULL;
	const char *k;
	json_t *v;
	int n = 0, ret = -1;

	if (!json_is_object(set) || !json_object_size(set) || !json_is_object(where)) {
		kf_err(err, "store: no values for an update of %s (a text that is not UTF-8?)", table);
		goto out;
	}
	if (check_columns(s, table, set, err) < 0 || check_columns(s, table, where, err) < 0)
		goto out;
	if (!json_object_size(where)) {
		kf_err(err, "store: update of %s without a condition", table);
		goto out;
	}
	buf_addf(&sql, "UPDATE %s SET ", table);
	json_object_foreach((json_t *)set, k, v) {
		buf_addf(&sql, "%s%s = ?", n++ ? ", " : "", k);
		json_array_append(params, v);
	}
	buf_adds(&sql, " WHERE ");
	n = 0;
	json_object_foreach((json_t *)where, k, v) {
		buf_addf(&sql, "%s%s = ?", n++ ? " AND " : "", k);
		json_array_append(params, v);
	}
	if (prepare(s, sql.s, params, &st, err) < 0)
		goto out;
	if (sqlite3_step(st) != SQLITE_DONE) {
		db_err(s, err, table);
		goto out;
	}
	ret = sqlite3_changes(s->db);
out:
	if (st)
		sqlite3_finalize(st);
	json_decref(params);
	buf_release(&sql);
	return ret;
}

int store_meta_get(struct store *s, const char *key, struct buf *out, struct buf *err)
{
	json_t *row = NULL;
	json_t *p = json_pack("[s]", key);
	int r = store_query_one(s, "SELECT value FROM meta WHERE key = ?", p, &row, err);
	json_decref(p);
	buf_reset(out);
	if (r < 0)
		return -1;
	if (row)
		buf_adds(out, jget_str(row, "value", ""));
	json_decref(row);
	return row ? 1 : 0;
}

int store_meta_set(struct store *s, const char *key, const char *value, struct buf *err)
{
	json_t *row = json_pack("{s:s,s:s}", "key", key, "value", value);
	int r = store_insert(s, "meta", row, STORE_REPLACE, err);
	json_decref(row);
	return r < 0 ? -1 : 0;
}

static int integ_cb(void *ctx, json_t *row)
{
	struct buf *out = ctx;
	const char *k;
	json_t *v;
	json_object_foreach(row, k, v) {
		if (out->len)
			buf_addc(out, '\n');
		buf_adds(out, json_is_string(v) ? json_string_value(v) : "?");
	}
	return 0;
}

int store_integrity_check(struct store *s, struct buf *out, struct buf *err)
{
	struct buf e = BUF_INIT;
	int code, ret = 0;

	buf_reset(out);
	if (store_query(s, "PRAGMA integrity_check", NULL, integ_cb, out, &e) < 0) {
		code = sqlite3_errcode(s->db) & 0xff;
		/* The check stops at a page it cannot read: that is its verdict
		 * (the rows so far and why it stopped), not a failure to check. */
		if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
			buf_addf(out, "%s%s", out->len ? "\n" : "", e.s);
		else
			ret = kf_err(err, "%s", e.s);
	}
	buf_release(&e);
	return ret;
}

static int count_cb(void *ctx, json_t *row)
{
	(*(int *)ctx)++;
	(void)row;
	return 0;
}

int store_foreign_key_check(struct store *s, int *violations, struct buf *err)
{
	*violations = 0;
	return store_query(s, "PRAGMA foreign_key_check", NULL, count_cb, violations, err) < 0 ? -1 : 0;
}

json_t *store_row_counts(struct store *s, struct buf *err)
{
	json_t *counts = json_object();

	for (int i = 0; store_tables[i]; i++) {
		char sql[96];
		long long n = 0, have = 0;
		json_t *prm = json_pack("[s]", store_tables[i]);
		/* An older schema (read as it is) lacks the newer tables: no count. */
		int r = store_query_int(s, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
					prm, 0, &have, err);
		json_decref(prm);
		if (r == 0 && !have)
			continue;
		/* Table names from the schema's own list, never from outside. */
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", store_tables[i]);
		if (r < 0 || store_query_int(s, sql, NULL, 0, &n, err) < 0) {
			json_decref(counts);
			return NULL;
		}
		json_object_set_new(counts, store_tables[i], json_integer(n));
	}
	return counts;
}

int store_read_begin(struct store *s, struct buf *err)
{
	return store_exec(s, "BEGIN", err);
}

void store_read_end(struct store *s)
{
	store_exec(s, "COMMIT", NULL);
}

void store_now(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void store_random_id(char out[33])
{
	unsigned char r[16];
	size_t got = 0;
	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			abort(); /* invariant: getrandom(2) of 16 bytes fails only with EINTR */
		got += (size_t)n;
	}
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}
