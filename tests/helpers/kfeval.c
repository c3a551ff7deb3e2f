/* kfeval: evaluates many candidates with ONE engine (context, modules and
 * reference outputs stay alive across candidates, as in a search), one
 * JSON line per candidate. Used by tests/gpu/g0450-adversarial.sh and
 * tests/bench.sh.
 *   kfeval --kforge PATH [--verify] [--db DB] [--root DIR] [--timeout S] [--quick]
 *          [--compile-only] [--force] [--repeat N] PROBLEM FILE [PROBLEM FILE...]
 * --verify: the verifier's protocol (verify-v3: sensitivity trials among others);
 * after it, --dists a,b (the extra distributions) and --no-sensitivity change it.
 * --repeat N evaluates each candidate N times (forced after the first) and
 * prints every evaluation; --max-kernel-ms X skips the repeats of a kernel
 * slower than X ms. */
#include "core/buf.h"
#include "core/json.h"
#include "core/proc.h"
#include "engine/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

int main(int argc, char **argv)
{
	struct engine_config cfg;
	struct engine *e = NULL;
	struct buf err = BUF_INIT;
	const char *db = "kfeval.db";
	int i = 1, force = 0, repeat = 1, failed = 0;
	double max_ms = 0;

	memset(&cfg, 0, sizeof(cfg));
	eval_protocol_default(&cfg.protocol);
	cfg.root = getenv("KFORGE_ROOT") ? getenv("KFORGE_ROOT") : ".";
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--kforge") && i + 1 < argc)
			cfg.exe = argv[++i];
		else if (!strcmp(argv[i], "--db") && i + 1 < argc)
			db = argv[++i];
		else if (!strcmp(argv[i], "--root") && i + 1 < argc)
			cfg.root = argv[++i];
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			cfg.protocol.timeout_s = atof(argv[++i]);
		else if (!strcmp(argv[i], "--max-kernel-ms") && i + 1 < argc)
			max_ms = atof(argv[++i]);
		else if (!strcmp(argv[i], "--max-timing-s") && i + 1 < argc)
			cfg.protocol.max_timing_s = atof(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--force"))
			force = 1;
		else if (!strcmp(argv[i], "--verify"))   /* first: it sets every protocol field */
			eval_protocol_verify(&cfg.protocol);
		else if (!strcmp(argv[i], "--dists") && i + 1 < argc) {
			/* the extra distributions instead of the protocol's (comma-separated) */
			static char list[256];
			static const char *d[9];
			int nd = 0;
			snprintf(list, sizeof(list), "%s", argv[++i]);
			for (char *sv = NULL, *t = strtok_r(list, ",", &sv); t && nd < 8;
			     t = strtok_r(NULL, ",", &sv))
				d[nd++] = t;
			d[nd] = NULL;
			cfg.protocol.dists = d;
		} else if (!strcmp(argv[i], "--no-sensitivity"))
			cfg.protocol.sensitivity = 0;
		else if (!strcmp(argv[i], "--compile-only"))
			cfg.compile_only = 1, cfg.arch = "sm_90a";
		else if (!strcmp(argv[i], "--quick")) {
			cfg.protocol.name = "quick-v1";
			cfg.protocol.check_trials = 1;
			cfg.protocol.warmup = 0;
			cfg.protocol.timed_trials = 0;
			cfg.protocol.repeat_agree = 1;
		} else {
			fprintf(stderr, "kfeval: bad option %s\n", argv[i]);
			return 2;
		}
	}
	if (!cfg.exe || (argc - i) % 2 || argc == i) {
		fprintf(stderr, "usage: kfeval --kforge PATH [options] PROBLEM FILE...\n");
		return 2;
	}
	cfg.store_path = db;
	{
		double t0 = now_s();
		if (engine_open(&e, &cfg, &err) < 0) {
			fprintf(stderr, "kfeval: %s\n", err.s);
			return 3;
		}
		fprintf(stderr, "kfeval: engine open in %.0f ms on %s\n", (now_s() - t0) * 1000,
			engine_gpu_name(e));
	}
	for (; i < argc; i += 2) {
		struct buf text = BUF_INIT;
		if (buf_read_file(&text, argv[i + 1], 1 << 20, &err) < 0) {
			fprintf(stderr, "kfeval: %s\n", err.s);
			failed++;
			continue;
		}
		for (int r = 0, stop = 0; r < repeat && !stop; r++) {
			struct eval_request req = { .problem_id = argv[i], .candidate = text.s,
						   .force = force || r > 0, .candidate_len = text.len };
			struct eval_outcome o;
			double t0 = now_s(), wall;
			json_t *j;
			struct buf line = BUF_INIT;
			eval_outcome_init(&o);
			if (engine_eval(e, &req, &o, &err) < 0) {
				j = json_pack("{s:s,s:s,s:s}", "problem", argv[i], "file", argv[i + 1],
					      "engine_error", err.s);
				failed++;
			} else {
				wall = (now_s() - t0) * 1000;
				if (o.detail.len > 400)
					buf_truncate(&o.detail, 400);
				j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:b,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:s}",
					      "problem", argv[i], "file", argv[i + 1], "status", o.status,
					      "failed_check", o.failed_check, "kernel", o.kernel_hash,
					      "cached", o.cached, "wall_ms", num(wall), "compile_ms",
					      num(o.compile_ms), "harness_ms", num(o.harness_ms),
					      "time_mean_ms", num(o.time_mean_ms), "time_median_ms",
					      num(o.time_median_ms), "cupti_mean_ms", num(o.cupti_mean_ms),
					      "cupti_median_ms", num(o.cupti_median_ms), "max_abs_err",
					      num(o.max_abs_err), "detail", o.detail.s);
				if (o.phases)
					json_object_set(j, "phases_ms", o.phases);
			}
			/* A slow kernel is not repeated (bench time). */
			stop = max_ms > 0 && o.time_mean_ms > max_ms;
			json_add_compact(&line, j);
			printf("%s\n", line.s);
			fflush(stdout);
			buf_release(&line);
			json_decref(j);
			eval_outcome_release(&o);
		}
		buf_release(&text);
	}
	engine_close(e);
	buf_release(&err);
	return failed ? 1 : 0;
}
