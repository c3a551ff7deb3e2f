#include "cmds.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cudadrv.h"
#include "problem/problem_list.h"
#include "core/log.h"
#include "store/store.h"
#include "verifier/verify.h"

static const char verify_doc[] =
	"Re-verifies, on this machine's GPU, each problem's K best correct kernels\n"
	"(default 3) and the best kernel of each idea category, under protocol\n"
	"verify-v4: 20 fresh, secret seeds over several input distributions (normal, a\n"
	"wide uniform draw bounded per operator, edge values, recurrent models' alive\n"
	"parameters), up to 32 sensitivity trials (one tensor or a recurrent model's\n"
	"early steps redrawn: the output must follow; tensors found without influence\n"
	"are listed), repeated runs must agree, 500 timed trials drawn from the same\n"
	"mix, 4 of them on fresh secret inputs (a kernel much faster on replayed inputs\n"
	"fails), compute-sanitizer memcheck and racecheck on each problem's best kernel\n"
	"over a secret number of launches (skipped, with the reason, where the tool\n"
	"cannot run or a tool run takes too long). Verdicts are stored per GPU model;\n"
	"kernels that fail, or pass with a review flag, are left out of \"best\" in\n"
	"reports, the site and verified\n"
	"dataset exports. Each correct kernel re-timed gets a CUPTI profile of one extra\n"
	"launch block, apart from its timing (docs/engine.md \"Profiles\"; --no-profile).\n";

int cmd_verify(int argc, char **argv, struct cli_ctx *ctx)
{
	struct verify_config cfg;
	struct verify_backend be;
	struct verify_report rep;
	struct problem_list pl;
	struct buf err = BUF_INIT;
	const char *problems = NULL;
	const char **ids = NULL;
	char exe[PATH_MAX];
	ssize_t n;
	int json = 0, rc = EXIT_FAIL, i, nargs;
	struct cli_opt opts[] = {
		OPT_INT("top", 0, &cfg.top_k, "K", 1, 1000, "best correct kernels per problem (3)"),
		OPT_STR("problems", 0, &problems, "LIST", "only these problems (as for search)"),
		OPT_SET("no-category", 0, &cfg.per_category, 0,
			"not the best kernel of each idea category"),
		OPT_SET("no-sanitizer", 0, &cfg.sanitizer, 0, "no compute-sanitizer runs"),
		OPT_STR("sanitizer", 0, &cfg.sanitizer_path, "PATH",
			"the compute-sanitizer binary (default: from PATH, else CUDA_HOME/bin)"),
		OPT_DOUBLE("sanitizer-timeout", 0, &cfg.sanitizer_wall_s, "S", 1, 86400,
			   "skip a sanitizer tool run that takes over S seconds (600)"),
		OPT_DOUBLE("max-timing", 0, &cfg.max_timing_s, "S", 1, 86400,
			   "stop a kernel's timed trials after S seconds of kernel time "
			   "(at least 10 trials)"),
		OPT_SET("no-profile", 0, &cfg.profile, 0,
			"no CUPTI profile of the kernels re-timed (KFORGE_NO_PROFILE=1 too)"),
		OPT_FLAG("json", 0, &json, "print the verdicts as JSON"),
		OPT_END,
	};
	struct cli_spec spec = { "verify", "[--top K] [--problems LIST] [options]", verify_doc, opts,
		"Exit status 4 when any kernel failed verification; 3 without a GPU.\n", 0, NULL, NULL };

	memset(&cfg, 0, sizeof(cfg));
	memset(&be, 0, sizeof(be));
	cfg.top_k = 3;
	cfg.per_category = 1;
	cfg.sanitizer = 1;
	cfg.profile = 1;
	cfg.collect_protocol = "collect-%";
	if ((rc = cli_parse(&spec, argc, argv, ctx, &nargs)) != CLI_GO)
		return rc;
	rc = EXIT_FAIL;
	if (nargs > 0)
		return cli_fail(EXIT_USAGE, "verify: unexpected argument '%s'", argv[1]);
	cfg.db_path = ctx->db_path;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	cfg.kforge_path = exe;
	problem_list_init(&pl);
	verify_report_init(&rep);
	if (problems) {
		if ((rc = problem_list_resolve(&pl, ctx->root, problems, &err)) < 0) {
			rc = cli_fail(rc == PROBLEM_UNKNOWN ? EXIT_USAGE : EXIT_FAIL, "%s", err.s);
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
	if ((rc = verify_backend_engine(&be, &cfg, ctx->root, &err)) < 0) {
		rc = cli_fail(rc == KF_ENOGPU ? EXIT_NOGPU : EXIT_FAIL, "%s", err.s);
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
			json_t *o = json_pack("{s:s,s:s,s:s,s:s?,s:f,s:O}",
				"problem_id", it->problem_id, "kernel_hash", it->kernel_hash,
				"verdict", it->verdict, "failed_check",
				it->failed_check[0] ? it->failed_check : NULL, "speedup_eager",
				it->speedup_eager, "review_flags", it->flags);
			if (json_array_size(it->no_influence))
				json_object_set(o, "no_influence", it->no_influence);
			json_array_append_new(a, o);
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
				printf("  flagged (not counted as verified):");
				json_array_foreach(it->flags, k, f)
					printf(" %s", json_string_value(f));
			}
			if (json_array_size(it->no_influence)) {
				size_t k;
				json_t *f;
				printf("  no influence:");
				json_array_foreach(it->no_influence, k, f)
					printf("%s %s", k ? "," : "", json_string_value(f));
			}
			printf("\n");
		}
		printf("%d verified (%d of them flagged: not counted), %d failed on %s\n", rep.verified,
		       rep.flagged, rep.failed, be.gpu_name(be.ctx));
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
