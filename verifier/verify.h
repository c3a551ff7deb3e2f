/* verifier/: re-verification of the best kernels on each GPU, owned by
 * struct verify_report (a run's verdicts). Includes engine/, store/ and below.
 *
 * The verifier: re-runs the best kernels of each problem under protocol
 * verify-v4 on the GPU it runs on, and records a verdict per kernel and
 * GPU model (verifications table). A kernel is `verified` on a GPU when
 * verify-v4 passes there (with a review flag it is counted as flagged,
 * not verified); otherwise it is `failed` with the check that failed, and
 * reports, the site and the dataset leave it out of "best". */
#ifndef KF_VERIFY_H
#define KF_VERIFY_H

#include <jansson.h>
#include "core/buf.h"
#include "store/store.h"
#include "engine/engine.h"

#define VERIFY_PROTOCOL "verify-v4"
#define VERIFY_REVIEW_SPEEDUP 10.0
/* Launch blocks of each sanitizer run: a secret number in [MIN, MAX] (was
 * 3: the --quick checks of the problem's distribution, normal and wide). */
#define VERIFY_SAN_LAUNCHES_MIN 4
#define VERIFY_SAN_LAUNCHES_MAX 40
#define VERIFY_ROOFLINE_MARGIN 0.9   /* flag times under 90% of the measured floor */
#define VERIFY_SOL_MARGIN 0.98      /* and under 98% of the speed of light (clocks move) */

struct verify_config {
	int top_k;                 /* best correct kernels per problem (3) */
	int per_category;          /* also the best kernel of each idea category (1) */
	const char *const *problems; /* NULL-ended problem ids, or NULL for all */
	const char *collect_protocol; /* which evaluations rank kernels (a LIKE pattern: "collect-%") */
	int sanitizer;             /* run compute-sanitizer on each problem's best kernel */
	const char *sanitizer_path;/* NULL: search PATH and CUDA_HOME/bin */
	double sanitizer_wall_s;   /* per tool run; 0: 600 s. Over it: "skipped" */
	double max_timing_s;       /* timed trials stop after this much kernel time (>= 10
				      trials; recorded in the protocol); 0: all 500 */
	int profile;               /* a CUPTI profile of each correct kernel re-timed (1) */
	const char *kforge_path;   /* this binary, for the sanitizer child */
	const char *db_path;
	const char *gpu_model;     /* the GPU model to verify on (engine_config.gpu_model; the
				      sanitizer child gets it too); NULL: the engine's default */
};

/* How the verifier evaluates: the real engine, or a test double. */
struct verify_backend {
	int (*eval)(void *ctx, const char *problem_id, const char *candidate,
		    struct eval_outcome *out, struct buf *err);
	const char *(*gpu_name)(void *ctx);
	/* Runs the sanitizer tools on one kernel; fills a JSON object
	 * {"memcheck": {"status": "clean"|"errors"|"skipped", "detail": ...}, "racecheck": ...}. */
	int (*sanitize)(void *ctx, const char *problem_id, const char *candidate, json_t *result,
			struct buf *err);
	/* Optional: frees the backend's GPU memory before a sanitizer run
	 * (the next eval takes it again). */
	void (*release)(void *ctx);
	/* Optional: starts compiling the kernel evaluated next, so its compile
	 * runs while the GPU checks and times the current one. */
	void (*prefetch)(void *ctx, const char *candidate);
	void *ctx;
};

struct verify_item {
	char problem_id[128];
	char kernel_hash[65];
	char verdict[16];          /* verified / failed */
	char failed_check[64];
	double speedup_eager;
	json_t *flags;             /* review flags (array of strings), owned */
	json_t *no_influence;      /* tensors the sensitivity trials found without influence on
				      the output (array of strings), owned; may be NULL */
};

struct verify_report {
	struct verify_item *items;
	int n, alloc;
	int verified, failed;
	int flagged;               /* of verified: with a review flag (not counted as verified) */
};

void verify_report_init(struct verify_report *r);
void verify_report_release(struct verify_report *r);

/* Selects the kernels to verify (top_k per problem + best per category)
 * on the given GPU; returns a new array of {problem_id, kernel_hash, source,
 * collect_time_ms} objects. */
json_t *verify_select(struct store *s, const struct verify_config *cfg, const char *gpu_name,
		      struct buf *err);

int verify_run(const struct verify_config *cfg, const struct verify_backend *be,
	       struct verify_report *rep, struct buf *err);

/* The real backend over engine.h (protocol verify-v4) and compute-sanitizer.
 * 0, or engine_open's code: KF_ENOGPU without a usable GPU or driver. */
int verify_backend_engine(struct verify_backend *be, const struct verify_config *cfg,
			  const char *root, struct buf *err);
void verify_backend_release(struct verify_backend *be);
/* 1 when a compute-sanitizer report names an error in device code; 0 when
 * it holds only host API errors (then the tool checked nothing). */
int verify_sanitizer_kernel_errors(const char *report);
/* The launch blocks of one sanitizer run (`kforge eval --quick-launches`):
 * secret, in [VERIFY_SAN_LAUNCHES_MIN, VERIFY_SAN_LAUNCHES_MAX]. */
int verify_sanitizer_launches(void);

#endif
