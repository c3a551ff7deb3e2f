/* store/: the SQLite store, owned by struct store; all of kforge's SQL, one
 * module per topic. Includes core/ and problem/.
 *
 * The store: one SQLite database (WAL, foreign keys, busy timeout,
 * migrations by PRAGMA user_version). All SQL of kforge lives in
 * store/store*.c; other modules call these functions.
 *
 * Rows cross this API as jansson objects whose keys are column names.
 * Column names are checked against the table's schema, values are bound as
 * parameters, so nothing from outside is ever pasted into SQL text.
 * Writes that belong together go in one store_begin/store_commit: a
 * process killed at any instant leaves the last committed state. */
#ifndef KF_STORE_H
#define KF_STORE_H

#include <jansson.h>
#include "core/buf.h"

#define STORE_SCHEMA_VERSION 6

struct sqlite3;

struct store {
	struct sqlite3 *db;    /* owned */
	char *path;            /* owned */
	int in_tx;
	int readonly;
	json_t *colcache;      /* table -> [column names], owned */
	int version;           /* the schema version found (before any migration) */
	int quiet;             /* STORE_QUIET */
};

enum store_open_flags {
	STORE_CREATE = 1,      /* create and migrate when missing */
	STORE_READONLY = 2,    /* an older schema opens as it is (s->version) */
	STORE_QUIET = 4,       /* migrate an older store without the note on stderr */
};

/* Opened for writing, an older store is migrated in place, saying so on
 * stderr ("migrated store X from schema v1 to v3") unless STORE_QUIET. */
int store_open(struct store *s, const char *path, int flags, struct buf *err);
void store_close(struct store *s);

/* For commands that only read a store: when `path` has an older schema,
 * writes a copy migrated to this kforge's schema to `copy` (a new file
 * PREFIX.XXXXXX; PREFIX NULL: in $TMPDIR or /tmp) and says so on stderr;
 * the file at `path` is never written. Returns the schema version found
 * (copy is left empty when it is the current one), or -1. The caller
 * removes the copy with store_copy_remove. */
int store_current_copy(const char *path, const char *prefix, struct buf *copy, struct buf *err);
void store_copy_remove(const char *path);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK. rollback is safe without a tx. */
int store_begin(struct store *s, struct buf *err);
int store_commit(struct store *s, struct buf *err);
void store_rollback(struct store *s);

/* A read transaction (deferred BEGIN ... COMMIT): the queries between see
 * one snapshot and take the lock once. */
int store_read_begin(struct store *s, struct buf *err);
void store_read_end(struct store *s);

/* Raw SQL, for store/store*.c only: callers elsewhere use the named
 * functions of the store's modules (tests/t0020-sql-owner.sh checks). */
int store_exec(struct store *s, const char *sql, struct buf *err);

enum store_conflict {
	STORE_INSERT,          /* fail on an existing key */
	STORE_IGNORE,          /* keep the existing row */
	STORE_REPLACE,         /* overwrite the existing row */
	STORE_SAME,            /* keep it if identical, else fail with a conflict */
};

/* Inserts one row. Returns 1 when a row was written, 0 when it existed
 * (IGNORE, SAME), -1 on error (-2 on a STORE_SAME conflict, err names the
 * table, key and the first differing column). */
int store_insert(struct store *s, const char *table, const json_t *row,
		 enum store_conflict mode, struct buf *err);

/* Updates columns of the row(s) matching `where` (an object of column =
 * value pairs, ANDed). Returns the number of rows changed or -1. */
int store_update(struct store *s, const char *table, const json_t *set,
		 const json_t *where, struct buf *err);

/* Runs a query with positional parameters (a JSON array, may be NULL) and
 * calls cb for each row as an object (borrowed; cb may json_incref it).
 * cb returns 0 to go on, non-zero to stop (that value is returned).
 * Like store_exec, these four are for store/store*.c only. */
typedef int (*store_row_cb)(void *ctx, json_t *row);
int store_query(struct store *s, const char *sql, const json_t *params,
		store_row_cb cb, void *ctx, struct buf *err);
/* The first row (new reference) or NULL in *row; 0, or -1 on error. */
int store_query_one(struct store *s, const char *sql, const json_t *params,
		    json_t **row, struct buf *err);
/* All rows as a new array. */
json_t *store_query_all(struct store *s, const char *sql, const json_t *params, struct buf *err);
/* A single integer result (COUNT(*) and friends); def when no row. */
int store_query_int(struct store *s, const char *sql, const json_t *params,
		    long long def, long long *out, struct buf *err);

int store_meta_get(struct store *s, const char *key, struct buf *out, struct buf *err);
int store_meta_set(struct store *s, const char *key, const char *value, struct buf *err);

/* "ok", or the problems PRAGMA integrity_check reports, in out. */
int store_integrity_check(struct store *s, struct buf *out, struct buf *err);
/* The number of rows PRAGMA foreign_key_check reports, in *violations. */
int store_foreign_key_check(struct store *s, int *violations, struct buf *err);
/* Rows per table of store_tables: a new object {table: count} (a table an
 * older schema lacks is left out), or NULL. */
json_t *store_row_counts(struct store *s, struct buf *err);

/* Primary-key columns of a table, in order (static strings, NULL-ended). */
const char *const *store_table_key(const char *table);
/* Column names of a table from the live schema (new array of strings). */
json_t *store_table_columns(struct store *s, const char *table, struct buf *err);

/* ISO-8601 UTC now, e.g. "2026-11-22T05:31:57Z" (honours SOURCE_DATE_EPOCH
 * only where the caller asks: see store_now_fixed). */
void store_now(char out[32]);
/* 128 random bits as 32 hex digits (getrandom). */
void store_random_id(char out[33]);

#endif
