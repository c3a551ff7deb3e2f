/* kforge problems: list, show, check, inputs. */
#include "cmds.h"
#include "core/cudadrv.h"
#include "problem/inputs.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "oracle/oracle.h"
#include "problem/problem.h"
#include "store/store.h"
#include "store/store_eval.h"
#include "core/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_FLUSH_MB 256 /* well over the 50 MB L2 of an H100 */

/* The GPU side of `check` comes from the runtime (engine/):
 *   int engine_reference_sample(const struct problem *p, unsigned long long seed, int out,
 *                               const long long *idx, int n, double *vals, struct buf *err);
 * runs p->reference_src at full size on inputs filled by the GPU kernels of
 * engine/cuda/inputs.cuh for `seed`, and returns output `out` at the flat
 * indices idx[0..n) (as doubles). Until it lands, check says it needs it. */
/* Weak: NULL until the runtime's engine (engine/engine_peaks.c) is linked. */
int engine_reference_sample(const struct problem *p, unsigned long long seed, int out,
			    const long long *idx, int n, double *vals, struct buf *err)
	__attribute__((weak));
#define gpu_reference_sample engine_reference_sample
int engine_reference_sample_draw(const struct problem *p, unsigned long long seed, int alive,
				 int out, const long long *idx, int n, double *vals,
				 struct buf *err) __attribute__((weak));

/* A GPU's measured peaks from the store (gpus table, written by the
 * engine): NAME, or the only GPU with peaks when name is NULL. 1 when
 * found, 0 when not, 2 when name is NULL and several GPUs have peaks
 * (their names in gpu), -1 on a store error. */
static int store_peaks(struct cli_ctx *ctx, const char *name, double *gbps, double *gflops,
		       struct buf *gpu, struct buf *err)
{
	struct store s;
	json_t *rows;
	int found = 0;

	if (!ctx->db_path || !file_exists(ctx->db_path))
		return 0;
	if (store_open(&s, ctx->db_path, STORE_READONLY, err) < 0)
		return -1;
	rows = store_gpus_measured(&s, name, err);
	store_close(&s);
	if (!rows)
		return -1;
	if (json_array_size(rows) > 1 && !name) {
		/* Several GPUs measured: say which, the caller picks. */
		buf_reset(gpu);
		for (size_t i = 0; i < json_array_size(rows); i++)
			buf_addf(gpu, "%s%s", i ? ", " : "", jget_str(json_array_get(rows, i), "name", ""));
		found = 2;
	} else if (json_array_size(rows) == 1) {
		json_t *r = json_array_get(rows, 0);
		*gbps = jget_num(r, "peak_bw_gbs", 0);
		*gflops = jget_num(r, "peak_fp32_tflops", 0) * 1e3;
		buf_reset(gpu);
		buf_adds(gpu, jget_str(r, "name", ""));
		found = 1;
	}
	json_decref(rows);
	return found;
}

/* The name of this machine's first GPU; -1 without a driver or GPU. */
static int local_gpu_name(char *name, size_t cap)
{
	struct cudadrv d;
	struct buf err = BUF_INIT;
	CUdevice dev;
	int r = -1;

	if (cudadrv_load(&d, &err) == 0) {
		if (d.cuDeviceGet(&dev, 0) == CUDA_SUCCESS &&
		    d.cuDeviceGetName(name, (int)cap, dev) == CUDA_SUCCESS)
			r = 0;
		cudadrv_release(&d);
	}
	buf_release(&err);
	return r;
}

static void sizes_text(const struct problem *p, struct buf *b)
{
	for (int i = 0; i < p->n_sizes; i++)
		buf_addf(b, "%s%s=%lld", i ? " " : "", p->size_names[i], p->size_vals[i]);
}

static json_t *summary_json(const struct problem *p, double gbps, double gflops)
{
	json_t *o = json_pack("{s:s,s:s,s:i,s:s,s:s,s:f,s:f}", "id", p->id, "name", p->name,
			      "number", p->number, "family", p->family, "kernelbench_file",
			      p->kernelbench_file, "gflop", p->flops / 1e9, "min_mb",
			      p->min_bytes / 1e6);
	json_object_set_new(o, "sizes", json_deep_copy(json_object_get(p->spec, "sizes")));
	if (gbps > 0 || gflops > 0)
		json_object_set_new(o, "roofline_ms",
				    json_real(problem_roofline_ms(p, gbps, gflops)));
	return o;
}

/* Loads every problem; one that does not load goes into `broken` (when not
 * NULL) as {id, error, at: its place among the loaded ones}, and the rest go on. */
static int load_all(struct cli_ctx *ctx, int level, struct problem **ps, int *n, int *bad,
		    json_t *broken)
{
	struct buf err = BUF_INIT;
	char **dirs;
	int nd;

	*ps = NULL;
	*n = *bad = 0;
	if (problem_list_dirs(ctx->root, level, &dirs, &nd, &err) < 0) {
		cli_fail(EXIT_FAIL, "%s", err.s);
		buf_release(&err);
		return -1;
	}
	*ps = xcalloc((size_t)nd + 1, sizeof(**ps));
	for (int i = 0; i < nd; i++) {
		problem_init(&(*ps)[*n]);
		if (problem_load(&(*ps)[*n], dirs[i], &err) < 0) {
			fprintf(stderr, "kforge: %s\n", err.s);
			(*bad)++;
			if (broken)
				json_array_append_new(broken, json_pack("{s:o, s:s, s:i}", "id",
									json_string_nocheck(problem_dir_id(dirs[i])),
									"error", err.s,
									"at", *n));
		} else {
			(*n)++;
		}
		free(dirs[i]);
	}
	free(dirs);
	buf_release(&err);
	return 0;
}

static void free_all(struct problem *ps, int n)
{
	for (int i = 0; i < n; i++)
		problem_release(&ps[i]);
	free(ps);
}

static int do_list(struct cli_ctx *ctx, int level, int as_json, double gbps, double gflops,
		   const char *gpu_name)
{
	struct problem *ps;
	struct buf gpu = BUF_INIT, err = BUF_INIT;
	json_t *broken;
	int n, bad, several = 0;

	if (gbps <= 0 && gflops <= 0) {
		char here[256] = "";
		int r = store_peaks(ctx, gpu_name, &gbps, &gflops, &gpu, &err);
		/* Several GPUs in the store: this machine's, when it is one of them. */
		if (r == 2 && local_gpu_name(here, sizeof(here)) == 0) {
			int r2 = store_peaks(ctx, here, &gbps, &gflops, &gpu, &err);
			if (r2 != 0)       /* found, or a store error: not "pick one" */
				r = r2;
		}
		several = r == 2;
		if (r < 0 || (r == 0 && gpu_name)) {
			r = cli_fail(EXIT_FAIL, "%s", r < 0 ? err.s : "no measured peaks for that GPU in the store");
			buf_release(&gpu);
			buf_release(&err);
			return r;
		}
	}
	buf_release(&err);

	broken = json_array();
	if (load_all(ctx, level, &ps, &n, &bad, broken) < 0) {
		json_decref(broken);
		return EXIT_FAIL;
	}
	if (as_json) {
		json_t *arr = json_array();
		struct buf b = BUF_INIT;
		size_t k = 0;
		for (int i = 0; i <= n; i++) {
			json_t *x;
			for (; (x = json_array_get(broken, k)) && jget_int(x, "at", 0) == i; k++)
				json_array_append_new(arr, json_pack("{s:O, s:s, s:O}", "id",
								     json_object_get(x, "id"), "status",
								     "broken", "error",
								     json_object_get(x, "error")));
			if (i == n)
				break;
			x = summary_json(&ps[i], gbps, gflops);
			json_object_set_new(x, "status", json_string("ok"));
			json_array_append_new(arr, x);
		}
		json_add_pretty(&b, arr);
		printf("%s\n", b.s);
		buf_release(&b);
		json_decref(arr);
	} else {
		struct buf sz = BUF_INIT;
		size_t k = 0;
		printf("%-48s %-40s %10s %10s %9s\n", "id", "sizes", "GFLOP", "min MB",
		       "floor ms");
		for (int i = 0; i <= n; i++) {
			json_t *x;
			for (; (x = json_array_get(broken, k)) && jget_int(x, "at", 0) == i; k++)
				printf("%-48s BROKEN (see the error above)\n", jget_str(x, "id", ""));
			if (i == n)
				break;
			buf_reset(&sz);
			sizes_text(&ps[i], &sz);
			if (sz.len > 40)
				buf_truncate(&sz, 37), buf_adds(&sz, "...");
			printf("%-48s %-40s %10.3f %10.1f ", ps[i].id, sz.s, ps[i].flops / 1e9,
			       ps[i].min_bytes / 1e6);
			if (gbps > 0 || gflops > 0)
				printf("%9.4f\n", problem_roofline_ms(&ps[i], gbps, gflops));
			else
				printf("%9s\n", "-");
		}
		if (several)
			printf("%d problem(s); floor ms needs --gpu NAME: the store has the peaks of %s\n",
			       n, gpu.s);
		else if (gpu.len)
			printf("%d problem(s); floor ms from %s's measured peaks (%.0f GB/s, %.1f "
			       "TFLOP/s)\n", n, gpu.s, gbps, gflops / 1e3);
		else
			printf("%d problem(s)%s\n", n, gbps > 0 || gflops > 0 ? "" :
			       "; floor ms needs the GPU's peaks (an eval on it, or --gbps and --gflops)");
		buf_release(&sz);
	}
	free_all(ps, n);
	buf_release(&gpu);
	json_decref(broken);
	/* Everything else was listed; the broken ones fail the check. */
	if (bad)
		return cli_fail(EXIT_CHECK, "%d problem spec(s) are broken (listed as BROKEN)", bad);
	return EXIT_OK;
}

static int load_one(struct cli_ctx *ctx, const char *query, struct problem *p)
{
	struct buf dir = BUF_INIT, err = BUF_INIT;
	int ret = 0;

	problem_init(p);
	if ((ret = problem_find(ctx->root, query, &dir, &err)) < 0)
		ret = cli_fail(ret == PROBLEM_UNKNOWN ? EXIT_USAGE : EXIT_FAIL, "%s", err.s);
	else if (problem_load(p, dir.s, &err) < 0)
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
	buf_release(&dir);
	buf_release(&err);
	return ret;
}

static int do_show(struct cli_ctx *ctx, const char *query, int as_json, double flush_mb)
{
	struct problem p;
	struct buf plan = BUF_INIT, b = BUF_INIT;
	size_t total;
	int rc;

	if ((rc = load_one(ctx, query, &p)))
		return rc;
	total = problem_memory_plan(&p, (size_t)(flush_mb * 1048576.0), &plan);
	if (as_json) {
		json_t *o = json_pack("{s:O,s:s,s:s,s:s,s:I}", "spec", p.spec, "dir", p.dir,
				      "torch", p.torch_text ? p.torch_text : "", "plan", plan.s,
				      "memory_bytes", (json_int_t)total);
		json_add_pretty(&b, o);
		printf("%s\n", b.s);
		json_decref(o);
	} else {
		printf("%s  (%s)\n", p.id, p.kernelbench_file);
		printf("family     %s\noperation  %s\n", p.family, p.operation);
		buf_reset(&b);
		sizes_text(&p, &b);
		printf("sizes      %s\n", b.s);
		for (int i = 0; i < p.n_scalars; i++)
			printf("scalar     %s = %g\n", p.scalar_names[i], p.scalar_vals[i]);
		for (int i = 0; i < p.n_in + p.n_out; i++) {
			const struct problem_tensor *t = &p.t[i];
			buf_reset(&b);
			for (int d = 0; d < t->ndim; d++)
				buf_addf(&b, "%s%lld", d ? ", " : "", t->shape[d]);
			const char *why = jget_str(json_object_get(p.spec, "no_influence"), t->name, NULL);
			printf("%-10s %-12s %-9s (%s)  %.1f MB%s\n",
			       t->role == KF_ROLE_OUTPUT ? "output" : t->role == KF_ROLE_PARAM ? "param" : "input",
			       t->name, kf_dtype_name(t->dtype), b.s, (double)t->bytes / 1e6,
			       t->has_alive ? "  (alive draw: docs/problems.md)" : "");
			if (why)
				printf("           no influence: %s\n", why);
		}
		printf("tolerance  atol %g rtol %g\nGFLOP      %.3f\nmin MB     %.1f\n", p.atol, p.rtol,
		       p.flops / 1e9, p.min_bytes / 1e6);
		const char *notes = jget_str(p.spec, "notes", "");
		if (*notes)
			printf("notes      %s\n", notes);
		printf("\nmemory plan (engine, at once):\n%s", plan.s);
		printf("\n--- reference.py ---\n%s", p.torch_text ? p.torch_text : "");
	}
	buf_release(&plan);
	buf_release(&b);
	problem_release(&p);
	return EXIT_OK;
}

/* CPU oracle values of a sample of every output; with the GPU reference
 * (when the engine provides it) compared at the problem's tolerance. */
static double check_atol = -1, check_rtol = -1; /* --atol/--rtol; < 0: the spec's */

static int check_one(const struct problem *p, unsigned long long seed, int samples, int cpu_only,
		     int *failed)
{
	double atol = check_atol >= 0 ? check_atol : p->atol;
	double rtol = check_rtol >= 0 ? check_rtol : p->rtol;
	struct oracle_ctx c;
	struct buf err = BUF_INIT;
	long long *idx = xcalloc((size_t)samples, sizeof(long long));
	double *want = xcalloc((size_t)samples, sizeof(double));
	double *got = xcalloc((size_t)samples, sizeof(double));
	int ret = 0;
	struct timespec t0, t1;

	oracle_ctx_init(&c, p, seed);
	for (int o = 0; o < p->n_out && !ret; o++) {
		int n = oracle_sample(p, o, seed, idx, samples), bad = 0;
		double max_abs = 0, max_rel = 0;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < n; i++)
			if (oracle_value(&c, o, idx[i], &want[i], &err) < 0) {
				fprintf(stderr, "kforge: %s\n", err.s);
				ret = -1;
				break;
			}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (ret)
			break;
		if (cpu_only) {
			printf("%-48s %-8s %4d samples  oracle %.2fs  first %.9g  last %.9g\n", p->id,
			       p->t[p->n_in + o].name, n,
			       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
			       want[0], want[n - 1]);
			continue;
		}
		if ((ret = gpu_reference_sample(p, seed, o, idx, n, got, &err)) < 0) {
			fprintf(stderr, "kforge: %s: %s\n", p->id, err.s);
			break;
		}
		for (int i = 0; i < n; i++) {
			double d = fabs(got[i] - want[i]);
			if (want[i] != 0 && d / fabs(want[i]) > max_rel)
				max_rel = d / fabs(want[i]);
			if (!(d <= atol + rtol * fabs(want[i]))) {
				if (bad < 5)
					fprintf(stderr, "  %s[%lld]: GPU %.9g, CPU %.9g\n",
						p->t[p->n_in + o].name, idx[i], got[i], want[i]);
				bad++;
			}
			if (d > max_abs || isnan(d))
				max_abs = d;
		}
		printf("%-48s %-8s %4d samples  max abs err %.3g  max rel err %.3g  %s\n", p->id,
		       p->t[p->n_in + o].name, n, max_abs, max_rel, bad ? "FAIL" : "ok");
		if (bad)
			(*failed)++;
	}
	oracle_ctx_release(&c);
	free(idx);
	free(want);
	free(got);
	buf_release(&err);
	return ret;
}

static int do_check(struct cli_ctx *ctx, int argc, char **argv, int cpu_only,
		    unsigned long long seed, int samples)
{
	struct problem *ps = NULL;
	int n = 0, bad = 0, failed = 0, errors = 0;

	if (!cpu_only && !gpu_reference_sample)
		return cli_fail(EXIT_USAGE, "problems check needs the engine "
				"(engine_reference_sample), which is not built in yet; "
				"--cpu computes the CPU oracle side only");
	if (argc == 0) {
		if (load_all(ctx, 0, &ps, &n, &bad, NULL) < 0)
			return EXIT_FAIL;
	} else {
		ps = xcalloc((size_t)argc, sizeof(*ps));
		for (int i = 0; i < argc; i++) {
			int r = load_one(ctx, argv[i], &ps[n]);
			if (r == EXIT_USAGE) {     /* an unknown problem: check none */
				problem_release(&ps[n]);
				free_all(ps, n);
				return r;
			}
			if (r)
				bad++;
			else
				n++;
		}
	}
	for (int i = 0; i < n; i++) {
		int r = check_one(&ps[i], seed, samples, cpu_only, &failed);
		if (r == KF_ENOGPU) {
			free_all(ps, n);
			return EXIT_NOGPU;
		}
		if (r < 0)
			errors++;
	}
	free_all(ps, n);
	if (bad || errors)
		return cli_fail(EXIT_FAIL, "%d problem(s) could not be checked", bad + errors);
	if (failed)
		return cli_fail(EXIT_CHECK, "%d output(s) differ from the CPU oracle", failed);
	return EXIT_OK;
}

/* NumPy .npy v1.0 header for a C-order array. */
static void npy_header(const struct problem_tensor *t, struct buf *h)
{
	static const char *const descr[] = { "<f4", "<f2", "<u2", "<i8", "<i4", "|b1" };
	struct buf d = BUF_INIT;

	buf_addf(&d, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr[t->dtype]);
	for (int i = 0; i < t->ndim; i++)
		buf_addf(&d, "%s%lld", i ? ", " : "", t->shape[i]);
	if (t->ndim == 1)
		buf_addc(&d, ',');
	buf_adds(&d, "), }");
	while ((10 + d.len + 1) % 64)
		buf_addc(&d, ' ');
	buf_addc(&d, '\n');
	buf_add(h, "\x93NUMPY\x01\x00", 8);
	buf_addc(h, (char)(d.len & 0xff));
	buf_addc(h, (char)(d.len >> 8));
	buf_add(h, d.s, d.len);
	buf_release(&d);
}

static int write_npy(struct inputs_gen *g, int t, const char *path, struct buf *err)
{
	const struct problem_tensor *pt = &g->p->t[t];
	struct buf h = BUF_INIT, tmp = BUF_INIT;
	size_t es = kf_dtype_size(pt->dtype), chunk = 1 << 24;
	void *block = xmalloc(chunk * es);
	FILE *f;
	int ret = -1;

	buf_addf(&tmp, "%s.tmp", path);
	f = fopen(tmp.s, "wb");
	if (!f) {
		kf_err(err, "%s: %s", tmp.s, strerror(errno));
		goto out;
	}
	npy_header(pt, &h);
	fwrite(h.s, 1, h.len, f);
	for (long long s = 0; s < pt->numel; s += (long long)chunk) {
		long long cnt = pt->numel - s < (long long)chunk ? pt->numel - s : (long long)chunk;
		if (inputs_fill_mt(g, t, s, cnt, block, 0, err) < 0 ||
		    fwrite(block, es, (size_t)cnt, f) != (size_t)cnt) {
			if (!err->len)
				kf_err(err, "%s: write failed", tmp.s);
			fclose(f);
			goto out;
		}
	}
	if (fclose(f) != 0 || rename(tmp.s, path) != 0) {
		kf_err(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	free(block);
	buf_release(&h);
	buf_release(&tmp);
	return ret;
}

/* DIR/oracle/NAME.json: {"index": [...], "value": [...], "source"} of every
 * output at a sample of indices, from the CPU oracle (double precision), or
 * with gpu from the GPU reference (reference.cu at full size: where the
 * oracle would take too long, level 3's deep models). */
static int write_oracle(const struct problem *p, const char *out, unsigned long long seed,
			const struct inputs_draw *draw, int samples, int gpu, struct buf *err)
{
	struct oracle_ctx c;
	struct buf path = BUF_INIT, text = BUF_INIT;
	long long *idx = xcalloc((size_t)samples, sizeof(long long));
	int ret = 0;

	path_join(&path, out, "oracle");
	if (mkdir_p(path.s, err) < 0) {
		free(idx);
		buf_release(&path);
		return -1;
	}
	oracle_ctx_init_draw(&c, p, seed, draw);
	for (int o = 0; o < p->n_out && !ret; o++) {
		int n = oracle_sample(p, o, seed, idx, samples);
		json_t *ji = json_array(), *jv = json_array(), *doc;
		double *vals = xcalloc((size_t)n + 1, sizeof(double));
		if (gpu && engine_reference_sample_draw(p, seed, draw && draw->alive, o, idx, n, vals,
							 err) < 0)
			ret = -1;
		for (int i = 0; i < n && !ret; i++) {
			if (!gpu && oracle_value(&c, o, idx[i], &vals[i], err) < 0)
				ret = -1;
			json_array_append_new(ji, json_integer(idx[i]));
			/* NaN or inf (JSON has neither) is null: a mismatch downstream */
			json_array_append_new(jv, isfinite(vals[i]) ? json_real(vals[i]) : json_null());
		}
		free(vals);
		doc = json_pack("{s:o,s:o,s:I,s:s}", "index", ji, "value", jv, "seed", (json_int_t)seed,
				"source", gpu ? "gpu reference" : "cpu oracle");
		buf_reset(&text);
		json_add_compact(&text, doc);
		buf_addc(&text, '\n');
		json_decref(doc);
		buf_reset(&path);
		buf_addf(&path, "%s/oracle/%s.json", out, p->t[p->n_in + o].name);
		if (!ret && write_file_atomic(path.s, text.s, text.len, err) < 0)
			ret = -1;
	}
	oracle_ctx_release(&c);
	free(idx);
	buf_release(&path);
	buf_release(&text);
	return ret;
}

static int do_inputs(struct cli_ctx *ctx, const char *query, const char *out,
		     unsigned long long seed, int samples, int gpu, int no_oracle, int alive)
{
	struct problem p;
	struct inputs_gen g;
	struct inputs_draw draw;
	struct buf path = BUF_INIT, err = BUF_INIT, spec = BUF_INIT;
	int rc;

	if ((rc = load_one(ctx, query, &p)))
		return rc;
	path_join(&path, out, "inputs");
	rc = EXIT_OK;
	if (mkdir_p(path.s, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	inputs_draw_spec(&draw);
	draw.alive = alive;
	inputs_gen_init_draw(&g, &p, seed, &draw);
	for (int t = 0; t < p.n_in && rc == EXIT_OK; t++) {
		buf_reset(&path);
		buf_addf(&path, "%s/inputs/%s.npy", out, p.t[t].name);
		if (write_npy(&g, t, path.s, &err) < 0)
			rc = cli_fail(EXIT_FAIL, "%s", err.s);
	}
	inputs_gen_release(&g);
	if (rc == EXIT_OK) {
		json_t *s = json_deep_copy(p.spec);
		json_object_set_new(s, "seed", json_integer((json_int_t)seed));
		if (alive)
			json_object_set_new(s, "draw", json_string("alive"));
		json_add_pretty(&spec, s);
		buf_addc(&spec, '\n');
		json_decref(s);
		path_join(&path, out, "spec.json");
		if (write_file_atomic(path.s, spec.s, spec.len, &err) < 0 ||
		    (!no_oracle && write_oracle(&p, out, seed, &draw, samples, gpu, &err) < 0))
			rc = cli_fail(EXIT_FAIL, "%s", err.s);
		else if (no_oracle)
			printf("wrote %d input(s) of %s (seed %llu) to %s\n", p.n_in, p.id, seed, out);
		else
			printf("wrote %d input(s) and the %s sample of %s (seed %llu) to %s\n",
			       p.n_in, gpu ? "GPU reference" : "oracle", p.id, seed, out);
	}
out:
	problem_release(&p);
	buf_release(&path);
	buf_release(&err);
	buf_release(&spec);
	return rc;
}

static const char list_args[] = "[--level N] [--json] [--gpu NAME | --gbps X --gflops Y]";
static const char show_args[] = "ID [--json] [--flush-mb N]";
static const char check_args[] = "[--cpu] [--seed S] [--samples N] [--atol A --rtol R] [ID...]";
static const char inputs_args[] = "ID --out DIR [--seed S] [--samples N] [--alive] [--gpu-reference | --inputs-only]";
static const char ids_doc[] = "ID: level1/023_Softmax, 23, 023, Softmax, level1/23.\n";

static int sub_list(int argc, char **argv, struct cli_ctx *ctx)
{
	double gbps = 0, gflops = 0;
	const char *gpu_name = NULL;
	int level = 0, as_json = 0, n, rc;
	struct cli_opt opts[] = {
		OPT_INT("level", 0, &level, "N", 1, 9, "only this level's problems"),
		OPT_FLAG("json", 0, &as_json, "print the list as JSON"),
		OPT_STR("gpu", 0, &gpu_name, "NAME", "the roofline floor from this GPU's measured peaks in the store"),
		OPT_DOUBLE("gbps", 0, &gbps, "X", 0, 1e7, "the floor from X GB/s of memory bandwidth"),
		OPT_DOUBLE("gflops", 0, &gflops, "Y", 0, 1e9, "and Y GFLOP/s"),
		OPT_END,
	};
	struct cli_spec spec = { "problems list", list_args,
		"Lists id, name, sizes, GFLOP, minimal MB and the roofline floor in ms from\n"
		"a GPU's measured peaks in the store (--gpu NAME, else this machine's GPU,\n"
		"else the store's only one) or from --gbps and --gflops.\n", opts, NULL, 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n != 0)
		return cli_usage(&spec);
	return do_list(ctx, level, as_json, gbps, gflops, gpu_name);
}

static int sub_show(int argc, char **argv, struct cli_ctx *ctx)
{
	double flush = DEFAULT_FLUSH_MB;
	int as_json = 0, n, rc;
	struct cli_opt opts[] = {
		OPT_FLAG("json", 0, &as_json, "print it as JSON"),
		OPT_DOUBLE("flush-mb", 0, &flush, "N", 0, 1e6,
			   "the L2 flush buffer in the memory plan (256 MB)"),
		OPT_END,
	};
	struct cli_spec spec = { "problems show", show_args,
		"Shows the spec, the PyTorch text and the memory plan of one problem.\n", opts, ids_doc,
		0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n != 1)
		return cli_usage(&spec);
	return do_show(ctx, argv[1], as_json, flush);
}

static int sub_check(int argc, char **argv, struct cli_ctx *ctx)
{
	unsigned long long seed = 1;
	int cpu = 0, samples = 256, n, rc;
	struct cli_opt opts[] = {
		OPT_FLAG("cpu", 0, &cpu, "compute the CPU oracle sample only (no GPU)"),
		OPT_ULLONG("seed", 0, &seed, "S", 0, 9007199254740992.0, "the inputs' seed (1)"),
		OPT_INT("samples", 0, &samples, "N", 2, 100000, "output values compared per output (256)"),
		OPT_DOUBLE("atol", 0, &check_atol, "A", 0, 1e9, "absolute tolerance (default: the spec's)"),
		OPT_DOUBLE("rtol", 0, &check_rtol, "R", 0, 1e9, "relative tolerance (default: the spec's)"),
		OPT_END,
	};
	struct cli_spec spec = { "problems check", check_args,
		"Runs each reference (every problem's without ID) on the GPU at full size and\n"
		"compares a sample of outputs (every row/channel class, edges) with the\n"
		"double-precision CPU oracle, at the spec's tolerance or --atol/--rtol\n"
		"(references round double results once: --rtol 1e-6 --atol 1e-9 holds for most).\n",
		opts, ids_doc, 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	return do_check(ctx, n, argv + 1, cpu, seed, samples);
}

static int sub_inputs(int argc, char **argv, struct cli_ctx *ctx)
{
	unsigned long long seed = 1;
	const char *out = NULL;
	int samples = 256, gpu = 0, no_oracle = 0, alive = 0, n, rc;
	struct cli_opt opts[] = {
		OPT_STR("out", 0, &out, "DIR", "where the files go (required)"),
		OPT_FLAG("alive", 0, &alive, "the alive draw (recurrent models' spec \"alive\")"),
		OPT_FLAG("inputs-only", 0, &no_oracle,
			 "only the inputs and spec.json, no output sample (torch_crosscheck.py --draw)"),
		OPT_FLAG("gpu-reference", 0, &gpu,
			 "sample the GPU reference (reference.cu) instead of the CPU oracle"),
		OPT_ULLONG("seed", 0, &seed, "S", 0, 9007199254740992.0, "the inputs' seed (1)"),
		OPT_INT("samples", 0, &samples, "N", 2, 100000, "oracle values per output (256)"),
		OPT_END,
	};
	struct cli_spec spec = { "problems inputs", inputs_args,
		"Writes the generated inputs as DIR/inputs/NAME.npy, DIR/spec.json and the\n"
		"CPU oracle's sample of each output as DIR/oracle/NAME.json\n"
		"(for tools/torch_crosscheck.py).\n", opts, ids_doc, 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n != 1 || !out) {
		fprintf(stderr, "kforge problems inputs: needs ID and --out DIR\n");
		return cli_usage(&spec);
	}
	if (gpu && no_oracle)
		return cli_fail(EXIT_USAGE, "problems inputs: --gpu-reference and --inputs-only exclude each other");
	if (gpu && (!gpu_reference_sample || !engine_reference_sample_draw))
		return cli_fail(EXIT_USAGE, "problems inputs --gpu-reference needs the engine "
				"(this kforge was built without it)");
	return do_inputs(ctx, argv[1], out, seed, samples, gpu, no_oracle, alive);
}

int cmd_problems(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct cli_sub subs[] = {
		{ "list", sub_list, list_args, "id, name, sizes, GFLOP, minimal MB and the roofline floor" },
		{ "show", sub_show, show_args, "the spec, the PyTorch text and the memory plan of one problem" },
		{ "check", sub_check, check_args,
		  "runs references on the GPU and compares them with the CPU oracle (--cpu: oracle only)" },
		{ "inputs", sub_inputs, inputs_args,
		  "writes the generated inputs and the CPU oracle's sample (for tools/torch_crosscheck.py)" },
		{ "sensitivity", problems_sensitivity, "ID [--alive] [--only NAME]",
		  "what redrawing each input, parameter or early time steps does (CPU oracle)" },
		{ NULL, NULL, NULL, NULL },
	};
	return cli_dispatch("problems", "Lists, shows and checks the problem suite.\n", subs, argc,
			    argv, ctx);
}
