#include "cmds.h"
#include "core/json.h"
#include "core/store.h"
#include "core/store_problems.h"

#include <string.h>

const char usage_baselines[] =
	"kforge baselines import FILE --gpu NAME --variant eager|compile | list [--gpu NAME] [--json]\n"
	"  import  load KernelBench-layout baseline JSON ({\"level1\": {\"<file>.py\": {\"mean\": ms, ...}}})\n"
	"          measured on GPU NAME (e.g. \"NVIDIA H100 80GB HBM3\") into the store\n"
	"  list    the baselines in the store, per problem and GPU\n";

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

int cmd_baselines(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, 'g' },
		{ "variant", required_argument, NULL, 'V' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *gpu = NULL, *variant = NULL;
	int c, as_json = 0;

	while ((c = cli_getopt(argc, argv, "baselines", "h", opts)) != -1) {
		if (c == -2)
			return EXIT_USAGE;
		if (c == 'g')
			gpu = optarg;
		else if (c == 'V')
			variant = optarg;
		else if (c == 'j')
			as_json = 1;
	}
	if (optind >= argc)
		return cli_usage("baselines");
	if (!strcmp(argv[optind], "list"))
		return list_baselines(ctx, gpu, as_json);
	if (!strcmp(argv[optind], "import")) {
		struct store s;
		struct buf err = BUF_INIT, skipped = BUF_INIT;
		int n;
		if (optind + 2 != argc || !gpu || !variant) {
			fprintf(stderr, "kforge baselines import: needs FILE, --gpu NAME and --variant eager|compile\n");
			return cli_usage("baselines");
		}
		if (store_open(&s, ctx->db_path, STORE_CREATE, &err) < 0) {
			c = cli_fail(EXIT_FAIL, "%s", err.s);
			buf_release(&err);
			return c;
		}
		n = store_import_baselines(&s, ctx->root, argv[optind + 1], gpu, variant, &skipped, &err);
		store_close(&s);
		if (n < 0) {
			c = cli_fail(EXIT_FAIL, "%s", err.s);
		} else {
			printf("imported %d %s baseline(s) for %s\n", n, variant, gpu);
			if (skipped.len)
				fprintf(stderr, "kforge: skipped:\n%s", skipped.s);
			c = EXIT_OK;
		}
		buf_release(&err);
		buf_release(&skipped);
		return c;
	}
	fprintf(stderr, "kforge baselines: unknown subcommand '%s'\n", argv[optind]);
	return cli_usage("baselines");
}
