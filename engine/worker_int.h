/* The GPU worker (`kforge __worker --device N`): a process that owns one
 * CUDA context and serves the supervisor's requests (engine/rt.h) one at
 * a time. Single-threaded, except for CUPTI's buffer callbacks.
 *
 * Memory layout of every device buffer (tensors and scratch):
 *   [guard WK_GUARD bytes][data][guard: padding, WK_GUARD bytes, up to 2 MiB pages]
 * guards hold WK_GUARD_BYTE and are counted after each run. */
#ifndef KF_WORKER_INT_H
#define KF_WORKER_INT_H

#include <jansson.h>
#include "core/buf.h"
#include "core/cudadrv.h"
#include "problem/problem.h"
#include "engine/launch.h"

#define WK_GUARD 4096
#define WK_GUARD_BYTE 0xA5
#define WK_ALLOC_GRAIN (2u << 20)  /* buffers take whole pages: the slack is guard */
/* A search of 8 problems at once on one GPU keeps about 9 seeds each: 64
 * slots and a quarter of an H100 (20 GB) made it recompute 751 of 1829
 * reference runs (its second visit to each problem: the v0.2.0 level-1 run) */
#define WK_MAX_KEEP 160            /* reference outputs kept ((problem, seed) pairs) */
#define WK_KEEP_SHARE 2            /* other problems' keeps: at most 1/2 of device memory, */
#define WK_KEEP_HEADROOM 8         /* and never leave less than 1/8 of it free */
#define WK_SLOT_U64 8              /* u64 per stats slot */
#define WK_MAX_SLOTS 16384        /* > 2 x PROBLEM_MAX_TENSORS: timing's post checks */
#define WK_MAX_EVENTS 2048
#define WK_CUPTI_MAX_RECORDS (1 << 22)  /* timed launches CUPTI records (16 B each) */

struct wk_buf {
	CUdeviceptr base, data;
	size_t bytes;              /* data bytes (unpadded) */
	size_t total;
};

/* One seed's reference outputs. Kept across problems (a search has several
 * in flight and the worker serves them in turns); a keep is its problem's
 * while dir and ref_hash match the current ones. */
struct wk_keep {
	char dir[1024];
	char ref_hash[65];
	size_t bytes;              /* device bytes of out[] */
	unsigned long long seed;
	int dist;                  /* 0 = the spec's distributions */
	int used;
	unsigned long long *in_sum;  /* n_in checksums of the inputs, owned */
	CUdeviceptr *out;          /* n_out kept outputs, owned */
	int n_out;
	unsigned long long ref_far; /* bit o: output o's reference is not the degenerate constant */
	double ref_ms;
	unsigned long long stamp;  /* LRU among the current problem's */
	double prio;               /* GreedyDual-Size: eviction order of other problems' */
};

struct wk_module {
	CUmodule mod;
	struct launch_plan plan;
	CUfunction *fn;            /* one per step */
	struct wk_buf *scratch;    /* one per plan scratch */
	int loaded;
	/* Module variables (.nv.global*), restored from their image at load
	 * before every launch block: nothing written survives a block. */
	int n_glob, glob_missing;
	CUdeviceptr *gptr;
	size_t *gsize;
	CUdeviceptr gimage;        /* their load-time contents, back to back */
};

struct worker {
	struct cudadrv d;
	int device;
	CUdevice dev;
	CUcontext ctx;
	CUstream st;
	int in_fd, out_fd;
	json_t *info;
	char arch[16];
	size_t l2_bytes;

	/* harness module (engine/cuda/harness.cuh + the input generator) */
	struct buf harness_cubin;
	CUmodule hmod;
	CUfunction f_compare, f_checksum, f_count_ne, f_fma, f_copy, f_fill, f_fill_softmax;
	CUfunction f_mask_copy, f_scrub, f_count_far, f_constlike;
	unsigned long long mask_key;  /* secret: kept references are stored XORed with it */
	int scrub_smem;               /* dynamic shared memory the scrub kernel fills */

	struct wk_buf flush;       /* > L2, memset before every launch of a candidate */
	CUdeviceptr slots;         /* WK_MAX_SLOTS x WK_SLOT_U64 u64 */
	unsigned long long *hslots;/* pinned mirror */
	CUevent ev[WK_MAX_EVENTS];
	int n_ev;

	/* the current problem */
	char prob_dir[1024];
	struct problem p;
	int have_problem;
	struct wk_buf *in, *out;   /* p.n_in, p.n_out; owned while have_problem */
	struct wk_buf *in2;        /* second input set for timing (may be absent), p.n_in */
	int have_in2;
	unsigned long long in_seed, in2_seed;     /* what in/in2 hold; ~0 = nothing */
	int in_dist, in2_dist;
	char ref_hash[65];
	struct wk_module ref;
	struct wk_keep keep[WK_MAX_KEEP];
	unsigned long long stamp;
	size_t keep_budget;        /* bytes other problems' keeps may hold */
	double keep_age;           /* GreedyDual-Size's L: the last evicted keep's prio */
	int refs_run;              /* reference runs in the current request */
	int loaded;                /* the current request loaded its problem */

	double t_req;              /* when the current request arrived */
	int fatal;                 /* the context is unusable: exit after replying */
	struct buf last_err;

	/* CUPTI / NVML, optional */
	void *cupti;
	void *nvml;
};

/* worker.c */
int worker_main(int device, int in_fd, int out_fd);
/* NVRTC (in process: trusted code) of the input generator + harness.cuh. */
int worker_harness_compile(const char *arch, struct buf *cubin, struct buf *err);
int wk_progress(struct worker *w, double next_s);
/* Describes r in err; sets w->fatal for sticky errors. Returns -1. */
int wk_cuda_err(struct worker *w, CUresult r, const char *what, struct buf *err);
int wk_alloc(struct worker *w, struct wk_buf *b, size_t bytes, struct buf *err);
void wk_free(struct worker *w, struct wk_buf *b);
/* Polls ev until done: 0; -1 CUDA error (err); -2 past timeout_s. */
int wk_wait(struct worker *w, CUevent ev, double timeout_s, struct buf *err);
int wk_launch_h(struct worker *w, CUfunction f, unsigned grid, void **args, struct buf *err);
int wk_module_load(struct worker *w, struct wk_module *m, const void *cubin, size_t len,
		   const char *plan_json, struct buf *err);
void wk_module_unload(struct worker *w, struct wk_module *m);
/* Queues the restore of m's module variables to their load-time contents. */
int wk_module_restore_globals(struct worker *w, struct wk_module *m, struct buf *err);

/* worker_eval.c: one evaluation's flow; worker_sample.c, worker_time.c */
int wk_eval(struct worker *w, const json_t *req, const struct buf *bin, json_t **res,
	    struct buf *err);
int wk_sample(struct worker *w, const json_t *req, const struct buf *bin, json_t **res,
	      struct buf *err);
int wk_peaks(struct worker *w, json_t **res, struct buf *err);

/* worker_keep.c: the loaded problem and the kept reference outputs */
/* A reference launch block may take this long ($KFORGE_REF_TIMEOUT, s). */
double wk_ref_timeout_s(void);
/* Loads the request's problem and reference module unless they are loaded. */
int wk_ensure_problem(struct worker *w, const json_t *req, const struct buf *bin,
		      struct buf *err);
/* Frees keep k's device memory; its slot is free again. */
void wk_drop_keep(struct worker *w, int k);
/* k is the current problem's and reference's. */
int wk_keep_is_current(const struct worker *w, const struct wk_keep *k);
/* k still holds (seed, dist): a later wk_ref_for may have evicted it. */
int wk_keep_holds(const struct wk_keep *k, unsigned long long seed, int dist);
/* Device bytes a keep takes for output o (at least 1). */
size_t wk_keep_out_bytes(const struct worker *w, int o);
/* After a failed candidate: inputs (and after an out-of-bounds write, the
 * keeps) are made again. */
void wk_distrust(struct worker *w, const char *failed_check);
/* The current problem's keep for (seed, dist), or NULL. */
struct wk_keep *wk_keep_find(struct worker *w, unsigned long long seed, int dist);
/* Stamps k as just used and sets its eviction priority. */
void wk_keep_touch(struct worker *w, struct wk_keep *k);
/* The other problems' keep to evict first (lowest prio), or -1; their bytes
 * in *idle_bytes. */
int wk_keep_victim(const struct worker *w, size_t *idle_bytes);
/* Whether other problems' keeps of idle bytes may stay when the current
 * problem is about to take `more` bytes of free_b free out of total. */
int wk_keeps_fit(const struct worker *w, size_t idle, size_t more, size_t free_b, size_t total);
/* Evicts wk_keep_victim's keep (after an out-of-memory error): 1, or 0
 * when there is none. */
int wk_drop_idle_keep(struct worker *w);
/* For wk_sample: the kept reference outputs of seed (spec distributions),
 * p.n_out of them, borrowed until the next request. */
int wk_ensure_ref_values(struct worker *w, const json_t *req, const struct buf *bin,
			 unsigned long long seed, int dist, const CUdeviceptr **outs, double *ref_ms,
			 struct buf *err);
double wk_host_decode(const unsigned char *p, enum kf_dtype t);

/* worker_cupti.c: durations of the candidate's kernels, in launch order */
int wk_cupti_open(struct worker *w);          /* 0, or -1 when unavailable (reason logged) */
/* Collects the records of kernels launched as the plan's steps are (grid, block, dynamic
 * shared memory); the plan must outlive the matching wk_cupti_stop. */
int wk_cupti_start(struct worker *w, const struct launch_plan *plan);
/* Flushes and returns the durations (ms) of the steps' kernels that started
 * after wk_cupti_start, in start order; *n set, *stale the matching
 * records from before (dropped), *renamed those CUPTI reported under a name
 * that is none of the steps'; caller frees. NULL when CUPTI is off. */
double *wk_cupti_stop(struct worker *w, int *n, int *stale, int *renamed);
/* After a stop: {"seen": non-harness kernel records in the window, "renamed", "unmatched":
 * up to 4 records ("name grid block smem") that matched no step, "dropped": records CUPTI
 * dropped since the worker started}. */
json_t *wk_cupti_diag(void);
void wk_cupti_close(struct worker *w);
/* libcupti by dlopen (CUDA_HOME, the toolkit's, then the loader's path), or NULL. */
void *wk_cupti_dlopen(void);
/* Kernel records off (1) while the range profiler runs, and on again (0). */
void wk_cupti_pause(struct worker *w, int pause);

/* worker_nvml.c: {"sm_clock_mhz","mem_clock_mhz","temperature_c","power_w"} */
void wk_nvml_open(struct worker *w);
json_t *wk_nvml_sample(struct worker *w);
void wk_nvml_close(struct worker *w);

/* ---- the evaluation's parts (worker_inputs.c, worker_launch.c,
 * worker_check.c), shared with worker_eval.c, worker_time.c, worker_sens.c */
enum { RUN_OK = 0, RUN_ERR = -1, RUN_TIMEOUT = -2, RUN_LAUNCH = -3 };

/* Phases of one evaluation, timed on the host (wall ms, kernel time included
 * where the phase runs the candidate). */
enum { WK_PH_SETUP, WK_PH_LOAD, WK_PH_REFS, WK_PH_INPUTS, WK_PH_CHECKS, WK_PH_TIMING,
       WK_PH_CUPTI, WK_PH_POST, WK_PH_COUNT };

struct wk_eval_state {
	struct worker *w;
	struct wk_module cand;
	int n_launches;            /* candidate launch blocks run */
	unsigned long long fill_rng; /* secret: how each launch's outputs are pre-filled */
	const json_t *proto;
	double atol, rtol, timeout_s;
	int normwise;              /* extra distributions: |a-b| <= atol + rtol*max|ref| */
	double kernel_ms;          /* all candidate runs */
	double prune_ms;           /* request's: stop timing when the mean passes this (0 = never) */
	json_t *res;
	double ph[WK_PH_COUNT];    /* wall ms per phase (harness overhead breakdown) */
};


struct run_verdict {
	char check[48];
	struct buf detail;
	double max_abs, max_rel;
	long long mismatches;
	double time_ms;
};

int wk_read_slots(struct worker *w, int n, double timeout, struct buf *err);
int wk_gen_inputs(struct worker *w, struct wk_buf *set, unsigned long long seed, int dist,
		  struct buf *err);
int wk_ensure_inputs(struct worker *w, unsigned long long seed, int dist, struct buf *err);
int wk_poison_outputs(struct worker *w, struct buf *err);
int wk_compare(struct worker *w, struct wk_eval_state *es, int o, CUdeviceptr ref, int slot,
	       struct buf *err);
/* Records e0, launches every step, records e1: RUN_* (scratch: the caller). */
int wk_run_plan(struct worker *w, struct wk_module *m, const struct wk_buf *ins, CUevent e0,
		CUevent e1, struct buf *err);
/* One launch of the candidate, the same for every check, repeat, warm-up
 * and timed run, so nothing tells them apart: shared memory scrubbed,
 * outputs pre-filled (the poison on the first launch, then poison or
 * random finite values by a secret coin), scratch filled, the L2 flushed,
 * events around the launch block. RUN_*. */
int wk_launch_candidate(struct wk_eval_state *es, const struct wk_buf *ins, CUevent e0,
			CUevent e1, struct buf *err);
/* A launch and its checks, the same for every launch: wk_launch_candidate,
 * then every output compared with k's, the inputs' checksums, the guard
 * canaries; waits (timeout_s) and judges. v->time_ms is the launch
 * block's time. RUN_OK, 1 (a failed check, in v) or RUN_*. */
int wk_checked_run(struct wk_eval_state *es, struct wk_keep *k, const struct wk_buf *ins,
		   const char *what, CUevent e0, CUevent e1, struct run_verdict *v, struct buf *err);
/* The host side of the reference mask: un-XORs n bytes read from byte
 * offset off of a kept output. */
void wk_unmask(const struct worker *w, unsigned char *p, size_t off, size_t n);
/* After a run: compares (when verify_out), input checksums and guard
 * counts into slots base.. (n_out compares, n_in sums, 1 guard). */
int wk_post_checks(struct wk_eval_state *es, struct wk_keep *k, const struct wk_buf *ins,
		   int base, int verify_out, struct buf *err);
/* Reads those slots' verdict into v: 0 pass, 1 fail. */
int wk_judge(struct wk_eval_state *es, struct wk_keep *k, int base, int verify_out,
	     const char *what, struct run_verdict *v);
/* The compares' part alone (n_out slots at base). */
int wk_judge_outputs(struct wk_eval_state *es, struct wk_keep *k, int base, const char *what,
		     struct run_verdict *v);
/* wk_compare on a secret sample: the 4096-element chunks c with
 * (mix(sample_key ^ c) & sample_mask) == 0; mask 0 compares everything. */
int wk_compare_sample(struct worker *w, struct wk_eval_state *es, int o, CUdeviceptr ref, int slot,
		      unsigned long long sample_key, unsigned sample_mask, struct buf *err);
json_t *wk_trial_json(int idx, unsigned long long seed, const struct run_verdict *v, int ok);
void wk_set_result(json_t *res, const char *status, const char *check, const char *detail);
/* Maps a run's result to the eval status in res; 1 when the eval ends. */
int wk_run_status(json_t *res, int r, const struct run_verdict *v, const char *fail_check,
		  struct buf *err);
double wk_finite_or_big(double v);
double wk_bits_d(unsigned long long u);
CUdeviceptr wk_slot_ptr(struct worker *w, int s);
/* Blocks of 256 threads for n elements, at most 16 per SM (worker_inputs.c). */
unsigned wk_grid_for(struct worker *w, unsigned long long n);
/* Order-free hash of a buffer's data, added to slot s. */
int wk_checksum(struct worker *w, const struct wk_buf *b, int slot, struct buf *err);
/* Bytes of b's guard canaries that are no longer WK_GUARD_BYTE, added to slot. */
int wk_count_guard(struct worker *w, const struct wk_buf *b, int slot, struct buf *err);
/* Before each candidate: every buffer's canaries restored. */
void wk_refill_guards(struct worker *w);
/* The "edges" draw of this problem: 1 large negatives, 2 near zero, 0 none. */
int wk_edges_kind(const struct worker *w);
/* The bound r of the "uniform_wide" draw U[-r, r). */
double wk_wide_bound(const struct worker *w);
/* A module's scratch filled as declared (zeroed, or 0xFF bytes). */
int wk_fill_scratch(struct worker *w, struct wk_module *m, struct buf *err);
/* splitmix64: the next value of the secret stream *s. */
unsigned long long wk_next_rng(unsigned long long *s);

/* worker_keep.c: the reference outputs of (seed, dist), computed or kept. */
struct wk_keep *wk_ref_for(struct worker *w, unsigned long long seed, int dist, struct buf *err);

/* worker_sens.c: draws beyond the extra distributions (docs/engine.md,
 * "Sensitivity trials"). dist WK_DIST_ALIVE: the spec's "alive" draw;
 * WK_DIST_SENS | j << 1 | alive: sensitivity trial j (problem/sensitivity.h). */
#define WK_DIST_ALIVE 5
#define WK_DIST_SENS 0x100000
struct kf_gen_desc;
/* For those dists: g described as the draw makes tensor t; 1, else 0. */
int wk_draw_desc(const struct worker *w, int t, int dist, struct kf_gen_desc *g);
/* After tensor t of set is filled: the alive "set" ranges, a redrawn region. */
int wk_draw_post(struct worker *w, struct wk_buf *set, int t, unsigned long long seed, int dist,
		 struct buf *err);
/* The degenerate-output rule: the bits of the outputs whose reference
 * (kept masked) is away from the constant; counts in slots slot0.. */
int wk_ref_far_launch(struct worker *w, struct wk_keep *k, int slot0, struct buf *err);
unsigned long long wk_ref_far_bits(struct worker *w, int slot0);
/* After a passed checked run: 1 (v set) when an output whose reference
 * (k) is away from the constant is the constant, or nearer to it than to
 * the reference in 1% or more of those elements; 0, or RUN_*. */
int wk_degenerate_check(struct wk_eval_state *es, struct wk_keep *k, const char *what,
			struct run_verdict *v, struct buf *err);
/* A checked run on the inputs of seed (the spec's draw) after the timed
 * trials: one that turned to the degenerate constant once timed (within
 * atol: the timed comparisons pass) fails here. 1 when it failed (res
 * set), 0, or -1 (err). */
int wk_after_timing(struct wk_eval_state *es, json_t *res, unsigned long long seed,
		    struct run_verdict *v, struct buf *err);
/* The sensitivity trials of the protocol's "sensitivity" (at most that
 * many): 1 when one failed (res set), 0, or -1 (err). */
int wk_sens_trials(struct wk_eval_state *es, json_t *res, unsigned long long seed0,
		   struct buf *err);

/* worker_prof.c: after the timed trials of a correct kernel, the profile
 * of one extra launch block (docs/engine.md "Profiles") in res "profile",
 * or the reason there is none in res env "profile_note". Never fails. */
void wk_profile(struct wk_eval_state *es, json_t *res);

/* worker_time.c: warm-ups and timed trials on the inputs of kA and kB (a
 * secret coin per launch) and of the n_fresh fresh sets (each first used
 * by a secret timed trial); RUN_OK, 1 (a failed check, set in res) or RUN_*. */
int wk_timing(struct wk_eval_state *es, struct wk_keep *kA, struct wk_keep *kB,
	      struct wk_keep *const *fresh, int n_fresh, json_t *res, struct buf *err);

#endif
