/* The profile of one extra launch block (docs/engine.md "Profiles"): what
 * engine/worker_prof.c measures with CUPTI's range profiler, turned into
 * the JSON form of store/store_profile.h. Pure: no CUDA, no CUPTI. */
#ifndef KF_ENGINE_PROFILE_H
#define KF_ENGINE_PROFILE_H

#include <jansson.h>

/* One kernel launch of the block; NAN: not measured, -1: unknown. */
struct prof_kernel {
	char name[128];
	double duration_ms;
	double dram_read_bytes, dram_write_bytes;
	double dram_pct, l2_hit_pct, sm_pct, tensor_pct, occupancy_pct;
	int registers, shared_bytes, block_threads, grid_blocks;
};

/* The limiter thresholds (docs/engine.md "Profiles" says why these). */
#define PROF_BUSY_PCT 60.0          /* DRAM or SM at >= 60% of its peak bounds the kernel */
#define PROF_TENSOR_PCT 40.0        /* a tensor pipe busy >= 40% of its cycles: compute */
#define PROF_LAUNCH_MIN 8           /* launches for the tiny-kernel launch rule */
#define PROF_TINY_MS 0.010          /* mean kernel duration under 10 us: tiny */
#define PROF_GAP_SHARE 0.6          /* kernels busy under 60% of the timed block */

void prof_kernel_init(struct prof_kernel *k);

/* "memory", "compute", "latency" or "launch" (static strings). launches:
 * the block's kernel launches (1 for a kernel alone); kernel_ms: their
 * summed duration; timed_mean_ms: the timed block's mean (0: unknown).
 * NAN percentages count as 0. */
const char *prof_limiter(double dram_pct, double sm_pct, double tensor_pct, int launches,
			 double kernel_ms, double timed_mean_ms);

/* The profile as store_profile.h's JSON, less eval_id, kernel_hash,
 * problem_id, gpu_name and created_at (the engine's): block figures over
 * the n kernels (bytes summed, percentages weighted by duration), each
 * kernel's and the block's limiter. New reference. */
json_t *prof_to_json(const struct prof_kernel *k, int n, double timed_mean_ms, double cost_ms,
		     const char *tool);

#endif
