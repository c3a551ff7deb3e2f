#include "cmds.h"
#include "core/json.h"
#include "store/store.h"
#include "store/store_schema.h"

#include <string.h>

static int store_info(struct cli_ctx *ctx, int as_json)
{
	struct store s;
	struct buf err = BUF_INIT;
	json_t *out = json_object(), *counts = NULL;
	int ret = EXIT_OK, version;

	if (store_open(&s, ctx->db_path, STORE_READONLY, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	if (!(counts = store_row_counts(&s, &err)))
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
	version = s.version; /* the file's own, not this kforge's */
	store_close(&s);
	if (ret)
		goto out;
	json_object_set_new(out, "path", json_string(ctx->db_path));
	json_object_set_new(out, "schema_version", json_integer(version));
	json_object_set_new(out, "kforge_schema_version", json_integer(STORE_SCHEMA_VERSION));
	json_object_set(out, "rows", counts);
	if (as_json) {
		struct buf b = BUF_INIT;
		json_add_pretty(&b, out);
		printf("%s\n", b.s);
		buf_release(&b);
	} else {
		const char *k;
		json_t *v;
		printf("store %s (schema v%d", ctx->db_path, version);
		if (version < STORE_SCHEMA_VERSION)
			printf("; this kforge's is v%d: 'kforge store migrate --db %s' upgrades it",
			       STORE_SCHEMA_VERSION, ctx->db_path);
		printf(")\n");
		for (int i = 0; store_tables[i]; i++) {
			k = store_tables[i];
			v = json_object_get(counts, k);
			if (v)
				printf("  %-16s %lld\n", k, (long long)json_integer_value(v));
			else
				printf("  %-16s (not in schema v%d)\n", k, version);
		}
	}
out:
	json_decref(out);
	json_decref(counts);
	buf_release(&err);
	return ret;
}

static int store_check(struct cli_ctx *ctx)
{
	struct store s;
	struct buf err = BUF_INIT, res = BUF_INIT;
	int ret = EXIT_OK, nfk = 0;

	if (store_open(&s, ctx->db_path, STORE_READONLY, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	if (store_integrity_check(&s, &res, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
		store_close(&s);
		goto out;
	}
	/* A damaged store fails the integrity check: that is the verdict
	 * (exit 4), whatever the foreign-key check can still read. */
	if (store_foreign_key_check(&s, &nfk, &err) < 0 && !strcmp(res.s, "ok")) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
		store_close(&s);
		goto out;
	}
	store_close(&s);
	printf("integrity_check: %s\n", res.s);
	if (err.len)
		printf("foreign_key_check: not done (%s)\n", err.s);
	else
		printf("foreign_key_check: %d violation(s)\n", nfk);
	if (strcmp(res.s, "ok") || nfk || err.len)
		ret = EXIT_CHECK;
out:
	buf_release(&err);
	buf_release(&res);
	return ret;
}

static int sub_info(int argc, char **argv, struct cli_ctx *ctx)
{
	int as_json = 0, n, rc;
	struct cli_opt opts[] = {
		OPT_FLAG("json", 0, &as_json, "print it as JSON"),
		OPT_END,
	};
	struct cli_spec spec = { "store info", "[--json]",
		"Rows per table, schema version, path.\n", opts, NULL, 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	return n ? cli_usage(&spec) : store_info(ctx, as_json);
}

static int sub_check(int argc, char **argv, struct cli_ctx *ctx)
{
	int n, rc;
	struct cli_spec spec = { "store check", "",
		"SQLite's integrity and foreign-key checks (exit 4 when not ok, a damaged page\n"
		"included: the report says where; exit 1 when the store cannot be opened).\n", NULL, NULL, 0,
		NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	return n ? cli_usage(&spec) : store_check(ctx);
}

static int sub_init(int argc, char **argv, struct cli_ctx *ctx)
{
	struct store s;
	struct buf err = BUF_INIT;
	int n, r;
	struct cli_spec spec = { "store init", "",
		"Creates the store (the current schema) if it does not exist.\n", NULL, NULL, 0, NULL,
		NULL };

	if ((r = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return r;
	if (n)
		return cli_usage(&spec);
	r = store_open(&s, ctx->db_path, STORE_CREATE, &err);
	if (r == 0) {
		store_close(&s);
		printf("store %s ready (schema v%d)\n", ctx->db_path, STORE_SCHEMA_VERSION);
	} else {
		cli_fail(EXIT_FAIL, "%s", err.s);
	}
	buf_release(&err);
	return r ? EXIT_FAIL : EXIT_OK;
}

static int sub_migrate(int argc, char **argv, struct cli_ctx *ctx)
{
	struct store s;
	struct buf err = BUF_INIT;
	int n, r;
	struct cli_spec spec = { "store migrate", "",
		"Upgrades an older store in place to this kforge's schema (each step a\n"
		"transaction; copy the file first to keep the original). pack, site and\n"
		"report read an older store through a migrated copy; search, verify and\n"
		"baselines import migrate it in place.\n", NULL, NULL, 0, NULL, NULL };

	if ((r = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return r;
	if (n)
		return cli_usage(&spec);
	r = store_open(&s, ctx->db_path, STORE_QUIET, &err);
	if (r == 0) {
		if (s.version < STORE_SCHEMA_VERSION)
			printf("migrated store %s from schema v%d to v%d\n", ctx->db_path, s.version,
			       STORE_SCHEMA_VERSION);
		else
			printf("store %s has schema v%d already\n", ctx->db_path, s.version);
		store_close(&s);
	} else {
		cli_fail(EXIT_FAIL, "%s", err.s);
	}
	buf_release(&err);
	return r ? EXIT_FAIL : EXIT_OK;
}

int cmd_store(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct cli_sub subs[] = {
		{ "info", sub_info, "[--json]", "rows per table, schema version, path" },
		{ "check", sub_check, "", "SQLite's integrity and foreign-key checks (exit 4 when not ok)" },
		{ "init", sub_init, "", "create the store if it does not exist" },
		{ "migrate", sub_migrate, "", "upgrade an older store in place to this kforge's schema" },
		{ NULL, NULL, NULL, NULL },
	};
	return cli_dispatch("store", "Inspects the store (--db PATH, KFORGE_DB or ./kforge.db).\n",
			    subs, argc, argv, ctx);
}
