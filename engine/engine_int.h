/* Internals shared by engine.c, engine_store.c, supervisor.c and
 * engine_peaks.c. Not a public header: the collector and verifier use
 * engine/engine.h only. */
#ifndef KF_ENGINE_INT_H
#define KF_ENGINE_INT_H

#include <pthread.h>
#include <jansson.h>
#include "problem/problem.h"
#include "store/store.h"
#include "engine/engine.h"
#include "engine/compile.h"
#include "engine/launch.h"

struct compile_pool;
struct supervisor;

/* A problem the engine has seen: loaded once, its store row written once,
 * its reference compiled once (GPU mode). */
struct eng_problem {
	struct problem p;
	char *dir;
	int ref_ready;             /* ref_cubin/ref_plan set (GPU mode) */
	struct buf ref_cubin;
	struct buf ref_plan;       /* launch_plan_to_json of reference.cu */
	char ref_hash[65];
	struct eng_problem *next;
};

#define ENG_PREFETCH 4

struct engine {
	char *root, *arch, *store_path, *exe;
	int compile_only;
	int profile;               /* engine_config's, less KFORGE_NO_PROFILE */
	struct eval_protocol proto;
	char proto_name[32];
	char dist_names[8][32];      /* copies of the protocol's extra distributions */
	const char *dist_ptrs[9];
	struct buf proto_json;     /* every protocol parameter, compact, sorted keys */
	struct compile_opts copts;
	struct compile_pool *pool;
	struct launch_limits lim;

	pthread_mutex_t store_mu;  /* the one store connection */
	struct store store;

	pthread_mutex_t prob_mu;
	struct eng_problem *probs;

	struct supervisor *sup;    /* NULL with compile_only */
	char gpu_name[128];
	json_t *gpu_info;          /* from the first worker's hello (owned) */
	double peak_gbs, peak_gflops;
	unsigned long long seed_base; /* the check seeds' base: the protocol's, or secret */

	pthread_mutex_t pf_mu;     /* compiles started ahead (engine_prefetch.c) */
	struct { char *src; struct compile_job *job; } pf[ENG_PREFETCH];
	int n_pf;
};

/* ---- engine_prefetch.c ------------------------------------------------------ */
/* The prefetched compile of device_src, taken out of the list (the caller
 * waits for it), or NULL. */
struct compile_job *eng_prefetched(struct engine *e, const char *device_src);
void eng_prefetch_release(struct engine *e);

/* ---- engine_store.c (call with store_mu held) ---------------------------- */
/* Texts are stored as valid UTF-8 (core/utf8.h): a candidate refused for
 * bytes that are not UTF-8 keeps its hash (of the bytes as given) but its
 * source has U+FFFD in their place. */
int es_put_kernel(struct store *s, const char *hash, const char *canonical, size_t len,
		  struct buf *err);
int es_put_compile(struct store *s, const char *compile_id, const char *kernel_hash,
		   const char *arch, const struct compile_result *r, const char *status,
		   const char *message, struct buf *err);
/* 1 and the outcome filled when eval_id exists, 0 when not, -1 on error. */
int es_find_eval(struct store *s, const char *eval_id, struct eval_outcome *o, struct buf *err);
/* Writes (replacing) the evals row and its trials from the outcome and the
 * worker's result (may be NULL: no trials). One transaction. */
int es_put_eval(struct store *s, const struct eval_outcome *o, const char *problem_id,
		const char *protocol_name, const char *protocol_json, const json_t *result,
		struct buf *err);
int es_put_gpu(struct store *s, const json_t *info, double gbs, double tflops, struct buf *err);

/* ---- engine.c helpers ----------------------------------------------------- */
/* The problem (loaded once, its store row written once). */
struct eng_problem *engine_problem(struct engine *e, const char *query, struct buf *err);
/* Its reference compiled and planned (once). */
int engine_problem_reference(struct engine *e, struct eng_problem *ep, struct buf *err);
/* The FLOP/s of problem p's precision path on the GPU of gpu_info (its arch,
 * SMs, highest clock): with a GEMM or a convolution (families matmul, conv,
 * attention, graph) the fastest fp32-accurate tensor-core path, a third of
 * the dense fp16 rate; else the dense fp16 rate. *path (may be NULL) says
 * which. 0 when unknown. */
double engine_sol_flop_rate(const json_t *gpu_info, const struct problem *p, const char **path);
/* The speed-of-light floor (ms) of problem p on the GPU of a worker's
 * hello (gpu_info): its minimal bytes at the memory's theoretical peak,
 * its FLOPs at engine_sol_flop_rate (the peaks in *bw B/s, *fl
 * FLOP/s); 0 when the attributes are missing. */
double engine_sol_floor_ms(const json_t *gpu_info, const struct problem *p, double *bw, double *fl);
/* A correct outcome whose fastest timed trial (in the worker's result) is
 * under that floor becomes incorrect, faster_than_speed_of_light: 1; else 0. */
int engine_sol_check(const json_t *gpu_info, const struct problem *p, struct eval_outcome *o,
		     const json_t *res);
/* The roofline floor (ms) with the measured copy bandwidth (gbs GB/s) and
 * FMA rate (gflops): for a GEMM or a convolution the compute ceiling is the
 * precision path's (engine_sol_flop_rate) where that is higher, so honest
 * tensor-core kernels are not under it (the verifier's review flag). 0 when
 * a peak is unknown. */
double engine_roofline_ms(const json_t *gpu_info, const struct problem *p, double gbs, double gflops);
/* engine_peaks.c */
int engine_measure_peaks(struct engine *e, struct buf *err);
void engine_protocol_json(const struct eval_protocol *p, const char *arch, struct buf *out);
/* sha256(kernel_hash|problem|gpu|protocol_json) */
void engine_eval_key(const char *kernel_hash, const char *problem_id, const char *gpu,
		     const char *protocol_json, char hex[65]);
/* Fills mean/median/std/min/max from the "time" trials of a worker result. */
void engine_time_stats(const json_t *result, struct eval_outcome *o);

/* ---- gpus.c: the visible GPUs and their models ---------------------------- */
#define GPU_NAME_MAX 128           /* as eval_outcome.gpu_name */
struct gpu_list {
	int n;
	char (*name)[GPU_NAME_MAX]; /* per device ordinal: its model */
};
void gpu_list_init(struct gpu_list *l);
void gpu_list_release(struct gpu_list *l);
/* From the driver, or KFORGE_WORKER_TEST_GPUS. 0, or KF_ENOGPU / -1 with err. */
int gpu_list_probe(struct gpu_list *l, struct buf *err);
/* The ordinals of model's devices (NULL or "": device 0's model), at most
 * max (0: all), into dev (room for l->n): their count, or KF_ENOMODEL with
 * err naming the models present. */
int gpu_list_select(const struct gpu_list *l, const char *model, int max, int *dev,
		    struct buf *err);
/* "'A' (GPUs 0, 2), 'B' (GPU 1)": every model but skip (may be NULL). */
void gpu_list_describe(const struct gpu_list *l, const char *skip, struct buf *out);

/* ---- supervisor.c --------------------------------------------------------- */
/* Starts one worker per visible GPU of one model (`exe __worker --device
 * i`; model NULL or "": device 0's; at most max_gpus of them, 0 = all)
 * and says hello to each; the GPUs of other models are left alone (one
 * info line names them). A worker whose hello names another model than
 * the driver did fails to start. The first worker compiles the harness
 * kernels and returns their cubin, which later (re)starts reuse (one
 * model: one architecture). info receives the first worker's device
 * description (new reference). A GPU whose worker fails to start 3 times
 * in a row is retired (a warning); open fails only when none starts.
 * KF_ENOGPU when there is no usable driver or GPU, KF_ENOMODEL when none
 * is of model. */
int supervisor_open(struct supervisor **sp, const char *exe, const char *model, int max_gpus,
		    json_t **info, struct buf *err);
/* The device ordinals of the pool's workers (retired ones included) into
 * dev (room for n); returns how many there are (for tests). */
int supervisor_devices(struct supervisor *s, int *dev, int n);
/* Sends one request (JSON + binary attachment) to a free worker and waits
 * for its reply, restarting the worker when it dies, hangs past the
 * deadline it announced, or reports a fatal error. *reply is a new
 * object; a dead or hung worker gives {"status":"timeout"|"runtime_error",
 * "fatal":true, "detail":...}. A worker that fails to start passes the
 * request to another; -1 only when every GPU was retired. */
int supervisor_request(struct supervisor *s, int type, const json_t *req, const void *bin,
		       size_t bin_len, json_t **reply, struct buf *err);
/* Workers in the pool (retired ones left out). */
int supervisor_n_workers(struct supervisor *s);
/* Requests waiting for a worker, and busy workers in *busy (for tests). */
int supervisor_waiting(struct supervisor *s, int *busy);
void supervisor_close(struct supervisor *s);

#endif
