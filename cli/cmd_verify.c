#include "cmds.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cudadrv.h"
#include "core/json.h"
#include "problem/problem_list.h"
#include "core/log.h"
#include "store/store.h"
#include "verifier/verify.h"
#include "engine/engine.h"

static const char verify_doc[] =
	"Re-verifies, on this machine's GPUs, each problem's K best correct kernels\n"
	"(default 3) and the best kernel of each idea category, under protocol\n"
	"verify-v4: 20 fresh, secret seeds over several input distributions (normal, a\n"
	"wide uniform draw bounded per operator, edge values, recurrent models' alive\n"
	"parameters), up to 32 sensitivity trials (one tensor or a recurrent model's\n"
	"early steps redrawn: the output must follow; tensors found without influence\n"
	"are listed), repeated runs must agree, 500 timed trials drawn from the same\n"
	"mix, 4 of them on fresh secret inputs (a kernel much faster on replayed inputs\n"
	"fails), compute-sanitizer memcheck and racecheck on each problem's best kernel\n"
	"over a secret number of launches (skipped, with the reason, where the tool\n"
	"cannot run or a tool run takes too long). Verdicts are stored per GPU model.\n"
	"On a host with GPUs of several models, each model is verified in turn (its\n"
	"own selection and verdicts) unless --gpu-model or KFORGE_GPU_MODEL names one.\n"
	"Kernels that fail, or pass with a review flag, are left out of \"best\" in\n"
	"reports, the site and verified dataset exports. Each correct kernel re-timed\n"
	"gets a CUPTI profile of one extra launch block, apart from its timing\n"
	"(docs/engine.md \"Profiles\"; --no-profile).\n";

/* One model's verification (model "": the engine's default): its verdicts
 * printed, or added to all (--json).
 * EXIT_OK, EXIT_CHECK (a kernel failed) or the error's code (said). */
static int verify_model(struct verify_config *cfg, struct cli_ctx *ctx, const char *model,
			json_t *all)
{
	struct verify_backend be;
	struct verify_report rep;
	struct buf err = BUF_INIT;
	int rc, i;

	memset(&be, 0, sizeof(be));
	verify_report_init(&rep);
	cfg->gpu_model = model;
	if ((rc = verify_backend_engine(&be, cfg, ctx->root, &err)) < 0) {
		rc = cli_fail(rc == KF_ENOGPU ? EXIT_NOGPU : rc == KF_ENOMODEL ? EXIT_USAGE : EXIT_FAIL,
			      "%s", err.s);
		goto out;
	}
	if (verify_run(cfg, &be, &rep, &err)) {
		rc = cli_fail(EXIT_FAIL, "verify: %s", err.s);
		goto out;
	}
	for (i = 0; i < rep.n && all; i++) {
		struct verify_item *it = &rep.items[i];
		json_t *o = json_pack("{s:s,s:s,s:s,s:s?,s:f,s:O,s:s}",
			"problem_id", it->problem_id, "kernel_hash", it->kernel_hash,
			"verdict", it->verdict, "failed_check",
			it->failed_check[0] ? it->failed_check : NULL, "speedup_eager",
			it->speedup_eager, "review_flags", it->flags, "gpu_name", be.gpu_name(be.ctx));
		if (json_array_size(it->no_influence))
			json_object_set(o, "no_influence", it->no_influence);
		json_array_append_new(all, o);
	}
	for (i = 0; i < rep.n && !all; i++) {
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
	if (!all)
		printf("%d verified (%d of them flagged: not counted), %d failed on %s\n", rep.verified,
		       rep.flagged, rep.failed, be.gpu_name(be.ctx));
	rc = rep.failed ? EXIT_CHECK : EXIT_OK;
out:
	if (be.ctx)
		verify_backend_release(&be);
	verify_report_release(&rep);
	buf_release(&err);
	return rc;
}

int cmd_verify(int argc, char **argv, struct cli_ctx *ctx)
{
	struct verify_config cfg;
	struct problem_list pl;
	struct buf err = BUF_INIT;
	const char *problems = NULL, *gpu_model = NULL;
	const char **ids = NULL;
	json_t *models = NULL, *all = NULL;
	char exe[PATH_MAX];
	ssize_t n;
	int json = 0, rc = EXIT_FAIL, i, nargs, done = 0;
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
		OPT_STR("gpu-model", 0, &gpu_model, "NAME",
			"verify on this GPU model only (as `kforge gpu-info --models` names it; "
			"else KFORGE_GPU_MODEL; default: on each model of this host in turn)"),
		OPT_FLAG("json", 0, &json, "print the verdicts as JSON"),
		OPT_END,
	};
	struct cli_spec spec = { "verify", "[--top K] [--problems LIST] [--gpu-model NAME] [options]",
		verify_doc, opts,
		"Exit status 4 when any kernel failed verification; 3 without a GPU;\n"
		"2 when no GPU here is of the --gpu-model asked for.\n", 0, NULL, NULL };

	memset(&cfg, 0, sizeof(cfg));
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
	/* The model chosen, else every model here: verdicts are per model,
	 * and one engine serves one model (docs/engine.md "Supervisor"). */
	if (engine_gpu_model_wanted(gpu_model)) {
		models = json_pack("[{s:s}]", "name", engine_gpu_model_wanted(gpu_model));
	} else if (engine_gpu_models(&models, &err) < 0) {
		/* No GPU: the engine's open says so, after migrating the store
		 * as a writer does. */
		models = json_pack("[{s:s}]", "name", "");
	}
	if (json_array_size(models) > 1)
		log_info("verify: %zu GPU models here; verifying on each in turn", json_array_size(models));
	all = json ? json_array() : NULL;
	rc = EXIT_OK;
	for (i = 0; i < (int)json_array_size(models); i++) {
		int r = verify_model(&cfg, ctx, jget_str(json_array_get(models, (size_t)i), "name", ""),
				     all);
		/* One model's failure does not stop the others: an error's code
		 * wins over a failed kernel's. */
		done += r == EXIT_OK || r == EXIT_CHECK;
		if (r != EXIT_OK && (rc == EXIT_OK || rc == EXIT_CHECK))
			rc = r;
	}
	if (all && done) {
		char *s = json_dumps(all, JSON_INDENT(2) | JSON_SORT_KEYS);
		puts(s);
		free(s);
	}
out:
	json_decref(models);
	json_decref(all);
	problem_list_release(&pl);
	free(ids);
	buf_release(&err);
	return rc;
}
