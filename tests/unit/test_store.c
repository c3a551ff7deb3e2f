/* Store: schema, migrations, the JSON-row API, conflicts, and crash
 * consistency (a writer SIGKILLed at random points, 25 times). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "core/json.h"
#include "store/store.h"
#include "store/store_profile.h"
#include "store/store_schema.h"

static char dir[] = "/tmp/kf-store-test.XXXXXX";

static void db_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/kf-store-test.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[256];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_create_and_version(void **state)
{
	struct store s;
	struct buf err = BUF_INIT, out = BUF_INIT;
	char p[256];
	long long v = -1;
	(void)state;

	db_path(p, sizeof(p), "a.db");
	assert_int_equal(store_open(&s, p, 0, &err), -1);
	assert_non_null(strstr(err.s, "no store"));
	assert_int_equal(store_open(&s, p, STORE_CREATE, &err), 0);
	assert_int_equal(store_query_int(&s, "PRAGMA user_version", NULL, 0, &v, &err), 0);
	assert_int_equal(v, STORE_SCHEMA_VERSION);
	for (int i = 0; store_tables[i]; i++) {
		json_t *cols = store_table_columns(&s, store_tables[i], &err);
		assert_non_null(cols);
		assert_true(json_array_size(cols) >= 2);
		assert_non_null(store_table_key(store_tables[i]));
		json_decref(cols);
	}
	assert_int_equal(store_query_int(&s, "PRAGMA journal_mode", NULL, 0, &v, &err), 0);
	assert_int_equal(store_integrity_check(&s, &out, &err), 0);
	assert_string_equal(out.s, "ok");
	store_close(&s);
	/* Reopening does not migrate again. */
	assert_int_equal(store_open(&s, p, 0, &err), 0);
	store_close(&s);
	buf_release(&err);
	buf_release(&out);
}

static void test_newer_schema_refused(void **state)
{
	struct store s;
	struct buf err = BUF_INIT;
	char p[256];
	(void)state;

	db_path(p, sizeof(p), "new.db");
	assert_int_equal(store_open(&s, p, STORE_CREATE, &err), 0);
	assert_int_equal(store_exec(&s, "PRAGMA user_version = 99", &err), 0);
	store_close(&s);
	assert_int_equal(store_open(&s, p, 0, &err), -1);
	assert_non_null(strstr(err.s, "newer"));
	buf_release(&err);
}

/* A v1 store (the level-1 release's) migrates to v2 when opened writable,
 * its LLM calls becoming attempt 1; read-only it is read as it is. */
static void test_migrate_v1(void **state)
{
	struct store s;
	struct buf err = BUF_INIT;
	char p[256];
	long long v = -1;
	json_t *row = NULL;
	(void)state;

	db_path(p, sizeof(p), "v1.db");
	assert_int_equal(store_open(&s, p, STORE_CREATE, &err), 0);
	/* Back to v1's shape: drop what v2, v4, v5 and v6 added. */
	assert_int_equal(store_exec(&s, "DROP TABLE search_sessions;"
				    "DROP TABLE profile_kernels; DROP TABLE profiles;"
				    "DROP INDEX llm_calls_by_retry; ALTER TABLE llm_calls DROP COLUMN retry_of;"
				    "ALTER TABLE llm_calls DROP COLUMN attempt; ALTER TABLE llm_calls DROP COLUMN attempts;"
				    " PRAGMA user_version = 1", &err), 0);
	assert_int_equal(store_exec(&s, "INSERT INTO problems(id,level,number,name,spec,spec_sha256) VALUES('p',1,1,'P','{}','0');"
				    "INSERT INTO runs(id,created_at,status,strategy,proposer,seed,config,kforge_version)"
				    " VALUES('r','t','finished','branch','llm',1,'{}','v');"
				    "INSERT INTO llm_calls(id,run_id,purpose,proposer,request,created_at)"
				    " VALUES('c','r','ideas','llm','{}','t')", &err), 0);
	store_close(&s);
	/* Read-only, it is read as it is (nothing written). */
	assert_int_equal(store_open(&s, p, STORE_READONLY, &err), 0);
	assert_int_equal(s.version, 1);
	assert_int_equal(store_query_int(&s, "PRAGMA user_version", NULL, 0, &v, &err), 0);
	assert_int_equal(v, 1);
	store_close(&s);
	{
		/* A reader's migrated copy: v3, the source untouched. */
		struct buf copy = BUF_INIT, pre = BUF_INIT;
		buf_addf(&pre, "%s.copy", p);
		assert_int_equal(store_current_copy(p, pre.s, &copy, &err), 1);
		assert_true(copy.len > 0);
		assert_int_equal(store_open(&s, copy.s, STORE_READONLY, &err), 0);
		assert_int_equal(s.version, STORE_SCHEMA_VERSION);
		assert_int_equal(store_query_int(&s, "SELECT count(*) FROM llm_calls WHERE attempt = 1",
						 NULL, 0, &v, &err), 0);
		assert_int_equal(v, 1);
		store_close(&s);
		store_copy_remove(copy.s);
		assert_int_equal(access(copy.s, F_OK), -1);
		assert_int_equal(store_open(&s, p, STORE_READONLY, &err), 0);
		assert_int_equal(s.version, 1);
		store_close(&s);
		buf_release(&copy);
		buf_release(&pre);
	}
	assert_int_equal(store_open(&s, p, 0, &err), 0);
	assert_int_equal(s.version, 1);
	assert_int_equal(store_query_int(&s, "PRAGMA user_version", NULL, 0, &v, &err), 0);
	assert_int_equal(v, STORE_SCHEMA_VERSION);
	assert_int_equal(store_query_one(&s, "SELECT attempt, retry_of, attempts FROM llm_calls WHERE id = 'c'", NULL, &row, &err), 0);
	assert_non_null(row);
	assert_int_equal(jget_int(row, "attempt", 0), 1);
	assert_true(json_is_null(json_object_get(row, "retry_of")));
	/* v4: the call's HTTP attempts, unknown for a call recorded before */
	assert_non_null(json_object_get(row, "attempts"));
	assert_true(json_is_null(json_object_get(row, "attempts")));
	json_decref(row);
	store_close(&s);
	buf_release(&err);
}

/* A v5 store (profiles, no sessions) migrates to v6: search_sessions with
 * its checks, the rows kept; read-only it is read as it is, the table
 * left out of the row counts. */
static void test_migrate_v5_sessions(void **state)
{
	struct store s;
	struct buf err = BUF_INIT;
	char p[256];
	long long v = -1;
	json_t *row, *counts;
	sqlite3 *db;
	(void)state;

	db_path(p, sizeof(p), "v5.db");
	assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
	for (int i = 0; i < store_n_migrations && store_migrations[i].version <= 5; i++)
		assert_int_equal(sqlite3_exec(db, store_migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 5;"
				      "INSERT INTO runs(id,created_at,status,strategy,proposer,seed,config,kforge_version)"
				      " VALUES('r','t','stopped','branch','builtin',1,'{}','v')", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(store_open(&s, p, STORE_READONLY, &err), 0);
	assert_int_equal(s.version, 5);
	counts = store_row_counts(&s, &err);
	assert_non_null(counts);
	assert_null(json_object_get(counts, "search_sessions"));
	assert_int_equal(jget_int(counts, "runs", -1), 1);
	json_decref(counts);
	store_close(&s);

	assert_int_equal(store_open(&s, p, 0, &err), 0);
	assert_int_equal(store_query_int(&s, "PRAGMA user_version", NULL, 0, &v, &err), 0);
	assert_int_equal(v, 6);
	assert_int_equal(store_query_int(&s, "SELECT count(*) FROM runs", NULL, 0, &v, &err), 0);
	assert_int_equal(v, 1);
	row = json_pack("{s:s,s:s,s:n,s:s,s:s,s:f,s:s,s:s,s:s,s:i,s:i,s:i,s:s}", "id", "s1", "run_id", "r",
			"gpu_name", "started_at", "t0", "ended_at", "t1", "wall_s", 60.0, "status", "stopped",
			"problems", "[\"level2/001_X\"]", "levels", "[2]", "evaluations", 60, "candidates", 61,
			"jobs", 1, "kforge_version", "v");
	assert_int_equal(store_insert(&s, "search_sessions", row, STORE_INSERT, &err), 1);
	/* bounds: a negative wall time, an unknown status, no run: refused */
	json_object_set_new(row, "id", json_string("s2"));
	json_object_set_new(row, "wall_s", json_real(-1));
	assert_int_equal(store_insert(&s, "search_sessions", row, STORE_INSERT, &err), -1);
	json_object_set_new(row, "wall_s", json_real(1));
	json_object_set_new(row, "status", json_string("running"));
	assert_int_equal(store_insert(&s, "search_sessions", row, STORE_INSERT, &err), -1);
	json_object_set_new(row, "status", json_string("finished"));
	json_object_set_new(row, "run_id", json_string("nope"));
	assert_int_equal(store_insert(&s, "search_sessions", row, STORE_INSERT, &err), -1);
	json_decref(row);
	counts = store_row_counts(&s, &err);
	assert_int_equal(jget_int(counts, "search_sessions", -1), 1);
	json_decref(counts);
	store_close(&s);
	buf_release(&err);
}

/* A v2 store (baselines eager|compile) migrates to v3: its baselines and the
 * speedup view survive the table's rebuild, and eager_notf32 is accepted. */
static void test_migrate_v2_baselines(void **state)
{
	struct store s;
	struct buf err = BUF_INIT, out = BUF_INIT;
	char p[256];
	long long v = -1;
	json_t *row = NULL;
	sqlite3 *db;
	(void)state;

	db_path(p, sizeof(p), "v2.db");
	assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
	for (int i = 0; i < store_n_migrations && store_migrations[i].version <= 2; i++)
		assert_int_equal(sqlite3_exec(db, store_migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 2;"
				      "INSERT INTO problems(id,level,number,name,spec,spec_sha256) VALUES('p',1,1,'P','{}','0');"
				      "INSERT INTO baselines(problem_id,gpu_name,variant,mean_ms,imported_at)"
				      " VALUES('p','G','eager',2.0,'t'), ('p','G','compile',1.0,'t');"
				      "INSERT INTO kernels(hash,source,bytes,created_at) VALUES('k','s',1,'t');"
				      "INSERT INTO evals(id,kernel_hash,problem_id,gpu_name,protocol,protocol_params,status,time_mean_ms,created_at)"
				      " VALUES('e','k','p','G','v1','{}','correct',0.5,'t')", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(store_open(&s, p, 0, &err), 0);
	assert_int_equal(store_query_int(&s, "PRAGMA user_version", NULL, 0, &v, &err), 0);
	assert_int_equal(v, STORE_SCHEMA_VERSION);
	assert_int_equal(store_query_int(&s, "SELECT count(*) FROM baselines", NULL, 0, &v, &err), 0);
	assert_int_equal(v, 2);
	assert_int_equal(store_query_one(&s, "SELECT speedup_eager, speedup_compile FROM eval_speedups", NULL, &row,
					 &err), 0);
	assert_non_null(row);
	assert_true(jget_num(row, "speedup_eager", 0) == 4.0);
	assert_true(jget_num(row, "speedup_compile", 0) == 2.0);
	json_decref(row);
	row = json_pack("{s:s,s:s,s:s,s:f,s:s}", "problem_id", "p", "gpu_name", "G", "variant", "eager_notf32",
			"mean_ms", 3.0, "imported_at", "t");
	assert_int_equal(store_insert(&s, "baselines", row, STORE_INSERT, &err), 1);
	json_decref(row);
	row = json_pack("{s:s,s:s,s:s,s:f,s:s}", "problem_id", "p", "gpu_name", "G", "variant", "fast",
			"mean_ms", 3.0, "imported_at", "t");
	assert_true(store_insert(&s, "baselines", row, STORE_INSERT, &err) < 0);
	json_decref(row);
	assert_int_equal(store_integrity_check(&s, &out, &err), 0);
	assert_string_equal(out.s, "ok");
	store_close(&s);
	buf_release(&err);
	buf_release(&out);
}

static void put_problem(struct store *s, const char *id)
{
	struct buf err = BUF_INIT;
	json_t *row = json_pack("{s:s,s:i,s:i,s:s,s:s,s:s}", "id", id, "level", 1, "number", 1,
				"name", "X", "spec", "{}", "spec_sha256", "00");
	assert_int_equal(store_insert(s, "problems", row, STORE_INSERT, &err), 1);
	json_decref(row);
	buf_release(&err);
}

static void test_insert_modes(void **state)
{
	struct store s;
	struct buf err = BUF_INIT;
	char p[256];
	json_t *k, *got = NULL;
	(void)state;

	db_path(p, sizeof(p), "b.db");
	assert_int_equal(store_open(&s, p, STORE_CREATE, &err), 0);
	k = json_pack("{s:s,s:s,s:i,s:s}", "hash", "h1", "source", "code", "bytes", 4,
		      "created_at", "2026-01-01T00:00:00Z");
	assert_int_equal(store_insert(&s, "kernels", k, STORE_INSERT, &err), 1);
	assert_int_equal(store_insert(&s, "kernels", k, STORE_INSERT, &err), -1);
	assert_int_equal(store_insert(&s, "kernels", k, STORE_IGNORE, &err), 0);
	assert_int_equal(store_insert(&s, "kernels", k, STORE_SAME, &err), 0);
	/* Same key, other content: a conflict naming the table and column. */
	json_object_set_new(k, "source", json_string("other"));
	assert_int_equal(store_insert(&s, "kernels", k, STORE_SAME, &err), -2);
	assert_non_null(strstr(err.s, "kernels"));
	assert_non_null(strstr(err.s, "source"));
	/* Unknown column: refused before any SQL is built from it. */
	json_object_set_new(k, "hash); DROP TABLE kernels; --", json_string("x"));
	assert_int_equal(store_insert(&s, "kernels", k, STORE_IGNORE, &err), -1);
	assert_non_null(strstr(err.s, "no column"));
	json_decref(k);
	{
		json_t *prm = json_pack("[s]", "h1");
		assert_int_equal(store_query_one(&s, "SELECT source FROM kernels WHERE hash = ?",
						 prm, &got, &err), 0);
		json_decref(prm);
	}
	assert_non_null(got);
	assert_string_equal(jget_str(got, "source", ""), "code");
	json_decref(got);
	/* Unknown table. */
	k = json_pack("{s:s}", "a", "b");
	assert_int_equal(store_insert(&s, "nosuch", k, STORE_INSERT, &err), -1);
	json_decref(k);
	/* A row json_pack could not build (text that is not UTF-8): a clear
	 * error, not the SQL syntax error of an empty column list. */
	k = json_pack("{s:s,s:s}", "hash", "h2", "source", "caf\xe9");
	assert_null(k);
	assert_int_equal(store_insert(&s, "kernels", k, STORE_IGNORE, &err), -1);
	assert_non_null(strstr(err.s, "no values for a row of kernels"));
	k = json_object();
	assert_int_equal(store_insert(&s, "kernels", k, STORE_IGNORE, &err), -1);
	assert_int_equal(store_update(&s, "kernels", NULL, k, &err), -1);
	assert_non_null(strstr(err.s, "no values for an update of kernels"));
	json_decref(k);
	store_close(&s);
	buf_release(&err);
}

static void test_foreign_keys_and_update(void **state)
{
	struct store s;
	struct buf err = BUF_INIT;
	char p[256];
	json_t *row, *set, *where;
	long long n = 0;
	(void)state;

	db_path(p, sizeof(p), "c.db");
	assert_int_equal(store_open(&s, p, STORE_CREATE, &err), 0);
	row = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "id", "e1", "kernel_hash",
			"missing", "problem_id", "level1/001_X", "gpu_name", "G", "protocol", "p",
			"protocol_params", "{}", "status", "correct", "created_at", "t", "env", "{}",
			"detail", "");
	assert_int_equal(store_insert(&s, "evals", row, STORE_INSERT, &err), -1);
	assert_non_null(strstr(err.s, "FOREIGN KEY"));
	json_decref(row);
	put_problem(&s, "level1/001_X");
	set = json_pack("{s:s}", "name", "Y");
	where = json_pack("{s:s}", "id", "level1/001_X");
	assert_int_equal(store_update(&s, "problems", set, where, &err), 1);
	json_decref(where);
	where = json_object();
	assert_int_equal(store_update(&s, "problems", set, where, &err), -1);
	json_decref(where);
	json_decref(set);
	assert_int_equal(store_query_int(&s, "SELECT count(*) FROM problems WHERE name = 'Y'", NULL,
					 0, &n, &err), 0);
	assert_int_equal(n, 1);
	store_close(&s);
	buf_release(&err);
}

static void test_rollback(void **state)
{
	struct store s;
	struct buf err = BUF_INIT;
	char p[256];
	long long n = -1;
	(void)state;

	db_path(p, sizeof(p), "d.db");
	assert_int_equal(store_open(&s, p, STORE_CREATE, &err), 0);
	assert_int_equal(store_begin(&s, &err), 0);
	assert_int_equal(store_begin(&s, &err), -1); /* nested */
	put_problem(&s, "level1/002_X");
	store_rollback(&s);
	assert_int_equal(store_query_int(&s, "SELECT count(*) FROM problems", NULL, 0, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(store_meta_set(&s, "k", "v", &err), 0);
	{
		struct buf v = BUF_INIT;
		assert_int_equal(store_meta_get(&s, "k", &v, &err), 1);
		assert_string_equal(v.s, "v");
		assert_int_equal(store_meta_get(&s, "none", &v, &err), 0);
		buf_release(&v);
	}
	store_close(&s);
	buf_release(&err);
}

/* The writer: each transaction adds one kernel, one eval and its 100
 * trials, then marks the eval complete by setting n_trials. A kill may hit
 * anywhere; afterwards every eval must have exactly n_trials trials. */
static void writer(const char *p)
{
	struct store s;
	struct buf err = BUF_INIT;
	if (store_open(&s, p, STORE_CREATE, &err) < 0)
		_exit(3);
	for (int i = 0;; i++) {
		char id[80], t[32];
		json_t *row;
		snprintf(id, sizeof(id), "%d-%ld-%d", (int)getpid(), (long)time(NULL), i);
		store_now(t);
		if (store_begin(&s, &err) < 0)
			_exit(4);
		row = json_pack("{s:s,s:s,s:i,s:s}", "hash", id, "source", "x", "bytes", 1, "created_at", t);
		if (store_insert(&s, "kernels", row, STORE_INSERT, &err) < 0)
			_exit(5);
		json_decref(row);
		row = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "id", id, "kernel_hash", id,
				"problem_id", "level1/001_X", "gpu_name", "G", "protocol", "collect-v1",
				"protocol_params", "{}", "status", "correct", "created_at", t, "env", "{}");
		if (store_insert(&s, "evals", row, STORE_INSERT, &err) < 0)
			_exit(6);
		json_decref(row);
		for (int k = 0; k < 100; k++) {
			row = json_pack("{s:s,s:s,s:i,s:f}", "eval_id", id, "kind", "time", "idx", k,
					"time_ms", 1.0 + k);
			if (store_insert(&s, "eval_trials", row, STORE_INSERT, &err) < 0)
				_exit(7);
			json_decref(row);
		}
		row = json_pack("{s:i}", "n_trials", 100);
		json_t *w = json_pack("{s:s}", "id", id);
		if (store_update(&s, "evals", row, w, &err) != 1)
			_exit(8);
		json_decref(row);
		json_decref(w);
		if (store_commit(&s, &err) < 0)
			_exit(9);
	}
}

static void test_kill_consistency(void **state)
{
	struct store s;
	struct buf err = BUF_INIT, out = BUF_INIT;
	char p[256];
	long long evals = 0, bad = -1, orphans = -1, total_before = 0;
	(void)state;

	db_path(p, sizeof(p), "kill.db");
	assert_int_equal(store_open(&s, p, STORE_CREATE, &err), 0);
	put_problem(&s, "level1/001_X");
	store_close(&s);
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	for (int round = 0; round < 25; round++) {
		pid_t pid = fork();
		int st;
		assert_true(pid >= 0);
		if (pid == 0)
			writer(p);
		usleep((useconds_t)(20000 + rand() % 180000));
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		assert_true(WIFSIGNALED(st)); /* died by the kill, not by an error exit */
		assert_int_equal(store_open(&s, p, 0, &err), 0);
		assert_int_equal(store_integrity_check(&s, &out, &err), 0);
		assert_string_equal(out.s, "ok");
		assert_int_equal(store_query_int(&s, "SELECT count(*) FROM evals", NULL, 0, &evals, &err), 0);
		/* No half-written record: every eval is complete with all its trials. */
		assert_int_equal(store_query_int(&s,
			"SELECT count(*) FROM evals e WHERE e.n_trials IS NULL OR e.n_trials != "
			"(SELECT count(*) FROM eval_trials t WHERE t.eval_id = e.id)", NULL, -1, &bad, &err), 0);
		assert_int_equal(bad, 0);
		assert_int_equal(store_query_int(&s,
			"SELECT count(*) FROM kernels k WHERE NOT EXISTS (SELECT 1 FROM evals e WHERE e.kernel_hash = k.hash)",
			NULL, -1, &orphans, &err), 0);
		assert_int_equal(orphans, 0);
		assert_true(evals >= total_before); /* committed work is never lost */
		total_before = evals;
		store_close(&s);
	}
	assert_true(total_before > 0);
	buf_release(&err);
	buf_release(&out);
}

/* Profiles (schema v5): a round trip with kernels in order, replacement
 * drops the old kernels, an unknown limiter is refused, and the row needs
 * its evaluation. */
static void test_profiles(void **state)
{
	struct store s;
	struct buf err = BUF_INIT;
	char p[256];
	json_t *row, *prof, *got = NULL;
	long long n = -1;
	(void)state;

	db_path(p, sizeof(p), "prof.db");
	assert_int_equal(store_open(&s, p, STORE_CREATE, &err), 0);
	prof = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:f,s:I,s:I,s:f,s:f,s:f,s:n,s:f,s:f,s:s,s:s,"
			 "s:[{s:s,s:f,s:f,s:i,s:s},{s:s,s:f,s:f,s:i,s:s}]}",
			 "eval_id", "e1", "kernel_hash", "h1", "problem_id", "level1/001_X", "gpu_name", "G",
			 "limiter", "memory", "launches", 2, "kernel_ms", 0.5, "dram_read_bytes",
			 (json_int_t)1 << 32, "dram_write_bytes", (json_int_t)1 << 30, "dram_pct", 91.5,
			 "l2_hit_pct", 10.25, "sm_pct", 20.0, "tensor_pct", "occupancy_pct", 75.0,
			 "cost_ms", 120.0, "tool", "cupti", "created_at", "t",
			 "kernels", "name", "k0", "duration_ms", 0.4, "dram_pct", 95.0, "registers", 32,
			 "limiter", "memory", "name", "k1", "duration_ms", 0.1, "dram_pct", 75.5, "registers",
			 64, "limiter", "latency");
	assert_int_equal(store_profile_put(&s, prof, &err), -1);   /* no evaluation e1 yet */
	assert_non_null(strstr(err.s, "FOREIGN KEY"));
	put_problem(&s, "level1/001_X");
	row = json_pack("{s:s,s:s,s:i,s:s}", "hash", "h1", "source", "code", "bytes", 4, "created_at", "t");
	assert_int_equal(store_insert(&s, "kernels", row, STORE_INSERT, &err), 1);
	json_decref(row);
	row = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "id", "e1", "kernel_hash", "h1", "problem_id",
			"level1/001_X", "gpu_name", "G", "protocol", "p", "protocol_params", "{}", "status",
			"correct", "created_at", "t");
	assert_int_equal(store_insert(&s, "evals", row, STORE_INSERT, &err), 1);
	json_decref(row);
	assert_int_equal(store_profile_put(&s, prof, &err), 0);
	assert_int_equal(store_profile_get(&s, "e1", &got, &err), 0);
	assert_non_null(got);
	assert_string_equal(json_string_value(json_object_get(got, "limiter")), "memory");
	assert_int_equal(json_integer_value(json_object_get(got, "dram_read_bytes")), (json_int_t)1 << 32);
	assert_true(json_is_null(json_object_get(got, "tensor_pct")));
	assert_int_equal(json_array_size(json_object_get(got, "kernels")), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(got, "kernels"), 1),
							       "name")), "k1");
	assert_null(json_object_get(json_array_get(json_object_get(got, "kernels"), 0), "eval_id"));
	json_decref(got);
	/* replaced by a profile of one kernel: the second row goes */
	json_array_remove(json_object_get(prof, "kernels"), 1);
	json_object_set_new(prof, "limiter", json_string("launch"));
	assert_int_equal(store_profile_put(&s, prof, &err), 0);
	assert_int_equal(store_profile_get(&s, "e1", &got, &err), 0);
	assert_string_equal(json_string_value(json_object_get(got, "limiter")), "launch");
	assert_int_equal(json_array_size(json_object_get(got, "kernels")), 1);
	json_decref(got);
	assert_int_equal(store_profile_get(&s, "e2", &got, &err), 0);
	assert_null(got);
	/* an unknown limiter, of the block or of a kernel: nothing written */
	json_object_set_new(prof, "limiter", json_string("bandwidth"));
	assert_int_equal(store_profile_put(&s, prof, &err), -1);
	json_object_set_new(prof, "limiter", json_string("compute"));
	json_object_set_new(json_array_get(json_object_get(prof, "kernels"), 0), "limiter", json_string("x"));
	assert_int_equal(store_profile_put(&s, prof, &err), -1);
	assert_int_equal(store_query_int(&s, "SELECT count(*) FROM profiles WHERE limiter = 'launch'", NULL, 0,
					 &n, &err), 0);
	assert_int_equal(n, 1);
	json_decref(prof);
	store_close(&s);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_and_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v2_baselines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_modes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_keys_and_update, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rollback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kill_consistency, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_v5_sessions, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
