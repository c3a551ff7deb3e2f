/* The hardware-counter profile of one extra launch block of a correct
 * kernel (docs/engine.md "Profiles"): CUPTI's range profiler, auto range
 * (one range per kernel launch) and kernel replay (each launch replayed
 * for as many passes as the metrics need), after the timed trials and
 * their checks, on the inputs of the last checked run. Where the block
 * writes over PROF_USER_REPLAY_BYTES (outputs and scratch), user replay
 * instead: the whole prepared launch (wk_launch_candidate: fills, L2
 * flush, block) once per pass, as every timed trial runs it; kernel
 * replay saves and restores what each launch writes, pass by pass, which
 * took 70-160 s a 4 GiB output on an H200 (every other kernel under 2 s). libcupti is opened
 * with dlopen: where it or the range profiler is missing, no profile and
 * a reason in the result's env ("profile_note"), never a failed
 * evaluation. The activity API's kernel records (worker_cupti.c) are off
 * meanwhile. */
#include "worker_int.h"
#include "profile.h"
#include "core/json.h"
#include "core/log.h"
#include "core/proc.h"

#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <cupti_version.h>
/* Its <string> include is satisfied by engine/cupti_c/string (Makefile). */
#include <cupti_profiler_host.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROF_MAX_LAUNCHES 1024   /* ranges of one block (the counter image grows with them) */
#define PROF_USER_REPLAY_BYTES (256ull << 20)

/* The metrics, in the order of enum slot. The tensor pipes: the largest
 * of those the chip has counts; on GH100 the hmma one counts HMMA, HGMMA
 * and QGMMA (wgmma) cycles, the imma one IMMA and IGMMA (the host API's
 * descriptions; there is no gmma one). */
enum { M_DUR, M_RD, M_WR, M_DRAM, M_L2, M_SM, M_OCC, M_T0, M_T1, M_N };
#define M_TLAST M_T1
static const char *const metric_names[M_N] = {
	"gpu__time_duration.sum",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"lts__t_sector_hit_rate.pct",
	"sm__throughput.avg.pct_of_peak_sustained_elapsed",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
	"sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active",
};

#define FN(name) CUptiResult (*name)(void *)
static struct {
	int tried, ok;
	char why[256];
	void *lib;
	FN(prof_init);
	FN(chip_name);
	FN(host_init);
	FN(host_props);
	FN(host_add);
	FN(host_cfg_size);
	FN(host_cfg);
	FN(host_passes);
	FN(host_eval);
	FN(rp_enable);
	FN(rp_disable);
	FN(rp_setcfg);
	FN(rp_start);
	FN(rp_stop);
	FN(rp_decode);
	FN(rp_cd_size);
	FN(rp_cd_init);
	FN(rp_cd_info);
	CUptiResult (*version)(uint32_t *);
	CUptiResult (*errstr)(CUptiResult, const char **);
	CUpti_Profiler_Host_Object *host;
	const char *metrics[M_N];  /* those the chip has */
	int slot[M_N];             /* metrics[i] fills slot[i] */
	int n;
	uint8_t *config;
	size_t config_size, passes;
	char tool[64];
} P;
#undef FN

static int fail(char *why, size_t n, const char *what, CUptiResult r)
{
	const char *s = NULL;

	if (P.errstr)
		P.errstr(r, &s);
	snprintf(why, n, "%s: CUPTI error %d%s%s", what, (int)r, s ? " " : "", s ? s : "");
	return -1;
}

/* Opens libcupti, checks the metrics on this chip and makes the config
 * image, once per worker; the reason in P.why when it cannot. */
static int prof_open(struct worker *w)
{
	static const struct {
		const char *sym;
		size_t off;
	} syms[] = {
#define S(n, f) { n, offsetof(__typeof__(P), f) }
		S("cuptiProfilerInitialize", prof_init),
		S("cuptiDeviceGetChipName", chip_name),
		S("cuptiProfilerHostInitialize", host_init),
		S("cuptiProfilerHostGetMetricProperties", host_props),
		S("cuptiProfilerHostConfigAddMetrics", host_add),
		S("cuptiProfilerHostGetConfigImageSize", host_cfg_size),
		S("cuptiProfilerHostGetConfigImage", host_cfg),
		S("cuptiProfilerHostGetNumOfPasses", host_passes),
		S("cuptiProfilerHostEvaluateToGpuValues", host_eval),
		S("cuptiRangeProfilerEnable", rp_enable),
		S("cuptiRangeProfilerDisable", rp_disable),
		S("cuptiRangeProfilerSetConfig", rp_setcfg),
		S("cuptiRangeProfilerStart", rp_start),
		S("cuptiRangeProfilerStop", rp_stop),
		S("cuptiRangeProfilerDecodeData", rp_decode),
		S("cuptiRangeProfilerGetCounterDataSize", rp_cd_size),
		S("cuptiRangeProfilerCounterDataImageInitialize", rp_cd_init),
		S("cuptiRangeProfilerGetCounterDataInfo", rp_cd_info),
#undef S
	};
	CUpti_Profiler_Initialize_Params ip = { CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
	CUpti_Device_GetChipName_Params cp = { CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_Initialize_Params hp = { CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_ConfigAddMetrics_Params ap = { CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetConfigImageSize_Params sp = { CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetConfigImage_Params gp = { CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetNumOfPasses_Params np = { CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE };
	uint32_t ver = 0;
	CUptiResult r;

	if (P.tried)
		return P.ok ? 0 : -1;
	P.tried = 1;
	if (!(P.lib = wk_cupti_dlopen())) {
		snprintf(P.why, sizeof(P.why), "libcupti not found");
		return -1;
	}
	*(void **)&P.version = dlsym(P.lib, "cuptiGetVersion");
	*(void **)&P.errstr = dlsym(P.lib, "cuptiGetResultString");
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *f = dlsym(P.lib, syms[i].sym);
		if (!f) {
			snprintf(P.why, sizeof(P.why), "libcupti has no %s (range profiler: CUDA 12.6+)",
				 syms[i].sym);
			return -1;
		}
		memcpy((char *)&P + syms[i].off, &f, sizeof(f));
	}
	if ((r = P.prof_init(&ip)) != CUPTI_SUCCESS)
		return fail(P.why, sizeof(P.why), "cuptiProfilerInitialize", r);
	cp.deviceIndex = (size_t)w->dev;
	if ((r = P.chip_name(&cp)) != CUPTI_SUCCESS || !cp.pChipName)
		return fail(P.why, sizeof(P.why), "cuptiDeviceGetChipName", r);
	hp.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hp.pChipName = cp.pChipName;
	if ((r = P.host_init(&hp)) != CUPTI_SUCCESS)
		return fail(P.why, sizeof(P.why), "cuptiProfilerHostInitialize", r);
	P.host = hp.pHostObject;
	for (int i = 0; i < M_N; i++) {
		CUpti_Profiler_Host_GetMetricProperties_Params mp = {
			CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE };
		mp.pHostObject = P.host;
		mp.pMetricName = metric_names[i];
		if (P.host_props(&mp) == CUPTI_SUCCESS) {
			P.slot[P.n] = i;
			P.metrics[P.n++] = metric_names[i];
		} else {
			log_info("profile: %s has no metric %s", cp.pChipName, metric_names[i]);
		}
	}
	if (!P.n) {
		snprintf(P.why, sizeof(P.why), "none of the metrics exists on %s", cp.pChipName);
		return -1;
	}
	ap.pHostObject = P.host;
	ap.ppMetricNames = P.metrics;
	ap.numMetrics = (size_t)P.n;
	if ((r = P.host_add(&ap)) != CUPTI_SUCCESS)
		return fail(P.why, sizeof(P.why), "cuptiProfilerHostConfigAddMetrics", r);
	sp.pHostObject = P.host;
	if ((r = P.host_cfg_size(&sp)) != CUPTI_SUCCESS || !sp.configImageSize)
		return fail(P.why, sizeof(P.why), "cuptiProfilerHostGetConfigImageSize", r);
	if (!(P.config = malloc(sp.configImageSize))) {
		snprintf(P.why, sizeof(P.why), "out of memory");
		return -1;
	}
	P.config_size = sp.configImageSize;
	gp.pHostObject = P.host;
	gp.configImageSize = P.config_size;
	gp.pConfigImage = P.config;
	if ((r = P.host_cfg(&gp)) != CUPTI_SUCCESS)
		return fail(P.why, sizeof(P.why), "cuptiProfilerHostGetConfigImage", r);
	np.configImageSize = P.config_size;
	np.pConfigImage = P.config;
	if (P.host_passes(&np) == CUPTI_SUCCESS)
		P.passes = np.numOfPasses;
	if (P.version)
		P.version(&ver);
	snprintf(P.tool, sizeof(P.tool), "cupti-range-profiler %u", ver);
	P.ok = 1;
	return 0;
}

struct walk {
	struct wk_eval_state *es;
	struct prof_kernel *k;
	int n, max;
	int *step;
	struct buf *err;
};

/* The launch configuration of each launch of the block, in order. */
static int walk_one(void *ctx, int s, const long long *vars)
{
	struct walk *wk = ctx;
	struct worker *w = wk->es->w;
	const struct launch_step *st = &wk->es->cand.plan.steps[s];
	struct launch_call c;
	struct prof_kernel *k;
	int v;

	if (wk->n >= wk->max)
		return 1;
	if (launch_step_eval(st, vars, &c, wk->err) < 0)
		return -1;
	k = &wk->k[wk->n];
	prof_kernel_init(k);
	snprintf(k->name, sizeof(k->name), "%s", st->kernel);
	k->block_threads = (int)(c.block[0] * c.block[1] * c.block[2]);
	k->grid_blocks = (int)((long long)c.grid[0] * c.grid[1] * c.grid[2] > 0x7fffffff
				       ? 0x7fffffff : c.grid[0] * c.grid[1] * c.grid[2]);
	if (w->d.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, wk->es->cand.fn[s]) == CUDA_SUCCESS)
		k->registers = v;
	if (w->d.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, wk->es->cand.fn[s]) ==
	    CUDA_SUCCESS)
		k->shared_bytes = v + (int)c.smem;
	wk->step[wk->n++] = s;
	return 0;
}

static double timed_mean(const json_t *res)
{
	const json_t *t, *times = json_object_get(res, "time");
	double s = 0;
	size_t i, n = 0;

	json_array_foreach(times, i, t) {
		double v = jget_num(t, "time_ms", NAN);
		if (isfinite(v)) {
			s += v;
			n++;
		}
	}
	return n ? s / (double)n : 0;
}

/* Bytes a launch of the candidate writes: its outputs and scratch. */
static unsigned long long written_bytes(const struct wk_eval_state *es)
{
	unsigned long long b = 0;

	for (int i = 0; i < es->w->p.n_out; i++)
		b += es->w->out[i].bytes;
	for (int i = 0; i < es->cand.plan.n_scratch; i++)
		b += es->cand.scratch[i].bytes;
	return b;
}

/* Runs one launch block under the range profiler and reads its ranges;
 * 0, or -1 with the reason in why. */
static int profile_block(struct wk_eval_state *es, struct prof_kernel *k, int n, char *why,
			 size_t nwhy)
{
	struct worker *w = es->w;
	CUpti_RangeProfiler_Enable_Params ep = { CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_Disable_Params dp = { CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_GetCounterDataSize_Params zp = { CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params ip = { CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_SetConfig_Params sp = { CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_Start_Params st = { CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_Stop_Params so = { CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_DecodeData_Params de = { CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_GetCounterDataInfo_Params ci = { CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE };
	/* Ranges: the block's, and the harness's work before it (shared
	 * memory scrub, output fills, scratch fills, module variables, the L2
	 * flush: a few per output, scratch buffer and variable). */
	size_t max_ranges = (size_t)n + 2 * (size_t)(w->p.n_out + es->cand.plan.n_scratch + es->cand.n_glob) + 16,
	       first;
	uint8_t *cd = NULL;
	struct buf err = BUF_INIT;
	int ret = -1, started = 0, r, user = written_bytes(es) > PROF_USER_REPLAY_BYTES;
	CUptiResult cr;

	ep.ctx = w->ctx;
	if ((cr = P.rp_enable(&ep)) != CUPTI_SUCCESS)
		return fail(why, nwhy, "cuptiRangeProfilerEnable", cr);
	zp.pRangeProfilerObject = ep.pRangeProfilerObject;
	zp.pMetricNames = P.metrics;
	zp.numMetrics = (size_t)P.n;
	zp.maxNumOfRanges = max_ranges;
	zp.maxNumRangeTreeNodes = (uint32_t)max_ranges;
	if ((cr = P.rp_cd_size(&zp)) != CUPTI_SUCCESS || !zp.counterDataSize) {
		fail(why, nwhy, "cuptiRangeProfilerGetCounterDataSize", cr);
		goto out;
	}
	if (!(cd = calloc(1, zp.counterDataSize))) {
		snprintf(why, nwhy, "out of memory for the counter data image");
		goto out;
	}
	ip.pRangeProfilerObject = ep.pRangeProfilerObject;
	ip.counterDataSize = zp.counterDataSize;
	ip.pCounterData = cd;
	if ((cr = P.rp_cd_init(&ip)) != CUPTI_SUCCESS) {
		fail(why, nwhy, "cuptiRangeProfilerCounterDataImageInitialize", cr);
		goto out;
	}
	sp.pRangeProfilerObject = ep.pRangeProfilerObject;
	sp.configSize = P.config_size;
	sp.pConfig = P.config;
	sp.counterDataImageSize = zp.counterDataSize;
	sp.pCounterDataImage = cd;
	sp.range = CUPTI_AutoRange;
	sp.replayMode = user ? CUPTI_UserReplay : CUPTI_KernelReplay;
	sp.maxRangesPerPass = max_ranges;
	sp.numNestingLevels = 1;
	sp.minNestingLevel = 1;
	sp.passIndex = 0;
	sp.targetNestingLevel = 0;
	if ((cr = P.rp_setcfg(&sp)) != CUPTI_SUCCESS) {
		fail(why, nwhy, "cuptiRangeProfilerSetConfig", cr);
		goto out;
	}
	st.pRangeProfilerObject = ep.pRangeProfilerObject;
	wk_progress(w, es->timeout_s * (double)(P.passes + 2) + 60);
	/* kernel replay: one run; user replay: one run a pass (a bound on them
	 * in case CUPTI never says it has all it needs) */
	for (int pass = 0;; pass++) {
		if ((cr = P.rp_start(&st)) != CUPTI_SUCCESS) {
			fail(why, nwhy, "cuptiRangeProfilerStart", cr);
			goto out;
		}
		started = 1;
		r = wk_launch_candidate(es, w->in, w->ev[0], w->ev[1], &err);
		if (r == RUN_OK)
			r = wk_wait(w, w->ev[1], es->timeout_s * (double)(P.passes + 2), &err);
		if (r != RUN_OK) {
			snprintf(why, nwhy, "the profiled block: %s", r == RUN_TIMEOUT ? "timed out" : err.s);
			goto out;
		}
		so.pRangeProfilerObject = ep.pRangeProfilerObject;
		cr = P.rp_stop(&so);
		started = 0;
		if (cr != CUPTI_SUCCESS) {
			fail(why, nwhy, "cuptiRangeProfilerStop", cr);
			goto out;
		}
		if (so.isAllPassSubmitted)
			break;
		if (!user || (size_t)pass + 1 >= (size_t)P.passes + 2) {
			snprintf(why, nwhy, "%s replay left passes unsubmitted after %d run(s)",
				 user ? "user" : "kernel", pass + 1);
			goto out;
		}
	}
	de.pRangeProfilerObject = ep.pRangeProfilerObject;
	if ((cr = P.rp_decode(&de)) != CUPTI_SUCCESS) {
		fail(why, nwhy, "cuptiRangeProfilerDecodeData", cr);
		goto out;
	}
	ci.pCounterDataImage = cd;
	ci.counterDataImageSize = zp.counterDataSize;
	if ((cr = P.rp_cd_info(&ci)) != CUPTI_SUCCESS) {
		fail(why, nwhy, "cuptiRangeProfilerGetCounterDataInfo", cr);
		goto out;
	}
	/* Auto ranges are numbered, not named: the block's launches are the
	 * last n (the harness's come first). */
	if (ci.numTotalRanges < (size_t)n || de.numOfRangeDropped) {
		snprintf(why, nwhy, "%zu ranges (%zu dropped) for %d launches", ci.numTotalRanges,
			 de.numOfRangeDropped, n);
		goto out;
	}
	first = ci.numTotalRanges - (size_t)n;
	for (int i = 0; i < n; i++) {
		CUpti_Profiler_Host_EvaluateToGpuValues_Params vp = {
			CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
		double v[M_N], slot[M_N];
		vp.pHostObject = P.host;
		vp.pCounterDataImage = cd;
		vp.counterDataImageSize = zp.counterDataSize;
		vp.rangeIndex = first + (size_t)i;
		vp.ppMetricNames = P.metrics;
		vp.numMetrics = (size_t)P.n;
		vp.pMetricValues = v;
		if ((cr = P.host_eval(&vp)) != CUPTI_SUCCESS) {
			fail(why, nwhy, "cuptiProfilerHostEvaluateToGpuValues", cr);
			goto out;
		}
		for (int m = 0; m < M_N; m++)
			slot[m] = NAN;
		for (int m = 0; m < P.n; m++)
			slot[P.slot[m]] = v[m];
		k[i].duration_ms = slot[M_DUR] * 1e-6;   /* ns */
		k[i].dram_read_bytes = slot[M_RD];
		k[i].dram_write_bytes = slot[M_WR];
		k[i].dram_pct = slot[M_DRAM];
		k[i].l2_hit_pct = slot[M_L2];
		k[i].sm_pct = slot[M_SM];
		k[i].occupancy_pct = slot[M_OCC];
		for (int m = M_T0; m <= M_TLAST; m++)
			if (isfinite(slot[m]) && !(slot[m] <= k[i].tensor_pct))
				k[i].tensor_pct = slot[m];
	}
	ret = 0;
out:
	if (started) {
		so.pRangeProfilerObject = ep.pRangeProfilerObject;
		P.rp_stop(&so);
	}
	dp.pRangeProfilerObject = ep.pRangeProfilerObject;
	P.rp_disable(&dp);
	free(cd);
	buf_release(&err);
	return ret;
}

static json_t *env_of(json_t *res)
{
	json_t *env = json_object_get(res, "env");

	if (!json_is_object(env)) {
		env = json_object();
		json_object_set_new(res, "env", env);
	}
	return env;
}

void wk_profile(struct wk_eval_state *es, json_t *res)
{
	struct worker *w = es->w;
	double t0 = now_s();
	const char *no = getenv("KFORGE_NO_PROFILE");
	long long nl = es->cand.plan.n_launches;
	struct prof_kernel *k = NULL;
	int *step = NULL;
	char why[320] = "";
	struct buf err = BUF_INIT;
	json_t *env = env_of(res), *ms;

	if (no && *no && strcmp(no, "0")) {
		snprintf(why, sizeof(why), "KFORGE_NO_PROFILE is set");
		goto out;
	}
	if (nl < 1 || nl > PROF_MAX_LAUNCHES) {
		snprintf(why, sizeof(why), "%lld launches per block (profiled: 1 to %d)", nl,
			 PROF_MAX_LAUNCHES);
		goto out;
	}
	if (!P.tried) {
		/* Once per worker: opening CUPTI, the metrics, the config image. */
		double t1 = now_s();
		int r = prof_open(w);
		json_object_set_new(env, "profile_open_ms", json_real((now_s() - t1) * 1000.0));
		if (r < 0) {
			snprintf(why, sizeof(why), "%s", P.why);
			goto out;
		}
	}
	if (prof_open(w) < 0) {
		snprintf(why, sizeof(why), "%s", P.why);
		goto out;
	}
	k = calloc((size_t)nl, sizeof(*k));
	step = calloc((size_t)nl, sizeof(*step));
	if (!k || !step) {
		snprintf(why, sizeof(why), "out of memory");
		goto out;
	}
	{
		struct walk wk = { es, k, 0, (int)nl, step, &err };
		if (launch_plan_walk(&es->cand.plan, walk_one, &wk, &err) != 0 || wk.n != (int)nl) {
			snprintf(why, sizeof(why), "the launch block's configurations: %s", err.s);
			goto out;
		}
	}
	wk_cupti_pause(w, 1);
	if (profile_block(es, k, (int)nl, why, sizeof(why)) == 0) {
		double cost = (now_s() - t0) * 1000.0;
		json_object_set_new(res, "profile", prof_to_json(k, (int)nl, timed_mean(res), cost, P.tool));
		ms = json_array();
		for (int i = 0; i < P.n; i++)
			json_array_append_new(ms, json_string(P.metrics[i]));
		json_object_set_new(env, "profile_metrics", ms);
		json_object_set_new(env, "profile_passes", json_integer((json_int_t)P.passes));
		json_object_set_new(env, "profile_replay", json_string(written_bytes(es) >
			PROF_USER_REPLAY_BYTES ? "user" : "kernel"));
	}
	wk_cupti_pause(w, 0);
out:
	if (why[0]) {
		log_info("no profile: %s", why);
		json_object_set_new(env, "profile_note", json_string(why));
	}
	free(k);
	free(step);
	buf_release(&err);
}
