#include "cmds.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/problem_list.h"
#include "core/log.h"
#include "core/store.h"
#include "verifier/verify.h"

const char usage_verify[] =
	"kforge verify [--top K] [--problems LIST] [--no-category] [--no-sanitizer]\n"
	"              [--sanitizer-timeout S] [--max-timing S] [--json]\n"
	"  Re-verifies, on this machine's GPU, each problem's K best correct kernels\n"
	"  (default 3) and the best kernel of each idea category, under protocol\n"
	"  verify-v3: 20 fresh, secret seeds over several input distributions (normal, a wide\n"
	"  uniform draw bounded per operator, edge values), repeated runs must agree,\n"
	"  500 timed trials, compute-sanitizer memcheck and racecheck on each\n"
	"  problem's best kernel (skipped, with the reason, where the tool cannot run\n"
	"  or a tool run takes over S seconds, default 600). --max-timing S stops a\n"
	"  kernel's timed trials after S seconds of kernel time (at least 10 trials).\n"
	"  Verdicts are stored per GPU model; kernels that fail are left out of\n"
	"  \"best\" in reports, the site and verified dataset exports.\n"
	"  Exit status 4 when any kernel failed verification.\n";

int cmd_verify(int argc, char **argv, struct cli_ctx *ctx)
{
	enum { O_TOP = 256, O_PROBLEMS, O_NOCAT, O_NOSAN, O_JSON, O_SAN, O_SANT, O_MAXT };
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "top", required_argument, NULL, O_TOP },
		{ "problems", required_argument, NULL, O_PROBLEMS },
		{ "no-category", no_argument, NULL, O_NOCAT },
		{ "no-sanitizer", no_argument, NULL, O_NOSAN },
		{ "sanitizer", required_argument, NULL, O_SAN },
		{ "json", no_argument, NULL, O_JSON },
		{ "sanitizer-timeout", required_argument, NULL, O_SANT },
		{ "max-timing", required_argument, NULL, O_MAXT },
		{ NULL, 0, NULL, 0 },
	};
	struct verify_config cfg;
	struct verify_backend be;
	struct verify_report rep;
	struct problem_list pl;
	struct buf err = BUF_INIT;
	const char *problems = NULL;
	const char **ids = NULL;
	char exe[PATH_MAX];
	ssize_t n;
	int c, json = 0, rc = EXIT_FAIL, i;

	memset(&cfg, 0, sizeof(cfg));
	memset(&be, 0, sizeof(be));
	cfg.top_k = 3;
	cfg.per_category = 1;
	cfg.sanitizer = 1;
	cfg.collect_protocol = "collect-%";
	cfg.db_path = ctx->db_path;
	while ((c = cli_getopt(argc, argv, "verify", "h", opts)) != -1) {
		switch (c) {
		case -2: return EXIT_USAGE;
		case O_TOP:
			cfg.top_k = atoi(optarg);
			if (cfg.top_k < 1 || cfg.top_k > 1000)
				return cli_fail(EXIT_USAGE, "--top: 1..1000");
			break;
		case O_PROBLEMS: problems = optarg; break;
		case O_NOCAT: cfg.per_category = 0; break;
		case O_NOSAN: cfg.sanitizer = 0; break;
		case O_SAN: cfg.sanitizer_path = optarg; break;
		case O_SANT:
		case O_MAXT: {
			char *end;
			double v = strtod(optarg, &end);
			if (*end || !(v >= 1 && v <= 86400))
				return cli_fail(EXIT_USAGE, "--%s: seconds, 1..86400",
						c == O_SANT ? "sanitizer-timeout" : "max-timing");
			*(c == O_SANT ? &cfg.sanitizer_wall_s : &cfg.max_timing_s) = v;
			break;
		}
		case O_JSON: json = 1; break;
		default: return cli_usage("verify");
		}
	}
	if (optind < argc)
		return cli_fail(EXIT_USAGE, "verify: unexpected argument '%s'", argv[optind]);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	cfg.kforge_path = exe;
	problem_list_init(&pl);
	verify_report_init(&rep);
	if (problems) {
		if (problem_list_resolve(&pl, ctx->root, problems, &err)) {
			rc = cli_fail(EXIT_USAGE, "%s", err.s);
			goto out;
		}
		ids = calloc((size_t)pl.n + 1, sizeof(*ids));
		if (!ids)
			goto out;
		for (i = 0; i < pl.n; i++)
			ids[i] = pl.v[i].id;
		cfg.problems = ids;
	}
	{
		/* The engine would create a missing store and verify nothing, exit 0. */
		struct store st;
		if (store_open(&st, ctx->db_path, STORE_READONLY, &err) < 0) {
			rc = cli_fail(EXIT_FAIL, "verify: %s", err.s);
			goto out;
		}
		store_close(&st);
	}
	if (verify_backend_engine(&be, &cfg, ctx->root, &err)) {
		rc = cli_fail(strstr(err.s, "GPU") || strstr(err.s, "driver") ? EXIT_NOGPU :
			      EXIT_FAIL, "%s", err.s);
		goto out;
	}
	if (verify_run(&cfg, &be, &rep, &err)) {
		rc = cli_fail(EXIT_FAIL, "verify: %s", err.s);
		goto out;
	}
	if (json) {
		json_t *a = json_array();
		for (i = 0; i < rep.n; i++) {
			struct verify_item *it = &rep.items[i];
			json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s?,s:f,s:O}",
				"problem_id", it->problem_id, "kernel_hash", it->kernel_hash,
				"verdict", it->verdict, "failed_check",
				it->failed_check[0] ? it->failed_check : NULL, "speedup_eager",
				it->speedup_eager, "review_flags", it->flags));
		}
		char *s = json_dumps(a, JSON_INDENT(2) | JSON_SORT_KEYS);
		puts(s);
		free(s);
		json_decref(a);
	} else {
		for (i = 0; i < rep.n; i++) {
			struct verify_item *it = &rep.items[i];
			printf("%-44s %.12s  %-8s %s", it->problem_id, it->kernel_hash, it->verdict,
			       it->failed_check);
			if (json_array_size(it->flags)) {
				size_t k;
				json_t *f;
				printf("  review:");
				json_array_foreach(it->flags, k, f)
					printf(" %s", json_string_value(f));
			}
			printf("\n");
		}
		printf("%d verified, %d failed on %s\n", rep.verified, rep.failed,
		       be.gpu_name(be.ctx));
	}
	rc = rep.failed ? EXIT_CHECK : EXIT_OK;
out:
	if (be.ctx)
		verify_backend_release(&be);
	verify_report_release(&rep);
	problem_list_release(&pl);
	free(ids);
	buf_release(&err);
	return rc;
}
