/* The engine: candidate → format check → compile (pool) → GPU worker
 * (supervisor) → store. Content-addressed: an evaluation's key is
 * sha256(kernel hash | problem | GPU | protocol JSON), and a key already
 * in the store is served from there unless the request forces. */
#include "engine_int.h"
#include "engine/candidate.h"
#include "engine/compile_pool.h"
#include "engine/rt.h"
#include "core/json.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/sha256.h"
#include "store/store_eval.h"
#include "store/store_problems.h"
#include "core/utf8.h"
#include "core/xalloc.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <sys/random.h>

/* collect-v1 and verify-v2 are the level-1 release's: public seeds, and the
 * search's inputs drawn from the problem's distribution only. */
static void protocol_collect_v1(struct eval_protocol *p)
{
	memset(p, 0, sizeof(*p));
	p->name = "collect-v1";
	p->check_trials = 5;
	p->seed0 = 1000;
	p->extra_trials = 2;
	p->warmup = 3;
	p->timed_trials = 100;
	p->repeat_agree = 2;
	p->timeout_s = 10;
	p->flush_l2 = 1;
}

static void protocol_verify_v2(struct eval_protocol *p)
{
	/* verify-v1 drew "uniform_large", U[-100, 100) for every operator. */
	static const char *const dists[] = { "normal", "uniform_wide", "edges", NULL };

	protocol_collect_v1(p);
	p->name = "verify-v2";
	p->check_trials = 16;   /* + 2 normal + 2 wide-uniform (+ 2 edge-value) draws */
	p->seed0 = 7000001;
	p->timed_trials = 500;
	p->repeat_agree = 3;
	p->dists = dists;
	p->timeout_s = 20;
}

static void protocol_collect_v2(struct eval_protocol *p)
{
	/* The search checks other distributions too (a kernel right on U[0,1)
	 * only fails here, not first in the verifier), with secret seeds. */
	static const char *const dists[] = { "normal", "uniform_wide", NULL };

	protocol_collect_v1(p);
	p->name = "collect-v2";
	p->seed0 = 0;
	p->dists = dists;
	p->extra_trials = 1;
}

static void protocol_verify_v3(struct eval_protocol *p)
{
	protocol_verify_v2(p);
	p->name = "verify-v3";
	p->seed0 = 0;           /* fresh secret seeds for each verification */
}

/* "alive": recurrent models' parameters drawn so that every step reaches
 * the output (spec "alive"; skipped for other problems; issue 38). */
static const char *const collect_v3_dists[] = { "normal", "uniform_wide", "alive", NULL };
static const char *const verify_v4_dists[] = { "normal", "uniform_wide", "edges", "alive", NULL };

/* v3/v4: timed trials on inputs the kernel cannot have seen (fresh sets)
 * and drawn from the checks' mix of distributions (issues 37, 38). */
void eval_protocol_default(struct eval_protocol *p)
{
	protocol_collect_v2(p);
	p->name = "collect-v3";
	p->dists = collect_v3_dists;
	p->fresh_sets = 2;
	p->timed_mix = 1;
}

void eval_protocol_verify(struct eval_protocol *p)
{
	protocol_verify_v3(p);
	p->name = "verify-v4";
	p->dists = verify_v4_dists;
	p->fresh_sets = 4;
	p->timed_mix = 1;
	p->sensitivity = 32;    /* docs/engine.md, "Sensitivity trials" */
}

int eval_protocol_by_name(struct eval_protocol *p, const char *name)
{
	if (!name || !strcmp(name, "collect-v3"))
		eval_protocol_default(p);
	else if (!strcmp(name, "collect-v2"))
		protocol_collect_v2(p);
	else if (!strcmp(name, "collect-v1"))
		protocol_collect_v1(p);
	else if (!strcmp(name, "verify-v4"))
		eval_protocol_verify(p);
	else if (!strcmp(name, "verify-v3"))
		protocol_verify_v3(p);
	else if (!strcmp(name, "verify-v2"))
		protocol_verify_v2(p);
	else
		return -1;
	return 0;
}

void engine_protocol_json(const struct eval_protocol *p, const char *arch, struct buf *out)
{
	json_t *o = json_pack("{s:s,s:i,s:i,s:i,s:i,s:i,s:f,s:f,s:f,s:b,s:s}", "name",
			      p->name ? p->name : "", "check_trials", p->check_trials,
			      "extra_trials", p->extra_trials, "warmup", p->warmup, "timed_trials",
			      p->timed_trials, "repeat_agree", p->repeat_agree, "atol", p->atol,
			      "rtol", p->rtol, "timeout_s", p->timeout_s, "flush_l2", p->flush_l2,
			      "arch", arch ? arch : "");
	json_t *d = json_array();

	/* Secret seeds are drawn per engine and never part of the key. */
	if (p->seed0)
		json_object_set_new(o, "seed0", json_integer((json_int_t)p->seed0));
	else
		json_object_set_new(o, "seeds", json_string("secret"));

	for (int i = 0; p->dists && p->dists[i]; i++)
		json_array_append_new(d, json_string(p->dists[i]));
	json_object_set_new(o, "dists", d);
	if (p->max_timing_s > 0)   /* absent when unset: keys of older results stay valid */
		json_object_set_new(o, "max_timing_s", json_real(p->max_timing_s));
	if (p->prune_vs_eager > 0)
		json_object_set_new(o, "prune_vs_eager", json_real(p->prune_vs_eager));
	if (p->fresh_sets > 0)
		json_object_set_new(o, "fresh_sets", json_integer(p->fresh_sets));
	if (p->timed_mix)
		json_object_set_new(o, "timed_mix", json_true());
	if (p->sensitivity > 0)
		json_object_set_new(o, "sensitivity", json_integer(p->sensitivity));
	json_object_set_new(o, "version", json_integer(RT_PROTOCOL_VERSION));
	buf_reset(out);
	json_add_compact(out, o);
	json_decref(o);
}

void engine_eval_key(const char *kernel_hash, const char *problem_id, const char *gpu,
		     const char *protocol_json, char hex[65])
{
	struct sha256 h;

	sha256_init(&h);
	sha256_update(&h, kernel_hash, strlen(kernel_hash));
	sha256_update(&h, "|", 1);
	sha256_update(&h, problem_id, strlen(problem_id));
	sha256_update(&h, "|", 1);
	sha256_update(&h, gpu, strlen(gpu));
	sha256_update(&h, "|", 1);
	sha256_update(&h, protocol_json, strlen(protocol_json));
	sha256_final_hex(&h, hex);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void engine_time_stats(const json_t *result, struct eval_outcome *o)
{
	const json_t *arr = json_object_get(result, "time");
	size_t n = json_array_size(arr), i, nc = 0;
	double *t, *c, sum = 0, sq = 0, csum = 0;
	json_t *x;

	if (!n)
		return;
	t = xcalloc(n, sizeof(*t));
	c = xcalloc(n, sizeof(*c));
	o->time_min_ms = INFINITY;
	o->time_max_ms = 0;
	json_array_foreach(arr, i, x) {
		double v = jget_num(x, "time_ms", 0), cv = jget_num(x, "cupti_ms", 0);
		t[i] = v;
		sum += v;
		if (v < o->time_min_ms)
			o->time_min_ms = v;
		if (v > o->time_max_ms)
			o->time_max_ms = v;
		if (cv > 0) {
			c[nc++] = cv;
			csum += cv;
		}
	}
	o->time_mean_ms = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (t[i] - o->time_mean_ms) * (t[i] - o->time_mean_ms);
	o->time_std_ms = sqrt(sq / (double)n);      /* population, as KernelBench (np.std) */
	o->time_median_ms = median_of(t, (int)n);
	if (nc == n) {
		o->cupti_mean_ms = csum / (double)nc;
		o->cupti_median_ms = median_of(c, (int)nc);
	}
	free(t);
	free(c);
}

/* ---- problems ------------------------------------------------------------- */

struct eng_problem *engine_problem(struct engine *e, const char *query, struct buf *err)
{
	struct buf dir = BUF_INIT;
	struct eng_problem *ep = NULL;

	{
		/* A problem directory itself, or an id to look up under root. */
		struct buf spec = BUF_INIT;
		path_join(&spec, query, "spec.json");
		if (strchr(query, '/') && file_exists(spec.s))
			buf_adds(&dir, query);
		buf_release(&spec);
	}
	if (!dir.len && problem_find(e->root, query, &dir, err) < 0)
		goto out;
	pthread_mutex_lock(&e->prob_mu);
	for (ep = e->probs; ep; ep = ep->next)
		if (!strcmp(ep->dir, dir.s))
			break;
	if (!ep) {
		ep = xcalloc(1, sizeof(*ep));
		problem_init(&ep->p);
		buf_init(&ep->ref_cubin);
		buf_init(&ep->ref_plan);
		if (problem_load(&ep->p, dir.s, err) < 0) {
			problem_release(&ep->p);
			free(ep);
			ep = NULL;
		} else {
			int r;
			ep->dir = xstrdup(dir.s);
			pthread_mutex_lock(&e->store_mu);
			r = store_put_problem(&e->store, &ep->p, err);
			pthread_mutex_unlock(&e->store_mu);
			if (r < 0) {
				problem_release(&ep->p);
				free(ep->dir);
				free(ep);
				ep = NULL;
			} else {
				ep->next = e->probs;
				e->probs = ep;
			}
		}
	}
	pthread_mutex_unlock(&e->prob_mu);
out:
	buf_release(&dir);
	return ep;
}

/* The reference compiled and planned once per problem (GPU mode). */
int engine_problem_reference(struct engine *e, struct eng_problem *ep, struct buf *err)
{
	struct launch_plan lp;
	struct compile_result cr;
	struct candidate c;
	int ret = -1;

	pthread_mutex_lock(&e->prob_mu);
	if (ep->ref_ready) {
		pthread_mutex_unlock(&e->prob_mu);
		return 0;
	}
	launch_plan_init(&lp);
	compile_result_init(&cr);
	candidate_init(&c);
	if (!ep->p.reference_src) {
		kf_err(err, "%s: no reference.cu", ep->p.id);
		goto out;
	}
	if (candidate_parse(&c, ep->p.reference_src, strlen(ep->p.reference_src), err) < 0 ||
	    launch_plan_build(&lp, &ep->p, c.text, &e->lim, err) < 0) {
		struct buf m = BUF_INIT;
		buf_addf(&m, "%s/reference.cu: %s", ep->dir, err->s);
		kf_err(err, "%s", m.s);
		buf_release(&m);
		goto out;
	}
	if (compile_pool_compile(e->pool, c.device_src, &cr, err) < 0)
		goto out;
	if (!cr.ok) {
		kf_err(err, "%s/reference.cu does not compile: %s\n%s", ep->dir, cr.message.s, cr.log.s);
		goto out;
	}
	candidate_hash(c.text, c.len, ep->ref_hash);
	buf_reset(&ep->ref_cubin);
	buf_add(&ep->ref_cubin, cr.cubin.s, cr.cubin.len);
	buf_reset(&ep->ref_plan);
	launch_plan_to_json(&lp, &ep->ref_plan);
	ep->ref_ready = 1;
	ret = 0;
out:
	pthread_mutex_unlock(&e->prob_mu);
	launch_plan_release(&lp);
	compile_result_release(&cr);
	candidate_release(&c);
	return ret;
}

/* ---- open / close ---------------------------------------------------------- */

static char *self_exe(void)
{
	char p[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", p, sizeof(p) - 1);

	if (n <= 0)
		return NULL;
	p[n] = '\0';
	return xstrdup(p);
}


int engine_open(struct engine **ep, const struct engine_config *cfg, struct buf *err)
{
	struct engine *e = xcalloc(1, sizeof(*e));
	char arch[16] = "";
	int rc = -1;

	*ep = NULL;
	pthread_mutex_init(&e->store_mu, NULL);
	pthread_mutex_init(&e->prob_mu, NULL);
	pthread_mutex_init(&e->pf_mu, NULL);
	buf_init(&e->proto_json);
	e->root = xstrdup(cfg->root ? cfg->root : ".");
	e->store_path = xstrdup(cfg->store_path ? cfg->store_path : "kforge.db");
	e->exe = cfg->exe ? xstrdup(cfg->exe) : self_exe();
	e->compile_only = cfg->compile_only;
	{
		const char *no = getenv("KFORGE_NO_PROFILE");
		e->profile = cfg->profile && !(no && *no && strcmp(no, "0"));
	}
	e->proto = cfg->protocol;
	if (!e->proto.name)
		eval_protocol_default(&e->proto);
	snprintf(e->proto_name, sizeof(e->proto_name), "%s", e->proto.name);
	e->proto.name = e->proto_name;
	/* The caller's distribution list is borrowed: keep copies (up to 8). */
	{
		int nd = 0;
		for (int i = 0; e->proto.dists && e->proto.dists[i] && nd < 8; i++) {
			snprintf(e->dist_names[nd], sizeof(e->dist_names[nd]), "%s",
				 e->proto.dists[i]);
			e->dist_ptrs[nd] = e->dist_names[nd];
			nd++;
		}
		e->dist_ptrs[nd] = NULL;
		e->proto.dists = nd ? e->dist_ptrs : NULL;
	}
	launch_limits_default(&e->lim);
	if (store_open(&e->store, e->store_path, STORE_CREATE, err) < 0) {
		free(e->root);
		free(e->store_path);
		free(e->exe);
		free(e);
		return -1;
	}
	if (!e->compile_only) {
		if ((rc = supervisor_open(&e->sup, e->exe, engine_gpu_model_wanted(cfg->gpu_model),
					  cfg->max_gpus, &e->gpu_info, err)) < 0)
			goto fail;
		rc = -1;
		snprintf(e->gpu_name, sizeof(e->gpu_name), "%s", jget_str(e->gpu_info, "name", "GPU"));
		snprintf(arch, sizeof(arch), "%s", jget_str(e->gpu_info, "arch", "sm_90"));
		e->lim.max_threads_per_block = (int)jget_int(e->gpu_info, "max_threads", 1024);
		e->lim.max_grid[0] = jget_int(e->gpu_info, "max_grid_x", e->lim.max_grid[0]);
		e->lim.max_grid[1] = jget_int(e->gpu_info, "max_grid_y", e->lim.max_grid[1]);
		e->lim.max_grid[2] = jget_int(e->gpu_info, "max_grid_z", e->lim.max_grid[2]);
		e->lim.max_smem_optin = jget_int(e->gpu_info, "smem_optin", e->lim.max_smem_optin);
	}
	/* On compute capability 9.0 candidates are compiled for sm_90a: the
	 * Hopper-only instructions (wgmma, setmaxnreg) are what the fastest
	 * fp32-accurate GEMMs use (docs/results/gemm-4096-h100: 2.29x cuBLAS SGEMM against
	 * 1.37x under sm_90), and an sm_90a cubin runs on every such GPU. */
	if (!strcmp(arch, "sm_90"))
		snprintf(arch, sizeof(arch), "sm_90a");
	e->arch = xstrdup(cfg->arch && *cfg->arch ? cfg->arch : arch[0] ? arch : "sm_90a");
	engine_protocol_json(&e->proto, e->arch, &e->proto_json);
	e->seed_base = e->proto.seed0;
	if (!e->seed_base) {
		/* Secret seeds: fresh for this engine (a search, a verification),
		 * below 2^40 so that seed arithmetic never wraps. */
		unsigned long long r = 0;
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
			kf_err(err, "getrandom: %s", strerror(errno));
			goto fail;
		}
		e->seed_base = (r & ((1ull << 40) - 1)) | (1ull << 20);
	}
	compile_opts_default(&e->copts);
	e->copts.arch = e->arch;
	e->copts.kforge_exe = e->exe;
	if (compile_pool_open(&e->pool, cfg->n_compile, &e->copts, err) < 0)
		goto fail;
	if (!e->compile_only) {
		double tf = 0;
		int r;
		pthread_mutex_lock(&e->store_mu);
		r = store_gpu_peaks(&e->store, e->gpu_name, &e->peak_gbs, &tf, err);
		pthread_mutex_unlock(&e->store_mu);
		e->peak_gflops = tf * 1000.0;
		if (r < 0)
			goto fail;
		if (e->peak_gbs <= 0 && engine_measure_peaks(e, err) < 0)
			log_warn("could not measure the GPU's peaks: %s", err->s);
		pthread_mutex_lock(&e->store_mu);
		r = es_put_gpu(&e->store, e->gpu_info, e->peak_gbs, e->peak_gflops / 1000.0, err);
		pthread_mutex_unlock(&e->store_mu);
		if (r < 0)
			goto fail;
	}
	*ep = e;
	return 0;
fail:
	engine_close(e);
	return rc;
}

const char *engine_gpu_name(const struct engine *e)
{
	return e->compile_only ? "" : e->gpu_name;
}

const char *engine_arch(const struct engine *e)
{
	return e->arch;
}

int engine_n_gpus(const struct engine *e)
{
	return e->compile_only || !e->sup ? 0 : supervisor_n_workers(e->sup);
}

void engine_close(struct engine *e)
{
	if (!e)
		return;
	eng_prefetch_release(e);
	if (e->pool)
		compile_pool_close(e->pool);
	if (e->sup)
		supervisor_close(e->sup);
	store_close(&e->store);
	while (e->probs) {
		struct eng_problem *n = e->probs->next;
		problem_release(&e->probs->p);
		buf_release(&e->probs->ref_cubin);
		buf_release(&e->probs->ref_plan);
		free(e->probs->dir);
		free(e->probs);
		e->probs = n;
	}
	json_decref(e->gpu_info);
	buf_release(&e->proto_json);
	pthread_mutex_destroy(&e->store_mu);
	pthread_mutex_destroy(&e->prob_mu);
	pthread_mutex_destroy(&e->pf_mu);
	free(e->root);
	free(e->arch);
	free(e->store_path);
	free(e->exe);
	free(e);
}

/* ---- eval ------------------------------------------------------------------ */

static void set_status(struct eval_outcome *o, const char *status, const char *check)
{
	snprintf(o->status, sizeof(o->status), "%s", status);
	snprintf(o->failed_check, sizeof(o->failed_check), "%s", check ? check : "");
}

static void compile_id_of(const char *kernel_hash, const char *arch, const char *options,
			  char hex[65])
{
	struct buf b = BUF_INIT;

	buf_addf(&b, "%s|%s|%s", kernel_hash, arch, options);
	sha256_hex(b.s, b.len, hex);
	buf_release(&b);
}

/* A problem's PyTorch eager and torch.compile mean ms on a GPU (0 when
 * none); 0, or -1 on a store error. */
static int baselines(struct engine *e, const char *problem_id, const char *gpu, double *eager,
		     double *comp)
{
	struct buf err = BUF_INIT;
	int r;

	*eager = *comp = 0;
	pthread_mutex_lock(&e->store_mu);
	r = store_baseline_means(&e->store, problem_id, gpu, eager, comp, &err);
	pthread_mutex_unlock(&e->store_mu);
	if (r < 0)   /* speedups absent, timing in full: say why */
		log_warn("%s: could not read its baselines: %s", problem_id, err.s);
	buf_release(&err);
	return r;
}

/* Dense fp16 tensor-core FLOPs per SM per clock by architecture (Hopper
 * 4096: 989 TFLOP/s on the H100 SXM); unknown ones get the largest known,
 * so their floor is never too high. */
static double tensor_rate(const char *arch)
{
	int cc = arch && !strncmp(arch, "sm_", 3) ? atoi(arch + 3) : 0;

	if (cc >= 100)
		return 8192;
	if (cc >= 90)
		return 4096;
	if (cc == 80)
		return 2048;
	if (cc >= 86 && cc < 90)
		return 1024;
	return 8192;
}

static int has_gemm(const struct problem *p)
{
	static const char *const fam[] = { "matmul", "conv", "attention", "graph", NULL };

	for (int i = 0; p->family && fam[i]; i++)
		if (!strcmp(p->family, fam[i]))
			return 1;
	return 0;
}

double engine_sol_flop_rate(const json_t *g, const struct problem *p, const char **path)
{
	double clk = (double)jget_int(g, "clock_khz", 0) * 1e3;
	double sm = (double)jget_int(g, "sm_count", 0);
	double r = tensor_rate(jget_str(g, "arch", NULL));

	if (has_gemm(p)) {
		/* The fastest fp32-accurate path: each fp32 product as three
		 * tensor-core products at the fp16/bf16 rate (split operands,
		 * e.g. tf32 x bf16 corrections; 3xTF32 is half as fast). A
		 * single-pass TF32 or fp16 GEMM fails fp32's tolerance on the
		 * mixed-sign draws (docs/results/gemm-4096-h100). */
		r /= 3.0;
		if (path)
			*path = "fp32-accurate tensor cores (3 products at the fp16 rate)";
	} else if (path) {
		*path = "tensor cores' fp16 rate (the memory's floor binds)";
	}
	return sm * clk * r;
}

/* The speed-of-light floor on this GPU (ms), 0 when unknown: the problem's
 * minimal bytes at the memory's theoretical peak (bus width x 2 x memory
 * clock; measured copies reach ~0.9 of it, the fastest level-1 kernels
 * 0.94) and its FLOPs (a spec's floor_flops where the graph folds to less
 * work) at its precision path's peak at the highest clock
 * (engine_sol_flop_rate). No kernel that does the work can be faster. */
double engine_sol_floor_ms(const json_t *g, const struct problem *p, double *bw, double *fl)
{
	double mclk = (double)jget_int(g, "mem_clock_khz", 0) * 1e3;
	double bus = (double)jget_int(g, "mem_bus_bits", 0);
	double tb, tf;

	*bw = 2.0 * mclk * bus / 8.0;
	*fl = engine_sol_flop_rate(g, p, NULL);
	if (*bw <= 0 || *fl <= 0)
		return 0;
	tb = p->min_bytes / *bw;
	tf = (p->floor_flops > 0 ? p->floor_flops : p->flops) / *fl;
	return 1e3 * (tb > tf ? tb : tf);
}

/* A correct result faster than physics allows did not do the work
 * (results kept from elsewhere, work skipped on inputs it recognised):
 * rejected, not flagged. Every timed trial must clear the floor. */
int engine_sol_check(const json_t *gpu_info, const struct problem *p, struct eval_outcome *o,
		     const json_t *res)
{
	double bw, fl, floor_ms = engine_sol_floor_ms(gpu_info, p, &bw, &fl), best = 0;
	int best_i = -1;
	size_t i;
	json_t *t;

	if (floor_ms <= 0 || strcmp(o->status, "correct"))
		return 0;
	json_array_foreach(json_object_get(res, "time"), i, t) {
		double ms = jget_num(t, "time_ms", 0);
		if (ms > 0 && (best_i < 0 || ms < best)) {
			best = ms;
			best_i = (int)jget_int(t, "idx", (json_int_t)i);
		}
	}
	/* 1 us for the events' resolution. */
	if (best_i < 0 || best + 1e-3 >= floor_ms)
		return 0;
	set_status(o, "incorrect", "faster_than_speed_of_light");
	buf_reset(&o->detail);
	{
		const char *path = "";
		engine_sol_flop_rate(gpu_info, p, &path);
		buf_addf(&o->detail, "timed trial %d took %.4f ms, under the speed-of-light floor of %.4f ms (%.4g bytes "
			 "at the memory's peak %.0f GB/s, %.4g FLOP at %.0f TFLOP/s, %s): it cannot have done "
			 "the work", best_i, best, floor_ms, p->min_bytes, bw / 1e9,
			 p->floor_flops > 0 ? p->floor_flops : p->flops, fl / 1e12, path);
	}
	return 1;
}

double engine_roofline_ms(const json_t *gpu_info, const struct problem *p, double gbs, double gflops)
{
	double pf = gpu_info ? engine_sol_flop_rate(gpu_info, p, NULL) / 1e9 : 0;

	if (gbs <= 0 || gflops <= 0)
		return 0;
	/* The measured FP32 FMA rate is no ceiling for a GEMM or a
	 * convolution: tensor cores run fp32-accurate products faster. */
	if (has_gemm(p) && pf > gflops)
		gflops = pf;
	return problem_roofline_ms(p, gbs, gflops);
}

/* The derived figures: speedups against this GPU's baselines, roofline. */
static void derive(struct engine *e, struct eng_problem *ep, struct eval_outcome *o)
{
	double eager = 0, comp = 0, bw, fl;

	o->sol_ms = e->gpu_info ? engine_sol_floor_ms(e->gpu_info, &ep->p, &bw, &fl) : 0;

	if (o->time_mean_ms > 0 && o->gpu_name[0] &&
	    baselines(e, ep->p.id, o->gpu_name, &eager, &comp) == 0) {
		o->speedup_eager = eager > 0 ? eager / o->time_mean_ms : 0;
		o->speedup_compile = comp > 0 ? comp / o->time_mean_ms : 0;
	}
	o->roofline_ms = engine_roofline_ms(e->gpu_info, &ep->p, e->peak_gbs, e->peak_gflops);
}

/* Fills the outcome from a worker's reply. */
static void from_result(const json_t *res, struct eval_outcome *o)
{
	set_status(o, jget_str(res, "status", "runtime_error"), jget_str(res, "failed_check", ""));
	buf_adds(&o->detail, jget_str(res, "detail", ""));
	o->max_abs_err = jget_num(res, "max_abs_err", 0);
	o->max_rel_err = jget_num(res, "max_rel_err", 0);
	o->mismatches = jget_int(res, "mismatches", 0);
	engine_time_stats(res, o);
	{
		double wall = jget_num(res, "wall_ms", 0), kern = jget_num(res, "kernel_ms", 0);
		o->harness_ms = wall > kern ? wall - kern : 0;
	}
	json_decref(o->phases);
	o->phases = json_is_object(json_object_get(res, "phases_ms")) ?
		json_deep_copy(json_object_get(res, "phases_ms")) : NULL;
}

static int run_on_gpu(struct engine *e, struct eng_problem *ep, const struct launch_plan *lp,
		      const struct compile_result *cr, json_t **res, struct buf *err)
{
	struct buf plan = BUF_INIT, bin = BUF_INIT;
	json_t *req, *names = json_array(), *pj;
	int r;

	if (engine_problem_reference(e, ep, err) < 0) {
		json_decref(names);
		return -1;
	}
	launch_plan_to_json(lp, &plan);
	for (int i = 0; i < lp->n_steps; i++)
		json_array_append_new(names, json_string(lp->steps[i].kernel));
	pj = json_loads(e->proto_json.s, 0, NULL);
	req = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:s,s:I,s:o,s:o}", "problem_dir", ep->dir,
			"problem_id", ep->p.id, "ref_hash", ep->ref_hash, "ref_plan", ep->ref_plan.s,
			"plan", plan.s, "ref_cubin_len", (json_int_t)ep->ref_cubin.len,
			"kernel", "candidate", "cubin_len", (json_int_t)cr->cubin.len, "kernels",
			names, "protocol", pj ? pj : json_object());
	json_object_set_new(req, "seed0", json_integer((json_int_t)e->seed_base));
	if (e->profile)
		json_object_set_new(req, "profile", json_true());
	if (e->proto.prune_vs_eager > 0) {
		double eager, comp;

		/* No baseline (or no store answer): timed in full. */
		if (baselines(e, ep->p.id, engine_gpu_name(e), &eager, &comp) == 0 && eager > 0)
			json_object_set_new(req, "prune_ms", json_real(eager * e->proto.prune_vs_eager));
	}
	buf_add(&bin, ep->ref_cubin.s, ep->ref_cubin.len);
	buf_add(&bin, cr->cubin.s, cr->cubin.len);
	r = supervisor_request(e->sup, RT_EVAL, req, bin.s, bin.len, res, err);
	json_decref(req);
	if (r == 0 && json_object_get(*res, "engine_error")) {
		/* Not the candidate's fault (reference failed, out of memory...). */
		kf_err(err, "%s", jget_str(*res, "engine_error", ""));
		json_decref(*res);
		*res = NULL;
		r = -1;
	}
	buf_release(&plan);
	buf_release(&bin);
	return r;
}

int engine_eval(struct engine *e, const struct eval_request *req, struct eval_outcome *out,
		struct buf *err)
{
	struct eng_problem *ep;
	struct candidate c;
	struct launch_plan lp;
	struct compile_result cr;
	struct buf canon = BUF_INIT, msg = BUF_INIT;
	struct compile_job *job = NULL;
	json_t *res = NULL;
	const char *text = req->candidate ? req->candidate : "";
	size_t len = req->candidate_len ? req->candidate_len : strlen(text);
	int ret = -1, r, parsed;
	double t0 = now_s();

	candidate_init(&c);
	launch_plan_init(&lp);
	compile_result_init(&cr);
	eval_outcome_release(out);
	ep = engine_problem(e, req->problem_id, err);
	if (!ep)
		goto out;
	snprintf(out->gpu_name, sizeof(out->gpu_name), "%s", engine_gpu_name(e));
	parsed = candidate_parse(&c, text, len, &msg) == 0;
	candidate_hash(text, len, out->kernel_hash);
	candidate_canonical(text, len, &canon);
	engine_eval_key(out->kernel_hash, ep->p.id, out->gpu_name, e->proto_json.s, out->eval_id);

	pthread_mutex_lock(&e->store_mu);
	r = es_put_kernel(&e->store, out->kernel_hash, canon.s, canon.len, err);
	if (r == 0 && !req->force) {
		r = es_find_eval(&e->store, out->eval_id, out, err);
		if (r == 1) {
			pthread_mutex_unlock(&e->store_mu);
			derive(e, ep, out);
			ret = 0;
			goto out;
		}
	}
	pthread_mutex_unlock(&e->store_mu);
	if (r < 0)
		goto out;

	if (parsed) {
		/* Compile while the launch block is resolved, unless it was started ahead. */
		job = eng_prefetched(e, c.device_src);
		out->compile_prefetched = job != NULL;
		if (!job)
			job = compile_pool_submit(e->pool, c.device_src);
		if (launch_plan_build(&lp, &ep->p, c.text, &e->lim, &msg) < 0)
			parsed = 0;
	}
	if (!parsed) {
		set_status(out, "format_error", NULL);
		buf_adds(&out->detail, msg.s);
		compile_id_of(out->kernel_hash, e->arch, "[]", out->compile_id);
		if (job) {
			/* The code may compile; record it, the verdict stays format_error. */
			r = compile_pool_wait(e->pool, job, &cr, err);
			job = NULL;
			if (r < 0)
				goto out;
			compile_id_of(out->kernel_hash, e->arch, cr.options.s, out->compile_id);
			out->compile_ms = cr.ms;
			pthread_mutex_lock(&e->store_mu);
			r = es_put_compile(&e->store, out->compile_id, out->kernel_hash, e->arch, &cr,
					   cr.ok ? "ok" : "compile_error", cr.message.s, err);
			pthread_mutex_unlock(&e->store_mu);
		} else {
			pthread_mutex_lock(&e->store_mu);
			r = es_put_compile(&e->store, out->compile_id, out->kernel_hash, e->arch, NULL,
					   "format_error", msg.s, err);
			pthread_mutex_unlock(&e->store_mu);
		}
		if (r < 0)
			goto out;
		goto record;
	}
	if (compile_pool_wait(e->pool, job, &cr, err) < 0) {
		job = NULL;
		goto out;
	}
	job = NULL;
	out->compile_ms = cr.ms;
	compile_id_of(out->kernel_hash, e->arch, cr.options.s, out->compile_id);
	pthread_mutex_lock(&e->store_mu);
	r = es_put_compile(&e->store, out->compile_id, out->kernel_hash, e->arch, &cr,
			   cr.ok ? "ok" : "compile_error", cr.message.s, err);
	pthread_mutex_unlock(&e->store_mu);
	if (r < 0)
		goto out;
	if (!cr.ok) {
		set_status(out, "compile_error", cr.timed_out ? "compile_timeout" : NULL);
		buf_addf(&out->detail, "%s", cr.message.s);
		if (cr.log.len) {
			/* An excerpt: the first errors are what the author needs. */
			size_t n = cr.log.len < 4000 ? cr.log.len : 4000;
			while (n < cr.log.len && n > 3996 && (cr.log.s[n] & 0xC0) == 0x80)
				n--;   /* not inside a character */
			buf_adds(&out->detail, "\n");
			buf_add(&out->detail, cr.log.s, n);
		}
		goto record;
	}
	if (e->compile_only) {
		set_status(out, "not_run", NULL);
		buf_adds(&out->detail, "compiled only (no GPU run)");
		goto record;
	}
	{
		double tg = now_s();
		if (run_on_gpu(e, ep, &lp, &cr, &res, err) < 0)
			goto out;
		from_result(res, out);
		engine_sol_check(e->gpu_info, &ep->p, out, res);
		if (out->harness_ms <= 0)
			out->harness_ms = (now_s() - tg) * 1000.0;
	}
record:
	(void)t0;
	if (utf8_first_bad(out->detail.s, out->detail.len) < out->detail.len) {
		/* A log excerpt cut inside a character, say: callers print it as JSON. */
		struct buf t = BUF_INIT;
		utf8_add_clean(&t, out->detail.s, out->detail.len);
		buf_reset(&out->detail);
		buf_add(&out->detail, t.s, t.len);
		buf_release(&t);
	}
	pthread_mutex_lock(&e->store_mu);
	r = es_put_eval(&e->store, out, ep->p.id, e->proto_name, e->proto_json.s, res, err);
	pthread_mutex_unlock(&e->store_mu);
	if (r < 0)
		goto out;
	derive(e, ep, out);
	ret = 0;
out:
	if (job)
		compile_pool_wait(e->pool, job, &cr, &msg);
	json_decref(res);
	candidate_release(&c);
	launch_plan_release(&lp);
	compile_result_release(&cr);
	buf_release(&canon);
	buf_release(&msg);
	return ret;
}
