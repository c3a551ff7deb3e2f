#include "cmds.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "problem/problem.h"
#include "problem/sensitivity.h"
#include "store/store.h"
#include "store/store_eval.h"
#include "store/store_profile.h"
#include "engine/candidate.h"
#include "engine/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char eval_doc[] =
	"Compiles, checks and times one candidate file (docs/formats.md) against\n"
	"PROBLEM (\"level1/019_ReLU\", \"19\", \"ReLU\") on this machine's GPU, prints\n"
	"the verdict and records it in the store (--db; --compile-only records too)\n"
	"and says where. The same candidate on the same GPU under the same protocol\n"
	"is served from the store unless --force. PROBLEM takes KernelBench's\n"
	"names too (\"19_ReLU.py\", \"level2/12_Gemm_Multiply_LeakyReLU\").\n"
	"--profile adds, for a correct kernel, a CUPTI profile of one extra launch\n"
	"block (docs/engine.md \"Profiles\"), recorded with the evaluation.\n";

/* The evaluation's recorded profile, or NULL; *note: why there is none,
 * when the worker said (owned by the caller). */
static json_t *eval_profile(struct cli_ctx *ctx, const char *eval_id, char **note)
{
	struct store s;
	struct buf err = BUF_INIT;
	json_t *p = NULL, *row = NULL, *env;

	*note = NULL;
	if (!eval_id[0] || store_open(&s, ctx->db_path, STORE_READONLY, &err) < 0) {
		buf_release(&err);
		return NULL;
	}
	if (store_profile_get(&s, eval_id, &p, &err) < 0)
		p = NULL;
	if (!p && store_eval_get(&s, eval_id, &row, &err) == 0 && row) {
		env = json_loads(jget_str(row, "env", "{}"), 0, NULL);
		if (json_string_value(json_object_get(env, "profile_note")))
			*note = strdup(json_string_value(json_object_get(env, "profile_note")));
		json_decref(env);
		json_decref(row);
	}
	store_close(&s);
	buf_release(&err);
	return p;
}

static void print_profile(const json_t *p, const char *note)
{
	if (!p) {
		printf("profile: none%s%s%s\n", note ? " (" : "", note ? note : "", note ? ")" : "");
		return;
	}
	printf("profile: %s-bound, %lld launches, %.4f ms in kernels, dram %.1f%%, sm %.1f%%, "
	       "tensor %.1f%%, occupancy %.1f%%, L2 hits %.1f%% (cost %.1f ms)\n",
	       jget_str(p, "limiter", "?"), (long long)jget_int(p, "launches", 0),
	       jget_num(p, "kernel_ms", 0), jget_num(p, "dram_pct", 0), jget_num(p, "sm_pct", 0),
	       jget_num(p, "tensor_pct", 0), jget_num(p, "occupancy_pct", 0),
	       jget_num(p, "l2_hit_pct", 0), jget_num(p, "cost_ms", 0));
}

static json_t *kernel_stats(struct cli_ctx *ctx, const char *compile_id)
{
	struct store s;
	struct buf err = BUF_INIT;
	json_t *rows = NULL;

	if (!compile_id[0] || store_open(&s, ctx->db_path, STORE_READONLY, &err) < 0) {
		buf_release(&err);
		return json_array();
	}
	rows = store_compile_kernels(&s, compile_id, &err);
	store_close(&s);
	buf_release(&err);
	return rows ? rows : json_array();
}

static json_t *outcome_json(const struct eval_outcome *o, const char *problem, json_t *stats,
			    const char *db)
{
	json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:f,s:f}", "problem", problem,
			      "status", o->status, "failed_check", o->failed_check, "detail",
			      o->detail.s, "kernel_hash", o->kernel_hash, "eval_id", o->eval_id,
			      "compile_id", o->compile_id, "gpu", o->gpu_name, "cached", o->cached,
			      "compile_ms", o->compile_ms, "harness_ms", o->harness_ms);
	struct { const char *k; double v; } nums[] = {
		{ "max_abs_err", o->max_abs_err }, { "max_rel_err", o->max_rel_err },
		{ "time_mean_ms", o->time_mean_ms }, { "time_median_ms", o->time_median_ms },
		{ "time_std_ms", o->time_std_ms }, { "time_min_ms", o->time_min_ms },
		{ "time_max_ms", o->time_max_ms }, { "cupti_mean_ms", o->cupti_mean_ms },
		{ "cupti_median_ms", o->cupti_median_ms }, { "speedup_eager", o->speedup_eager },
		{ "speedup_compile", o->speedup_compile }, { "roofline_ms", o->roofline_ms },
		{ "sol_ms", o->sol_ms },
	};
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		json_object_set_new(j, nums[i].k, isfinite(nums[i].v) && nums[i].v != 0
						  ? json_real(nums[i].v) : json_null());
	json_object_set_new(j, "mismatches", json_integer(o->mismatches));
	json_object_set_new(j, "kernels", stats);
	json_object_set_new(j, "store", json_string(db));
	return j;
}

static void print_human(const struct eval_outcome *o, const char *problem, const json_t *stats,
			const char *db)
{
	size_t i;
	json_t *k;

	printf("status: %s%s%s%s\n", o->status, o->failed_check[0] ? " (" : "", o->failed_check,
	       o->failed_check[0] ? ")" : "");
	printf("problem: %s  kernel: %.16s  gpu: %s%s\n", problem, o->kernel_hash,
	       o->gpu_name[0] ? o->gpu_name : "(none: compile only)", o->cached ? "  [cached]" : "");
	if (o->compile_ms > 0)
		printf("compile: %.1f ms\n", o->compile_ms);
	json_array_foreach(stats, i, k)
		printf("  %s: %lld registers, %lld B shared, %lld B spill stores, %lld B spill loads, %lld B stack\n",
		       jget_str(k, "kernel_name", "?"), (long long)jget_int(k, "registers", 0),
		       (long long)jget_int(k, "shared_bytes", 0), (long long)jget_int(k, "spill_store_bytes", 0),
		       (long long)jget_int(k, "spill_load_bytes", 0), (long long)jget_int(k, "stack_bytes", 0));
	if (!strcmp(o->status, "correct") || !strcmp(o->status, "incorrect"))
		printf("check: max abs err %.3g, max rel err %.3g, %lld mismatches\n", o->max_abs_err,
		       o->max_rel_err, o->mismatches);
	if (o->time_mean_ms > 0) {
		printf("time: mean %.4f ms, median %.4f, std %.4f, min %.4f, max %.4f\n", o->time_mean_ms,
		       o->time_median_ms, o->time_std_ms, o->time_min_ms, o->time_max_ms);
		if (o->cupti_mean_ms > 0)
			printf("cupti: mean %.4f ms, median %.4f\n", o->cupti_mean_ms, o->cupti_median_ms);
		if (o->speedup_eager > 0 || o->speedup_compile > 0)
			printf("speedup: %.3fx vs eager, %.3fx vs torch.compile\n", o->speedup_eager,
			       o->speedup_compile);
		else
			printf("speedup: no baselines for this GPU in the store\n");
		if (o->roofline_ms > 0)
			printf("roofline: floor %.4f ms, efficiency %.1f%%\n", o->roofline_ms,
			       100.0 * o->roofline_ms / o->time_mean_ms);
		if (o->sol_ms > 0)
			printf("speed of light: %.4f ms (peaks; a faster trial is rejected)\n", o->sol_ms);
	}
	if (o->harness_ms > 0)
		printf("harness: %.1f ms\n", o->harness_ms);
	if (o->detail.len)
		printf("detail:\n%s\n", o->detail.s);
	if (o->cached)
		printf("recorded: evaluation %.16s in %s (served from there; --force evaluates again)\n",
		       o->eval_id, db);
	else
		printf("recorded: evaluation %.16s in %s\n", o->eval_id, db);
}

int cmd_eval(int argc, char **argv, struct cli_ctx *ctx)
{
	struct engine_config cfg;
	struct engine *e = NULL;
	struct eval_request req;
	struct eval_outcome o;
	struct buf err = BUF_INIT, text = BUF_INIT, dir = BUF_INIT;
	int as_json = 0, quick = 0, quick_launches = 0, n, ret;
	const char *arch = NULL;
	struct cli_opt opts[] = {
		OPT_FLAG("compile-only", 0, &cfg.compile_only,
			 "compile and record only (no GPU needed; status not_run)"),
		OPT_STR("arch", 0, &arch, "sm_XX", "target architecture (default: the GPU's, sm_90a on compute capability 9.0 and without a GPU)"),
		OPT_FLAG("json", 0, &as_json, "print the outcome as JSON"),
		OPT_FLAG("profile", 0, &cfg.profile,
			 "profile one extra launch block of a correct kernel with CUPTI (recorded; "
			 "KFORGE_NO_PROFILE=1 turns it off)"),
		OPT_FLAG("force", 0, &req.force, "evaluate again even when the store has the result"),
		OPT_FLAG("quick", 0, &quick, "1 check trial, no timing (for compute-sanitizer runs)"),
		OPT_INT("quick-launches", 0, &quick_launches, "N", 2, 1000,
			"as --quick, with N launch blocks in all: the 3 checks and N-3 timed ones, one "
			"on fresh inputs (the verifier's sanitizer runs draw N secretly)"),
		OPT_STR("gpu-model", 0, &cfg.gpu_model, "NAME",
			"run on a GPU of this model (as `kforge gpu-info --models` names it; else "
			"KFORGE_GPU_MODEL; default: GPU 0's model)"),
		OPT_DOUBLE("timeout", 0, &cfg.protocol.timeout_s, "S", 0.001, 3600,
			   "wall limit of one launch block (default 10 s; recorded)"),
		OPT_DOUBLE("max-timing", 0, &cfg.protocol.max_timing_s, "S", 0, 1e6,
			   "stop the timed trials after S s of kernel time (at least 10)"),
		OPT_DOUBLE("prune-vs-eager", 0, &cfg.protocol.prune_vs_eager, "F", 0, 1e6,
			   "stop them after 3 when the mean is over F times PyTorch eager's time "
			   "on this GPU (as a search does; both recorded)"),
		OPT_END,
	};
	struct cli_spec spec = { "eval", "PROBLEM FILE [options]", eval_doc, opts,
		"Exit: 0 correct (or not_run); 4 the kernel failed (format, compile, launch,\n"
		"runtime, timeout, incorrect); 3 no GPU or driver; 1 the engine failed.\n", 0, NULL, NULL };

	memset(&cfg, 0, sizeof(cfg));
	memset(&req, 0, sizeof(req));
	eval_protocol_default(&cfg.protocol);
	if ((ret = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return ret;
	if (n != 2)
		return cli_usage(&spec);
	if (arch && strncmp(arch, "sm_", 3) && strncmp(arch, "compute_", 8))
		return cli_fail(EXIT_USAGE, "eval: --arch wants sm_XX (e.g. sm_90), not '%s'", arch);
	/* The problem first: an unknown one is a usage error, GPU or not. */
	{
		struct buf spec_path = BUF_INIT;
		path_join(&spec_path, argv[1], "spec.json");
		if (strchr(argv[1], '/') && file_exists(spec_path.s))
			buf_adds(&dir, argv[1]);  /* a problem directory itself */
		buf_release(&spec_path);
	}
	if (!dir.len && (ret = problem_find(ctx->root, argv[1], &dir, &err)) < 0) {
		ret = cli_fail(ret == PROBLEM_UNKNOWN ? EXIT_USAGE : EXIT_FAIL, "%s", err.s);
		goto out;
	}
	if (quick || quick_launches) {
		/* 1 check trial of the problem's distribution and one of each
		 * extra one it has (the alive draw only where a parameter has
		 * one); --quick-launches: timed ones up to N blocks in all. */
		struct problem pb;
		int nchk = 1, alive = 0;
		problem_init(&pb);
		if (problem_load(&pb, dir.s, &err) == 0)
			alive = sens_has_alive(&pb);
		problem_release(&pb);
		buf_reset(&err);
		for (int i = 0; cfg.protocol.dists && cfg.protocol.dists[i]; i++)
			if (alive || strcmp(cfg.protocol.dists[i], "alive"))
				nchk += cfg.protocol.extra_trials;
		cfg.protocol.name = quick_launches ? "quick-v2" : "quick-v1";
		cfg.protocol.check_trials = 1;
		cfg.protocol.warmup = 0;
		cfg.protocol.timed_trials = quick_launches > nchk ? quick_launches - nchk : 0;
		cfg.protocol.fresh_sets = cfg.protocol.timed_trials ? 1 : 0;
		cfg.protocol.repeat_agree = 1;
	}
	/* Bounded read: the format check gives the precise size error. */
	if (buf_read_file(&text, argv[2], 4 * CANDIDATE_MAX_BYTES, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	if (!cfg.compile_only) {
		/* A GPU, of the model asked for, before anything is written. */
		char gpu[128];
		if ((ret = engine_gpu_model(cfg.gpu_model, gpu, sizeof(gpu), &err)) < 0) {
			ret = cli_fail(ret == KF_ENOMODEL ? EXIT_USAGE : EXIT_NOGPU, "%s", err.s);
			goto out;
		}
	}
	cfg.root = ctx->root;
	cfg.store_path = ctx->db_path;
	cfg.arch = arch ? arch : cfg.compile_only ? "sm_90a" : NULL;
	if ((ret = engine_open(&e, &cfg, &err)) < 0) {
		ret = cli_fail(ret == KF_ENOMODEL ? EXIT_USAGE : EXIT_FAIL, "%s", err.s);
		goto out;
	}
	req.problem_id = dir.s;
	req.candidate = text.s;
	req.candidate_len = text.len;     /* NUL bytes are the engine's format errors */
	eval_outcome_init(&o);
	if (engine_eval(e, &req, &o, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
	} else {
		json_t *stats = kernel_stats(ctx, o.compile_id), *prof = NULL;
		char *note = NULL;
		if (cfg.profile)
			prof = eval_profile(ctx, o.eval_id, &note);
		if (as_json) {
			json_t *j = outcome_json(&o, problem_dir_id(dir.s), stats, ctx->db_path);
			if (cfg.profile) {
				json_object_set_new(j, "profile", prof ? json_incref(prof) : json_null());
				if (note)
					json_object_set_new(j, "profile_note", json_string(note));
			}
			struct buf b = BUF_INIT;
			json_add_pretty(&b, j);
			printf("%s\n", b.s);
			buf_release(&b);
			json_decref(j);
		} else {
			print_human(&o, problem_dir_id(dir.s), stats, ctx->db_path);
			if (cfg.profile && !strcmp(o.status, "correct"))
				print_profile(prof, note);
			json_decref(stats);
		}
		json_decref(prof);
		free(note);
		ret = !strcmp(o.status, "correct") || !strcmp(o.status, "not_run") ? EXIT_OK : EXIT_CHECK;
	}
	eval_outcome_release(&o);
out:
	engine_close(e);
	buf_release(&err);
	buf_release(&text);
	buf_release(&dir);
	return ret;
}
