/* engine/: compiles, runs, checks and times candidates, owned by struct
 * engine (the compile pool, the supervised GPU workers, the protocols).
 * Includes core/, problem/ and store/.
 *
 * The evaluation engine's public API, shared by `kforge eval`, the
 * collector and the verifier. The engine compiles candidates (NVRTC in
 * sandboxed children, a pool on all cores), runs them on the GPU in
 * supervised worker processes (one per visible GPU of one model: an
 * engine serves one GPU model, so its results are keyed by that model),
 * checks them against the trusted reference, times them, and records
 * everything in the store (kernels, compiles, compile_kernels, evals,
 * eval_trials).
 *
 * Thread-safe: several threads may call engine_eval at once (each blocks
 * for its own result); the engine multiplexes them over the compile pool
 * and the GPU workers, so compiles overlap GPU work. */
#ifndef KF_ENGINE_H
#define KF_ENGINE_H

#include "core/buf.h"
#include "store/store.h"

struct engine;

/* Protocol: every parameter is stored with every result. */
struct eval_protocol {
	const char *name;          /* "collect-v3" (search), "verify-v4" (verifier) */
	int check_trials;          /* correctness trials, each with its own seed (5) */
	unsigned long long seed0;  /* trial i uses seed0 + i; 0 = secret: drawn at random by
				      each engine_open (a search, a verification), sent to the
				      worker, recorded with each trial, never in the protocol */
	int extra_trials;          /* trials per extra distribution (dists) */
	int warmup;                /* 3 */
	int timed_trials;          /* 100 (verify: 500) */
	int repeat_agree;          /* runs on identical inputs that must agree (2) */
	double atol, rtol;         /* 0 = the problem's tolerance class */
	const char *const *dists;  /* extra input distributions (verify); NULL-ended, may be NULL */
	double timeout_s;          /* per launch block wall timeout (e.g. 10 s) */
	int flush_l2;              /* 1 */
	double max_timing_s;       /* stop the timed trials once the kernel time passes this
				      (at least 10 trials); 0 = never (additive, runtime) */
	double prune_vs_eager;     /* stop them (after 3 trials) once the mean is over this many
				      times PyTorch eager's on this GPU; 0 = never, or no baseline */
	int fresh_sets;            /* timed phase: input sets no launch has seen, drawn by a secret
				      seed from the check mix, their references computed, each
				      first used by a secret timed trial (docs/engine.md); 0 = none */
	int timed_mix;             /* timed inputs drawn per trial from the check trials' mix of
				      distributions (1), or the problem's own only (0) */
	int sensitivity;           /* sensitivity trials, at most this many (verify: 32); 0 = none */
};
void eval_protocol_default(struct eval_protocol *p);   /* collect-v3 */
void eval_protocol_verify(struct eval_protocol *p);    /* verify-v4 */
/* A protocol by name (collect-v1/-v2/-v3, verify-v2/-v3/-v4): 0, or -1 when unknown.
 * The older ones are kept for runs started under them. */
int eval_protocol_by_name(struct eval_protocol *p, const char *name);

struct engine_config {
	const char *root;          /* kforge data root (problems/, templates/) */
	const char *arch;          /* NULL: from the GPU (sm_90a on CC 9.0); sm_90a with compile_only */
	int compile_only;          /* no GPU: compile and record, status "not_run" */
	int n_compile;             /* compile pool size; 0 = online CPUs */
	int max_gpus;              /* 0 = all visible of the model */
	const char *gpu_model;     /* the GPU model whose GPUs it runs on (cuDeviceGetName's name,
				      as `kforge gpu-info --models` prints it); NULL or "":
				      $KFORGE_GPU_MODEL, else device 0's model. GPUs of other
				      models are not used (their timings would be keyed as this
				      model's) */
	struct eval_protocol protocol;
	const char *store_path;    /* the engine opens its own connection */
	const char *exe;           /* the kforge binary run as `__worker` and `__compile`;
				      NULL: this process's executable */
	int profile;               /* a correct kernel's evaluation adds a CUPTI profile of one
				      extra launch block, after its timing (docs/engine.md
				      "Profiles"); KFORGE_NO_PROFILE=1 turns it off. Not part
				      of the protocol nor the evaluation's key */
};

struct eval_request {
	const char *problem_id;    /* "level1/023_Softmax" (or number/name prefix) */
	const char *candidate;     /* full candidate file text (docs/formats.md) */
	int force;                 /* re-evaluate even if this (kernel, gpu, protocol) exists */
	size_t candidate_len;      /* its bytes (NUL bytes are format errors); 0: strlen */
};

struct eval_outcome {
	char kernel_hash[65];
	char eval_id[65];
	char compile_id[65];
	char status[24];           /* format_error, compile_error, launch_error, runtime_error,
				      timeout, incorrect, correct, not_run */
	char failed_check[48];     /* for incorrect: output_mismatch, nan, partial_write,
				      inputs_modified, guard_overwritten, nondeterministic,
				      timed_output_mismatch, ...; else empty */
	struct buf detail;         /* human-readable: errors with line:col, compile log excerpt,
				      max errors and mismatch counts */
	double max_abs_err, max_rel_err;
	long long mismatches;
	double time_mean_ms, time_median_ms, time_std_ms, time_min_ms, time_max_ms;
	double cupti_mean_ms, cupti_median_ms;
	double speedup_eager, speedup_compile;  /* 0 when no baseline */
	double roofline_ms;        /* 0 when the GPU's ceilings are unknown */
	double sol_ms;             /* speed-of-light floor (the memory's and tensor cores' peaks);
				      a launch block faster than it is rejected; 0 when unknown */
	double compile_ms, harness_ms;          /* harness_ms = wall - kernel time */
	int compile_prefetched;                 /* its compile came from engine_prefetch */
	json_t *phases;            /* the worker's wall ms per phase, or NULL (owned) */
	int cached;                /* 1: the result came from the store */
	char gpu_name[128];
};
void eval_outcome_init(struct eval_outcome *o);
void eval_outcome_release(struct eval_outcome *o);

/* No GPU of the model asked for (engine_config.gpu_model): the CLI's usage
 * error; the message names the models present. */
#define KF_ENOMODEL (-4)

/* 0, or a negative code with err: KF_ENOGPU (core/cudadrv.h) when there
 * is no usable GPU or CUDA driver (and not compile_only), KF_ENOMODEL,
 * else -1. */
int engine_open(struct engine **e, const struct engine_config *cfg, struct buf *err);
/* 0 when an outcome was produced (whatever the kernel's status); -1 when
 * the engine itself failed (store, no GPU, worker cannot start). */
int engine_eval(struct engine *e, const struct eval_request *req, struct eval_outcome *out,
		struct buf *err);
/* Starts compiling candidate in the background: the next engine_eval of the
 * same device code takes that compile instead of starting its own (the
 * outcome says so: compile_prefetched). For callers that evaluate one kernel
 * after another; a candidate that does not parse is ignored. */
void engine_prefetch(struct engine *e, const char *candidate);
/* For `kforge problems check`: runs the problem's reference.cu at full size
 * on the GPU with the inputs of `seed` (the spec's distributions) and
 * copies back output `out` (0..n_out-1) at the n flat indices idx, as
 * doubles (NaN/Inf come back as NAN), plus the reference's time in ms. The
 * reference outputs are kept, so sampling several outputs or index sets
 * of one seed runs the reference once. `problem` is an id as for
 * engine_eval or a problem directory. 0, or -1 with err. */
int engine_sample(struct engine *e, const char *problem, unsigned long long seed, int out,
		  const long long *idx, int n, double *values, double *time_ms, struct buf *err);
/* The same without an engine handle, as cli/cmd_problems.c wants it: a
 * process-wide GPU engine (no store: an in-memory one) opened on first
 * use and closed at exit. Fails with KF_ENOGPU ("no CUDA driver found",
 * "no GPU visible") on machines without one. */
struct problem;
int engine_reference_sample(const struct problem *p, unsigned long long seed, int out,
			    const long long *idx, int n, double *vals, struct buf *err);
/* The same two on the alive draw (alive 1: recurrent models' "alive"
 * parameters, docs/engine.md) or the spec's (0). */
int engine_sample_draw(struct engine *e, const char *problem, unsigned long long seed, int alive,
		       int out, const long long *idx, int n, double *values, double *time_ms,
		       struct buf *err);
int engine_reference_sample_draw(const struct problem *p, unsigned long long seed, int alive,
				 int out, const long long *idx, int n, double *vals,
				 struct buf *err);
/* The GPU's measured ceilings (0 when unknown or compile_only). */
void engine_gpu_peaks(const struct engine *e, double *gbs, double *gflops);
/* The GPU models visible here, each once, device 0's first: a new array
 * of {"name": model, "devices": [ordinal, ...]}. 0, or KF_ENOGPU with err
 * without a driver or GPU. KFORGE_WORKER_TEST_GPUS stands in for the
 * driver (tests: "N" or "Model A,Model B,..."). */
int engine_gpu_models(json_t **models, struct buf *err);
/* The model an engine opened with this gpu_model would serve (the chosen
 * one, $KFORGE_GPU_MODEL, else device 0's) into name: 0, KF_ENOMODEL when
 * no GPU here is of it (err names those present), or KF_ENOGPU. */
int engine_gpu_model(const char *gpu_model, char *name, size_t cap, struct buf *err);
/* gpu_model when set, else $KFORGE_GPU_MODEL when set, else NULL (device
 * 0's model): the choice, before any GPU is probed. */
const char *engine_gpu_model_wanted(const char *gpu_model);
/* The GPU model name ("" with compile_only). */
const char *engine_gpu_name(const struct engine *e);
/* The target it compiles for ("sm_90a"; --arch with compile_only). */
const char *engine_arch(const struct engine *e);
/* The GPUs in its pool now (0 with compile_only). */
int engine_n_gpus(const struct engine *e);
void engine_close(struct engine *e);

#endif
