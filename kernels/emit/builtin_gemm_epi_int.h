/* Internal to kernels/emit/builtin_gemm_epi*.c: the resolved configuration of
 * one emitted GEMM and the two cores' kernel writers. */
#ifndef KF_BUILTIN_GEMM_EPI_INT_H
#define KF_BUILTIN_GEMM_EPI_INT_H

#include "kernels/emit/builtin_epi.h"

struct gemm_cfg {
	const struct gemm_shape *sh;
	const char *name;
	int wgmma;		/* 1: sm_90a wgmma core; 0: sm_80+ mma.sync */
	int bf;			/* 1: tf32+bf16 split; 0: 3xTF32 */
	int BM, BN, WM, WN;	/* C tile; warps (mma only: wgmma is 128 x 128, 2 warpgroups) */
	int stages;
	int split;		/* K slices (1: the epilogue runs in the GEMM kernel) */
	int vec_a, vec_b;	/* 16-byte cp.async along the tile's contiguous dim */
	int bt_k;		/* wgmma with B stored [N][K]: the B tile kept K-contiguous */
	int nthr, smem;
	const char *params;	/* epilogue parameters (", T x" ...), "" when none */
	const char *pnames;	/* their names (", x" ...) */
};

/* The kernel NAME(kf_a, kf_b, kf_c PARAMS, kf_M, kf_N, kf_K); with split > 1
 * kf_c is the scratch of split fp32 partials and PARAMS is empty. Each
 * element goes through NAME_epi(v, b, m, n PNAMES) before the store. */
void gemm_emit_wgmma(struct buf *s, const struct gemm_cfg *c);
void gemm_emit_mma(struct buf *s, const struct gemm_cfg *c);

/* Pieces the conv core (builtin_conv_epi_mma.c) shares: the guarded device
 * helpers of both cores (kfg_cp16, kfg_cp4, kfg_lds128, kfg_bf2 ...), those
 * of the mma core (kfg_split, kfg_mma_*), and one K tile's MMAs. */
void gemm_emit_common(struct buf *s);
void gemm_emit_mma_helpers(struct buf *s);
void gemm_emit_mma_ktile(struct buf *s, int bf, const char *a_swz);
/* The wgmma core's device helpers (guarded) and its K loop (see the .c). */
void gemm_emit_wg_helpers(struct buf *s);
void gemm_emit_wg_loop(struct buf *s, const char *a_wo, int late, int presplit);

/* Both cores: the batch and K-slice prologue (bz, sz, kbeg, kend, ktiles,
 * operand pointers A, B and output Cout). */
void gemm_emit_prologue(struct buf *s, const struct gemm_cfg *c);
/* The store of one element: v at (m, n) of batch bz, epilogue applied. */
const char *gemm_store_stmt(const struct gemm_cfg *c);

#endif
