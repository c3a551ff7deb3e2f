/* Test and measurement helper for the compile front end:
 *   kfcompile [--exe KFORGE] [--arch sm_90] [--timeout S] [--cpu S] [--as-mib M] [--log]
 *             [--pool N] [--repeat N] [--fixtures DIR] [--plan] FILE...
 * With --fixtures, a file's first line `// problem: NAME` names the problem
 * spec DIR/NAME.json, and the launch block is resolved against it (sm_90
 * limits) before the compile, as the engine does; --plan prints the plan.
 * --launch-only stops after the launch check ("FILE: launch_ok").
 * With --refs, each argument is a problem directory: its reference.cu is
 * the candidate, checked against its spec.json.
 * For each candidate file prints one line
 *   FILE: format_error|compile_error|compile_timeout|ok MS ms [kernel NAME regs R smem S
 *         stack K spill_st A spill_ld B]...
 * with --log the compile log follows, indented. --repeat N compiles each
 * file N times through a pool and ends with "median MS ms over N compiles".
 * --pool N runs up to N compiles at once, across files and repeats.
 * Without --repeat or --log, files whose device source is the same compile
 * once; with KF_COMPILE_CACHE=DIR (tests/run-tests.sh: a persistent one
 * outside the clone) their ok results are kept there, keyed by the source,
 * every compile option, the NVRTC library and the compile code's sources
 * (KF_COMPILE_SRC_ID), for later runs of kfcompile; a hit refreshes the
 * entry's time (the runner prunes the oldest).
 * Exit 0 when every file was processed (whatever its status), 1 when the
 * sandbox failed. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <utime.h>
#include "core/buf.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "engine/candidate.h"
#include "engine/compile.h"
#include "engine/compile_pool.h"
#include "engine/launch.h"
#include "engine/nvrtc.h"
#include "problem/problem.h"
#include "gen/kfcompile_id.h"

/* The launch check against the fixture named on the file's first line. */
static int check_launch(const char *fixtures, const char *dir, const char *text, struct buf *plan,
			struct buf *err)
{
	struct problem p;
	struct launch_plan lp;
	struct launch_limits lim;
	struct buf spec = BUF_INIT, path = BUF_INIT, pj = BUF_INIT;
	const char *q = strstr(text, "// problem: ");
	int ret = -1;

	problem_init(&p);
	launch_plan_init(&lp);
	launch_limits_default(&lim);
	if (dir) {
		if (problem_load(&p, dir, err) < 0) {
			ret = -2;
			goto out;
		}
	} else if (!q) {
		kf_err(err, "no `// problem: NAME` line");
		ret = -2;
		goto out;
	} else {
		q += 12;
		buf_setf(&path, "%s/%.*s.json", fixtures, (int)strcspn(q, "\n"), q);
		if (buf_read_file(&spec, path.s, PROBLEM_SPEC_MAX, err) < 0 ||
		    problem_load_json(&p, spec.s, path.s, err) < 0) {
			ret = -2;
			goto out;
		}
	}
	if (launch_plan_build(&lp, &p, text, &lim, err) < 0)
		goto out;
	if (plan) {
		launch_plan_to_json(&lp, &pj);
		buf_addf(plan, "plan %s\n", pj.s);
	}
	ret = 0;
out:
	launch_plan_release(&lp);
	problem_release(&p);
	buf_release(&spec);
	buf_release(&path);
	buf_release(&pj);
	return ret;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static const char *env_or(const char *name)
{
	const char *v = getenv(name);
	return v ? v : "(unset)";
}

/* The NVRTC a compile child would load, as "PATH VERSION SIZE MTIME" (the
 * file behind the library; "none" without one): part of a kept result's key. */
static void nvrtc_identity(struct buf *out)
{
	struct nvrtc nv;
	struct buf err = BUF_INIT, inc = BUF_INIT;
	Dl_info di;
	struct stat st;

	nvrtc_init(&nv);
	if (nvrtc_load(&nv, &err) < 0) {
		buf_setf(out, "none");
	} else if (dladdr(*(void **)&nv.Version, &di) && di.dli_fname && stat(di.dli_fname, &st) == 0) {
		buf_setf(out, "%s %d.%d %lld %lld", di.dli_fname, nv.major, nv.minor, (long long)st.st_size,
			 (long long)st.st_mtime);
	} else {
		buf_setf(out, "%s %d.%d", nv.path, nv.major, nv.minor);
	}
	if (nvrtc_include_dir(&inc) == 0)
		buf_addf(out, " include %s", inc.s);
	nvrtc_release(&nv);
	buf_release(&err);
	buf_release(&inc);
}

/* The cache key of a compile: every input of its result (options, the NVRTC
 * library and the variables that pick it, the sources of kforge's compile
 * code, the source). A first line `// problem: NAME` is a comment to NVRTC,
 * the same line count whatever NAME: one kernel checked against several
 * problems compiles once. */
static void compile_key(const struct compile_opts *o, const char *nv_id, const char *src, char hex[65])
{
	struct sha256 h;
	struct buf b = BUF_INIT;

	if (!strncmp(src, "// problem: ", 12) && strchr(src, '\n'))
		src = strchr(src, '\n');
	buf_setf(&b, "kfcompile 2\n%s\n%s\n%s\n%d %d %d %zu\n%s\n%s\n%s\n", KF_COMPILE_SRC_ID, nv_id,
		 o->arch ? o->arch : "", o->fast_math, o->timeout_s, o->cpu_s, o->as_bytes,
		 env_or("KFORGE_NVRTC"), env_or("CUDA_HOME"), env_or("LD_LIBRARY_PATH"));
	sha256_init(&h);
	sha256_update(&h, b.s, b.len);
	sha256_update(&h, src, strlen(src));
	sha256_final_hex(&h, hex);
	buf_release(&b);
}

/* Appends "compiled N reused M same K" (compiles, results from the cache,
 * files of a source seen earlier in this call) to DIR/stats, in one write:
 * O_APPEND keeps the lines of parallel calls whole. */
static void cache_stats(const char *dir, int compiled, int reused, int same)
{
	struct buf path = BUF_INIT, line = BUF_INIT;
	FILE *f;

	path_join(&path, dir, "stats");
	buf_setf(&line, "compiled %d reused %d same %d\n", compiled, reused, same);
	f = fopen(path.s, "a");
	if (f) {
		fwrite(line.s, 1, line.len, f);
		fclose(f);
	}
	buf_release(&path);
	buf_release(&line);
}

/* 1 when file K need not compile: an earlier file has its key (*same: that
 * one), or CACHE holds an ok result for it (read into *res). */
static int reuse_result(char (*key)[65], int k, const char *cache, int *same, struct buf *res)
{
	struct buf path = BUF_INIT, err = BUF_INIT;
	int found = 0;

	for (int j = 0; j < k; j++)
		if (key[j][0] && !strcmp(key[j], key[k])) {
			*same = j;
			return 1;
		}
	if (!cache)
		return 0;
	path_join(&path, cache, key[k]);
	if (file_exists(path.s) && buf_read_file(res, path.s, 1u << 20, &err) == 0 &&
	    !strncmp(res->s, "ok ", 3)) {
		found = 1;
		utime(path.s, NULL);   /* recently used: kept by the runner's pruning */
	} else
		buf_reset(res);
	buf_release(&path);
	buf_release(&err);
	return found;
}

int main(int argc, char **argv)
{
	struct compile_opts o;
	struct compile_pool *pool = NULL;
	struct buf err = BUF_INIT;
	int show_log = 0, repeat = 1, n_pool = 1, ret = 0, i, show_plan = 0, lr = 0, refs = 0, launch_only = 0;
	const char *fixtures = NULL;
	double *times = NULL;
	int n_times = 0;

	compile_opts_default(&o);
	o.timeout_s = 20;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--exe") && i + 1 < argc)
			o.kforge_exe = argv[++i];
		else if (!strcmp(argv[i], "--arch") && i + 1 < argc)
			o.arch = argv[++i];
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			o.timeout_s = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			o.cpu_s = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--as-mib") && i + 1 < argc)
			o.as_bytes = (size_t)atol(argv[++i]) << 20;
		else if (!strcmp(argv[i], "--pool") && i + 1 < argc)
			n_pool = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--fast-math"))
			o.fast_math = 1;
		else if (!strcmp(argv[i], "--fixtures") && i + 1 < argc)
			fixtures = argv[++i];
		else if (!strcmp(argv[i], "--launch-only"))
			launch_only = 1;
		else if (!strcmp(argv[i], "--refs"))
			refs = 1;
		else if (!strcmp(argv[i], "--plan"))
			show_plan = 1;
		else if (!strcmp(argv[i], "--log"))
			show_log = 1;
		else {
			fprintf(stderr, "kfcompile: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (repeat < 1 || n_pool < 1)
		return 2;
	if (compile_pool_open(&pool, n_pool, &o, &err) < 0) {
		fprintf(stderr, "kfcompile: %s\n", err.s);
		return 1;
	}
	times = calloc((size_t)(argc * repeat + 1), sizeof(double));
	/* Every file's compiles are queued before any is waited for, so --pool N
	 * runs N at once across files; output still comes in file order. */
	int first = i, n_files = argc - i, reuse = repeat == 1 && !show_log;
	int compiled = 0, reused = 0, n_same = 0;
	const char *cache = reuse ? getenv("KF_COMPILE_CACHE") : NULL;
	struct buf *pre = calloc((size_t)n_files + 1, sizeof(*pre));
	struct compile_job ***jobs = calloc((size_t)n_files + 1, sizeof(*jobs));
	/* per file: its key, the earlier file of the same source (-1: none), its
	 * result after "FILE: " */
	char (*key)[65] = calloc((size_t)n_files + 1, sizeof(*key));
	int *same = calloc((size_t)n_files + 1, sizeof(*same));
	struct buf *res = calloc((size_t)n_files + 1, sizeof(*res));
	if (!times || !pre || !jobs || !key || !same || !res)
		abort();
	if (cache && !*cache)
		cache = NULL;
	struct buf nv_id = BUF_INIT;
	if (cache)
		nvrtc_identity(&nv_id);
	for (; i < argc; i++) {
		struct buf text = BUF_INIT, file = BUF_INIT;
		struct buf *out = &pre[i - first];
		struct candidate c;

		buf_init(out);
		buf_init(&res[i - first]);
		same[i - first] = -1;
		candidate_init(&c);
		buf_setf(&file, refs ? "%s/reference.cu" : "%s", argv[i]);
		if (buf_read_file(&text, file.s, 4u << 20, &err) < 0) {
			buf_addf(out, "%s: unreadable: %s\n", argv[i], err.s);
			ret = 1;
		} else if (candidate_parse(&c, text.s, text.len, &err) < 0) {
			buf_addf(out, "%s: format_error: %s\n", argv[i], err.s);
		} else if ((fixtures || refs) &&
			   (lr = check_launch(fixtures, refs ? argv[i] : NULL, c.text,
					      show_plan ? out : NULL, &err)) < 0) {
			buf_addf(out, "%s: %s: %s\n", argv[i], lr == -2 ? "fixture_error" : "format_error",
				 err.s);
			if (lr == -2)
				ret = 1;
		} else if (launch_only) {
			buf_addf(out, "%s: launch_ok\n", argv[i]);
		} else {
			if (reuse)
				compile_key(&o, nv_id.s, c.device_src, key[i - first]);
			if (reuse && reuse_result(key, i - first, cache, &same[i - first], &res[i - first])) {
				if (same[i - first] >= 0)
					n_same++;
				else
					reused++;
			} else {
				compiled++;
				jobs[i - first] = calloc((size_t)repeat, sizeof(**jobs));
				if (!jobs[i - first])
					abort();
				for (int k = 0; k < repeat; k++)
					jobs[i - first][k] = compile_pool_submit(pool, c.device_src);
			}
		}
		candidate_release(&c);
		buf_release(&text);
		buf_release(&file);
	}
	for (i = first; i < argc; i++) {
		struct buf *rs = &res[i - first];

		fputs(pre[i - first].s, stdout);
		buf_release(&pre[i - first]);
		for (int k = 0; jobs[i - first] && k < repeat; k++) {
			struct compile_result r;
			compile_result_init(&r);
			if (compile_pool_wait(pool, jobs[i - first][k], &r, &err) < 0) {
				if (k == 0)
					buf_setf(rs, "sandbox_error: %s\n", err.s);
				printf("%s: sandbox_error: %s\n", argv[i], err.s);
				ret = 1;
			} else if (k == 0) {
				times[n_times++] = r.ms;
				if (r.timed_out)
					buf_setf(rs, "compile_timeout: %s\n", r.message.s);
				else if (!r.ok)
					buf_setf(rs, "compile_error: %s\n", r.message.s);
				else {
					buf_setf(rs, "ok %.1f ms nvrtc %s options %s", r.ms, r.nvrtc_version,
						 r.options.s);
					for (int j = 0; j < r.n_kernels; j++)
						buf_addf(rs, " [kernel %s regs %d smem %d stack %d spill_st %d "
							 "spill_ld %d cmem %d]", r.kernels[j].name,
							 r.kernels[j].registers, r.kernels[j].smem_static,
							 r.kernels[j].stack, r.kernels[j].spill_stores,
							 r.kernels[j].spill_loads, r.kernels[j].cmem);
					buf_addf(rs, " cubin %zu bytes\n", r.cubin.len);
					if (cache) {
						struct buf path = BUF_INIT, werr = BUF_INIT;
						path_join(&path, cache, key[i - first]);
						write_file_atomic(path.s, rs->s, rs->len, &werr); /* best effort */
						buf_release(&path);
						buf_release(&werr);
					}
				}
				printf("%s: %s", argv[i], rs->s);
				if (show_log && r.log.len) {
					const char *l = r.log.s;
					while (*l) {
						const char *e = strchr(l, '\n');
						size_t n = e ? (size_t)(e - l) : strlen(l);
						printf("    %.*s\n", (int)n, l);
						l += n + (e ? 1 : 0);
					}
				}
			} else {
				times[n_times++] = r.ms;
			}
			compile_result_release(&r);
		}
		if (!jobs[i - first] && same[i - first] >= 0)
			buf_add(rs, res[same[i - first]].s, res[same[i - first]].len);
		if (!jobs[i - first] && rs->len)
			printf("%s: %s", argv[i], rs->s);
		free(jobs[i - first]);
	}
	if (cache)
		cache_stats(cache, compiled, reused, n_same);
	for (i = 0; i < n_files; i++)
		buf_release(&res[i]);
	free(res);
	free(same);
	free(key);
	free(pre);
	free(jobs);
	if (repeat > 1 && n_times) {
		qsort(times, (size_t)n_times, sizeof(double), cmp_d);
		printf("median %.1f ms over %d compiles (pool of %d)\n", times[n_times / 2], n_times,
		       n_pool);
	}
	free(times);
	buf_release(&nv_id);
	compile_pool_close(pool);
	buf_release(&err);
	return ret;
}
