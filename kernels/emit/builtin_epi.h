/* Tensor-core GEMM and convolution emitters with a fused elementwise
 * epilogue, for the graph template (kernels/graph/builtin_graph*.c) and any
 * other template. Each appends device code to src and the launch line(s)
 * to launch (no "/" "*@launch" markers; the caller writes the block).
 *
 * Return: 0 emitted; 1 the shape or parameters are not supported (nothing
 * appended, the caller falls back to its own kernel); negative on error
 * with err filled. */
#ifndef KF_BUILTIN_EPI_H
#define KF_BUILTIN_EPI_H

#include <jansson.h>
#include "core/buf.h"

/* Applied to every output element before the store. The emitted kernel
 * declares `float v` (the fp32-accurate accumulator, no bias added) and the
 * index variables named below, runs `code` (statements that may read them
 * and the extra parameters and must leave the result in v), then stores v.
 * params: extra kernel parameters, each with a leading comma
 * (", const float* __restrict__ e0, const float* __restrict__ e1");
 * args: the launch-block names passed for them, same order (", gemm_bias, scale").
 * All three may be NULL or "" (plain product). */
struct epi {
	const char *params;
	const char *args;
	const char *code;
};

/* C[b][m][n] = epi(sum_k A[b][m][k] * B[b][k][n]), fp32 inputs and output,
 * products fp32-accurate (3xTF32 or TF32+BF16 split, never plain TF32).
 * Layouts: A row-major [M][K] (a_km: stored [K][M]); B row-major [K][N]
 * (b_nk: stored [N][K], as nn.Linear's weight). batch >= 1; batch strides
 * are M*K, K*N, M*N (0 for A or B when a_bcast / b_bcast: shared by every
 * batch). Epilogue indices: long long b, m, n. */
struct gemm_shape {
	long long batch, M, N, K;
	int a_km, b_nk, a_bcast, b_bcast;
	/* launch-block expressions for batch, M, N, K (NULL: the values): the
	 * launch then names the sizes, so a harness that changes them runs
	 * the same kernel; it takes one K slice (1, not supported, else) */
	const char *expr[4];
};
/* name: the kernel's name (unique in the candidate); a, b, c: launch-block
 * names of the operands (tensors or scratch, or `NAME + OFFSET`, an element
 * offset into one: written only as launch arguments); tparams: template parameters
 * (JSON object, may be NULL: defaults). */
int gemm_epi_emit(struct buf *src, struct buf *launch, const char *name,
		  const struct gemm_shape *sh, const char *a, const char *b, const char *c,
		  const struct epi *e, const json_t *tparams, struct buf *err);

/* Forward or transposed convolution, NC(D)HW fp32, as a graph "conv" node
 * (docs/graph-ir.md): weight [C_out][C_in/groups][k...] forward,
 * [C_in][C_out/groups][k...] transposed. Output y[n][co][o...] =
 * epi(sum ...), no bias added (the epilogue adds it where the node has
 * one). Epilogue indices: long long n, c (output channel), s (flat spatial
 * index of the output position, 0 .. prod(out_sp)-1). tparams: "core"
 * "mma" (default; "wgmma", "auto" alike) or "wmma", tiles (docs/search.md). */
struct conv_shape {
	int dims;			/* 1, 2 or 3 */
	int transposed, groups;
	long long N, C_in, C_out;
	long long in_sp[3], out_sp[3];
	int kernel[3], stride[3], padding[3], dilation[3], output_padding[3];
};
int conv_epi_emit(struct buf *src, struct buf *launch, const char *name,
		  const struct conv_shape *sh, const char *x, const char *w, const char *y,
		  const struct epi *e, const json_t *tparams, struct buf *err);

#endif
