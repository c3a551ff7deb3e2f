/* The engine's rows, read back: kernels, compiles (+ compile_kernels),
 * evaluations (+ eval_trials) and GPUs. engine/engine_store.c writes them
 * through store_insert; the queries and the one delete live here. */
#ifndef KF_STORE_EVAL_H
#define KF_STORE_EVAL_H

#include "store.h"

/* 1 when the kernels table holds hash, 0 when not, -1 on error. */
int store_kernel_exists(struct store *s, const char *hash, struct buf *err);
/* A kernel's source into out: 1 found, 0 not, -1 on error. */
int store_kernel_source(struct store *s, const char *hash, struct buf *out, struct buf *err);

/* The per-kernel statistics of a compile: a new array of {kernel_name,
 * registers, shared_bytes, spill_store_bytes, spill_load_bytes, stack_bytes,
 * const_bytes} ordered by kernel_name, or NULL on error. */
json_t *store_compile_kernels(struct store *s, const char *compile_id, struct buf *err);

/* The evals row of eval_id (every column; new reference) or NULL in *row;
 * 0, or -1 on error. */
int store_eval_get(struct store *s, const char *eval_id, json_t **row, struct buf *err);
/* Deletes an evaluation's trials (a forced re-evaluation replaces them as
 * a whole; the caller holds the transaction). */
int store_eval_delete_trials(struct store *s, const char *eval_id, struct buf *err);

/* The measured ceilings of a GPU (0 where unknown or not in the store). */
int store_gpu_peaks(struct store *s, const char *gpu, double *gbs, double *tflops,
		    struct buf *err);
/* A GPU as the engine recorded it: {arch, sm_count, memory_bytes, l2_bytes,
 * driver, cuda_version} (new reference) or NULL in *row; 0, or -1. */
int store_gpu_details(struct store *s, const char *gpu, json_t **row, struct buf *err);
/* The GPUs with a measured bandwidth (only `name` unless NULL): a new
 * array of {name, peak_bw_gbs, peak_fp32_tflops} ordered by name. */
json_t *store_gpus_measured(struct store *s, const char *name, struct buf *err);

#endif
