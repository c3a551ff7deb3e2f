#include "cmds.h"
#include "problem/problem_list.h"
#include "core/json.h"
#include "store/store.h"
#include "store/store_problems.h"

#include <stdlib.h>
#include <string.h>

static int cmp_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int list_baselines(struct cli_ctx *ctx, const char *gpu, int as_json)
{
	struct store s;
	struct buf err = BUF_INIT;
	json_t *rows;
	int ret = EXIT_OK;
	size_t i;
	json_t *r;

	if (store_open(&s, ctx->db_path, STORE_READONLY, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	rows = store_baselines_list(&s, gpu, &err);
	store_close(&s);
	if (!rows) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	if (as_json) {
		struct buf b = BUF_INIT;
		json_add_pretty(&b, rows);
		printf("%s\n", b.s);
		buf_release(&b);
	} else {
		printf("%-52s %-26s %-8s %10s %9s\n", "problem", "gpu", "variant", "mean ms", "std ms");
		json_array_foreach(rows, i, r)
			printf("%-52s %-26s %-8s %10.4f %9.4f\n", jget_str(r, "problem_id", ""),
			       jget_str(r, "gpu_name", ""), jget_str(r, "variant", ""),
			       jget_num(r, "mean_ms", 0), jget_num(r, "std_ms", 0));
		printf("%zu baseline(s)\n", json_array_size(rows));
	}
	json_decref(rows);
out:
	buf_release(&err);
	return ret;
}

static const char import_args[] = "FILE --gpu NAME --variant eager|eager_notf32|compile";
static const char list_args[] = "[--gpu NAME] [--json]";

static int sub_list(int argc, char **argv, struct cli_ctx *ctx)
{
	const char *gpu = NULL;
	int as_json = 0, n, rc;
	struct cli_opt opts[] = {
		OPT_STR("gpu", 0, &gpu, "NAME", "only this GPU's baselines"),
		OPT_FLAG("json", 0, &as_json, "print them as JSON"),
		OPT_END,
	};
	struct cli_spec spec = { "baselines list", list_args,
		"Lists the baselines in the store, per problem and GPU.\n", opts, NULL, 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n != 0)
		return cli_usage(&spec);
	return list_baselines(ctx, gpu, as_json);
}

static int sub_import(int argc, char **argv, struct cli_ctx *ctx)
{
	const char *gpu = NULL, *variant = NULL, *problems = NULL;
	const char **only = NULL;
	struct problem_list pl;
	struct store s;
	struct buf err = BUF_INIT, skipped = BUF_INIT;
	int n, c, changed = 0;
	struct cli_opt opts[] = {
		OPT_STR("gpu", 0, &gpu, "NAME",
			"the GPU they were measured on (e.g. \"NVIDIA H100 80GB HBM3\"; required)"),
		OPT_STR("variant", 0, &variant, "V",
			"eager, eager_notf32 (eager with TF32 off) or compile (torch.compile; required)"),
		OPT_STR("problems", 0, &problems, "LIST",
			"only these problems (the PROBLEMS syntax of kforge search: level2, 1-10, all)"),
		OPT_END,
	};
	struct cli_spec spec = { "baselines import", import_args,
		"Loads KernelBench-layout baseline JSON\n"
		"({\"level1\": {\"<file>.py\": {\"mean\": ms, ...}}}) measured on GPU NAME into the\n"
		"store; a re-import replaces that GPU's and variant's rows (a row the store\n"
		"holds already, all but its import time, is left as it is). With --problems,\n"
		"only those problems' (and their problems rows): make dataset passes PROBLEMS.\n", opts, NULL, 0, NULL, NULL };

	if ((c = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return c;
	if (n != 1 || !gpu || !variant) {
		fprintf(stderr, "kforge baselines import: needs FILE, --gpu NAME and --variant eager|eager_notf32|compile\n");
		return cli_usage(&spec);
	}
	problem_list_init(&pl);
	if (problems) {
		if ((c = problem_list_resolve(&pl, ctx->root, problems, &err)) < 0) {
			c = cli_fail(c == PROBLEM_UNKNOWN ? EXIT_USAGE : EXIT_FAIL, "%s", err.s);
			goto out;
		}
		only = calloc((size_t)pl.n + 1, sizeof(*only));
		if (!only) {
			c = cli_fail(EXIT_FAIL, "out of memory");
			goto out;
		}
		for (int i = 0; i < pl.n; i++)
			only[i] = pl.v[i].id;
		qsort(only, (size_t)pl.n, sizeof(*only), cmp_id);
	}
	if (store_open(&s, ctx->db_path, STORE_CREATE, &err) < 0) {
		c = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	n = store_import_baselines(&s, ctx->root, argv[1], gpu, variant, only, (size_t)pl.n,
				   &changed, &skipped, &err);
	store_close(&s);
	if (n < 0) {
		c = cli_fail(EXIT_FAIL, "%s", err.s);
	} else {
		printf("imported %d %s baseline(s) for %s (%d new or changed, %d already in the store)\n",
		       n, variant, gpu, changed, n - changed);
		if (skipped.len) {
			fputs("kforge: skipped:\n", stderr);
			cli_eputs(skipped.s);
		}
		c = EXIT_OK;
	}
out:
	free(only);
	problem_list_release(&pl);
	buf_release(&err);
	buf_release(&skipped);
	return c;
}

int cmd_baselines(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct cli_sub subs[] = {
		{ "import", sub_import, import_args,
		  "load KernelBench-layout baseline JSON measured on one GPU into the store" },
		{ "list", sub_list, list_args, "the baselines in the store, per problem and GPU" },
		{ NULL, NULL, NULL, NULL },
	};
	return cli_dispatch("baselines", "Imports and lists PyTorch baseline timings per GPU.\n", subs,
			    argc, argv, ctx);
}
