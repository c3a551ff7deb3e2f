/* The GPU worker (`kforge __worker --device N`): a process that owns one
 * CUDA context and serves the supervisor's requests (engine/rt.h) one at
 * a time. Single-threaded, except for CUPTI's buffer callbacks.
 *
 * Memory layout of every device buffer (tensors and scratch):
 *   [guard WK_GUARD bytes][data, padded to 256][guard WK_GUARD bytes]
 * guards hold WK_GUARD_BYTE and are counted after each run. */
#ifndef KF_WORKER_INT_H
#define KF_WORKER_INT_H

#include <jansson.h>
#include "core/buf.h"
#include "core/cudadrv.h"
#include "core/problem.h"
#include "engine/launch.h"

#define WK_GUARD 4096
#define WK_GUARD_BYTE 0xA5
#define WK_MAX_KEEP 16             /* reference outputs kept (seeds) */
#define WK_SLOT_U64 8              /* u64 per stats slot */
#define WK_MAX_SLOTS 8192
#define WK_MAX_EVENTS 2048

struct wk_buf {
	CUdeviceptr base, data;
	size_t bytes;              /* data bytes (unpadded) */
	size_t total;
};

struct wk_keep {
	unsigned long long seed;
	int dist;                  /* 0 = the spec's distributions */
	int used;
	unsigned long long in_sum[PROBLEM_MAX_TENSORS];
	CUdeviceptr out[PROBLEM_MAX_TENSORS];
	double ref_ms;
	unsigned long long stamp;  /* LRU */
};

struct wk_module {
	CUmodule mod;
	struct launch_plan plan;
	CUfunction *fn;            /* one per step */
	struct wk_buf *scratch;    /* one per plan scratch */
	int loaded;
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

	struct wk_buf flush;       /* > L2, memset before each timed trial */
	CUdeviceptr slots;         /* WK_MAX_SLOTS x WK_SLOT_U64 u64 */
	unsigned long long *hslots;/* pinned mirror */
	CUevent ev[WK_MAX_EVENTS];
	int n_ev;

	/* the current problem */
	char prob_dir[1024];
	struct problem p;
	int have_problem;
	struct wk_buf in[PROBLEM_MAX_TENSORS], out[PROBLEM_MAX_TENSORS];
	struct wk_buf in2[PROBLEM_MAX_TENSORS];   /* second input set for timing (may be absent) */
	int have_in2;
	unsigned long long in_seed, in2_seed;     /* what in/in2 hold; ~0 = nothing */
	int in_dist, in2_dist;
	char ref_hash[65];
	struct wk_module ref;
	struct wk_keep keep[WK_MAX_KEEP];
	unsigned long long stamp;

	double t_req;              /* when the current request arrived */
	int fatal;                 /* the context is unusable: exit after replying */
	struct buf last_err;

	/* CUPTI / NVML, optional */
	void *cupti;
	void *nvml;
};

/* worker.c */
int worker_main(int device, int in_fd, int out_fd);
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

/* worker_eval.c */
int wk_eval(struct worker *w, const json_t *req, const struct buf *bin, json_t **res,
	    struct buf *err);
int wk_sample(struct worker *w, const json_t *req, const struct buf *bin, json_t **res,
	      struct buf *err);
int wk_peaks(struct worker *w, json_t **res, struct buf *err);
/* For wk_sample: the kept reference outputs of seed (spec distributions). */
int wk_ensure_ref_values(struct worker *w, const json_t *req, const struct buf *bin,
			 unsigned long long seed, CUdeviceptr *outs, double *ref_ms, struct buf *err);
double wk_host_decode(const unsigned char *p, enum kf_dtype t);

/* worker_cupti.c: kernel durations of the named kernels, in launch order */
int wk_cupti_open(struct worker *w);          /* 0, or -1 when unavailable (reason logged) */
int wk_cupti_start(struct worker *w, const char *const *names, int n);
/* Flushes and returns the durations (ms) of matching kernels in start
 * order; *n set; caller frees. NULL when CUPTI is off. */
double *wk_cupti_stop(struct worker *w, int *n);
void wk_cupti_close(struct worker *w);

/* worker_nvml.c: {"sm_clock_mhz","mem_clock_mhz","temperature_c","power_w"} */
void wk_nvml_open(struct worker *w);
json_t *wk_nvml_sample(struct worker *w);
void wk_nvml_close(struct worker *w);

#endif
