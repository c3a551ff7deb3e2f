/* The built-in templates (internal to kernels/). */
#ifndef KF_BUILTIN_TMPL_H
#define KF_BUILTIN_TMPL_H

#include <jansson.h>
#include "core/buf.h"

int tmpl_ew_supports(const json_t *spec);
int tmpl_ew_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);
int tmpl_rowsoftmax_supports(const json_t *spec);
int tmpl_rowsoftmax_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);
int tmpl_reduce_supports(const json_t *spec);
int tmpl_reduce_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);
int tmpl_matmul_supports(const json_t *spec);
int tmpl_matmul_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);

/* A family file may define several templates; its array ends with a
 * { NULL } entry. defaults: JSON object of every parameter's default. */
struct tmpl_def {
	const char *id;
	int (*supports)(const json_t *spec);
	int (*render)(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);
	const char *defaults;
};
/* builtin_norm.c: norms: batch/instance/group/layer/RMS/L1/L2/Frobenius (33-40) */
extern const struct tmpl_def tmpl_norm_defs[];
/* builtin_pool.c: max/avg pooling 1D/2D/3D (41-46) */
extern const struct tmpl_def tmpl_pool_defs[];
/* builtin_scan.c: cumsum/cumprod/reverse/exclusive/masked scans (89-93) */
extern const struct tmpl_def tmpl_scan_defs[];
/* builtin_loss.c: losses (94-96, 98-100) */
extern const struct tmpl_def tmpl_loss_defs[];
/* builtin_attn.c: scaled dot-product attention (97) */
extern const struct tmpl_def tmpl_attention_defs[];
/* builtin_conv.c: forward convolutions: standard, dilated, strided, depthwise, pointwise, 1D/2D/3D */
extern const struct tmpl_def tmpl_conv_defs[];
/* builtin_convt.c: transposed convolutions 1D/2D/3D, grouped, dilated, strided */
extern const struct tmpl_def tmpl_convt_defs[];
/* builtin_mv.c: matrix-vector, split-K, diagonal and tensor-core matmul paths (4, 6, 12, ...) */
extern const struct tmpl_def tmpl_mv_defs[];
/* builtin_mm_tce.c: matmul_tce, the level-1 products through gemm_epi_emit */
extern const struct tmpl_def tmpl_tce_defs[];
extern const struct tmpl_def tmpl_attn_tce_defs[];
/* graph/builtin_graph.c: family graph (level 2): the operator graph, fused or per node */
extern const struct tmpl_def tmpl_graph_defs[];
/* builtin_mv.c's device helpers (wmma/cp.async includes, cp16/cp4,
 * cp_commit, cp_wait, load_tile; needs NT defined): matmul_tc, conv_tc. */
void tmpl_tc_helpers(struct buf *s);
/* builtin_mv.c: the 3xTF32 products of a K tile and their FADD into acc. */
void tmpl_tc_emit_mma(struct buf *s);
/* builtin_convtc.c: conv_tc, in tmpl_conv_defs[] */
int tmpl_convtc_supports(const json_t *spec);
int tmpl_convtc_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);
/* emit/builtin_conv_epi_tmpl.c: conv_tce, forward and transposed convolutions on
 * conv_epi_emit's tensor-core implicit GEMM */
extern const struct tmpl_def tmpl_conv_epi_defs[];

#endif
