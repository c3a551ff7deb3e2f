#include "cmds.h"
#include "core/json.h"
#include "core/store.h"
#include "core/store_schema.h"

#include <string.h>

const char usage_store[] =
	"kforge store info [--json] | check | init\n"
	"  init    create the store (schema v1) if it does not exist\n"
	"  info    rows per table, schema version, path\n"
	"  check   PRAGMA integrity_check and foreign_key_check (exit 4 when not ok)\n";

static int store_info(struct cli_ctx *ctx, int as_json)
{
	struct store s;
	struct buf err = BUF_INIT;
	json_t *out = json_object(), *counts = NULL;
	int ret = EXIT_OK;

	if (store_open(&s, ctx->db_path, STORE_READONLY, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	if (!(counts = store_row_counts(&s, &err)))
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
	store_close(&s);
	if (ret)
		goto out;
	json_object_set_new(out, "path", json_string(ctx->db_path));
	json_object_set_new(out, "schema_version", json_integer(STORE_SCHEMA_VERSION));
	json_object_set(out, "rows", counts);
	if (as_json) {
		struct buf b = BUF_INIT;
		json_add_pretty(&b, out);
		printf("%s\n", b.s);
		buf_release(&b);
	} else {
		const char *k;
		json_t *v;
		printf("store %s (schema v%d)\n", ctx->db_path, STORE_SCHEMA_VERSION);
		for (int i = 0; store_tables[i]; i++) {
			k = store_tables[i];
			v = json_object_get(counts, k);
			printf("  %-16s %lld\n", k, (long long)json_integer_value(v));
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
	if (store_integrity_check(&s, &res, &err) < 0 ||
	    store_foreign_key_check(&s, &nfk, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
		store_close(&s);
		goto out;
	}
	store_close(&s);
	printf("integrity_check: %s\nforeign_key_check: %d violation(s)\n", res.s, nfk);
	if (strcmp(res.s, "ok") || nfk)
		ret = EXIT_CHECK;
out:
	buf_release(&err);
	buf_release(&res);
	return ret;
}

int cmd_store(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, as_json = 0;

	while ((c = cli_getopt(argc, argv, "store", "h", opts)) != -1) {
		if (c == -2)
			return EXIT_USAGE;
		if (c == 'j')
			as_json = 1;
	}
	if (optind >= argc)
		return cli_usage("store");
	if (!strcmp(argv[optind], "info"))
		return store_info(ctx, as_json);
	if (!strcmp(argv[optind], "check"))
		return store_check(ctx);
	if (!strcmp(argv[optind], "init")) {
		struct store s;
		struct buf err = BUF_INIT;
		int r = store_open(&s, ctx->db_path, STORE_CREATE, &err);
		if (r == 0) {
			store_close(&s);
			printf("store %s ready (schema v%d)\n", ctx->db_path, STORE_SCHEMA_VERSION);
		} else {
			cli_fail(EXIT_FAIL, "%s", err.s);
		}
		buf_release(&err);
		return r ? EXIT_FAIL : EXIT_OK;
	}
	fprintf(stderr, "kforge store: unknown subcommand '%s'\n", argv[optind]);
	return cli_usage("store");
}
