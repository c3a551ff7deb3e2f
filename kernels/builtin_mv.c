/* Templates for matrix-vector, split-K, diagonal and tensor-core matmul
 * paths: "gemv" (4), "matmul_splitk" (6: small M*N, huge K), "diagmm" (12)
 * and "matmul_tc" (3xTF32 tensor-core GEMM, see builtin_mv_tc.inc). */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/diagmm_cuh.h"
#include "gen/gemv_cuh.h"
#include "gen/matmul_splitk_cuh.h"
#include "gen/matmul_tc_cuh.h"
#include "gen/tc_cp_async_cuh.h"
#include "gen/tf32x3_cuh.h"

static int pow2_in(int v, int lo, int hi)
{
	return v >= lo && v <= hi && !(v & (v - 1));
}

/* ---- gemv: C[m] = sum_k A[m][k] * B[k] ----
 * One block owns ROWS rows and one of SPLIT slices of K; each thread streams
 * float4s of A (B loaded once per ROWS rows), keeps four fp32 partials per
 * row (each short) and the block combines them in double. With SPLIT > 1 a
 * second kernel adds the per-slice double partials. */
static int gemv_supports(const json_t *spec)
{
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1);

	return bt_mm_vec(spec) && a && b && !bt_input(spec, 2) && bt_ndim(a) == 2;
}

static int gemv_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int nt = bt_param(p, "NT", 256), rows = bt_param(p, "ROWS", 1);
	int split = bt_param(p, "SPLIT", 1), unroll = bt_param(p, "UNROLL", 4);
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1), *c = bt_output(spec, 0);
	struct buf M = BUF_INIT, K = BUF_INIT;

	if (!pow2_in(nt, 64, 1024) || !pow2_in(rows, 1, 8) || !pow2_in(split, 1, 64) ||
	    !pow2_in(unroll, 1, 8))
		return kf_err(err, "gemv: bad parameters");
	bt_dims_expr(&M, a, 0, 1);
	bt_dims_expr(&K, a, 1, 2);
	buf_addf(s, "// template gemv: NT=%d ROWS=%d SPLIT=%d UNROLL=%d\n"
		    "#define NT %d\n#define ROWS %d\n#define SPLIT %d\n#define UNROLL %d\n",
		 nt, rows, split, unroll, nt, rows, split, unroll);
	bt_cuh_fill(s, gemv_cuh, "gemv", "UNROLL", BT_INT(unroll), NULL);
	if (split > 1)
		bt_cuh_section(s, gemv_cuh, "gemv_sum");
	buf_addf(s, "/*@launch\nscratch double part[%s * %d];\n"
		    "gemv<<<dim3(ceil_div(%s, %d), %d), %d>>>(%s, %s, %s, part, %s, %s);\n",
		 M.s, split, M.s, rows, split, nt, bt_name(a), bt_name(b), bt_name(c), M.s, K.s);
	if (split > 1)
		buf_addf(s, "gemv_sum<<<ceil_div(%s, 256), 256>>>(part, %s, %s);\n", M.s, bt_name(c), M.s);
	buf_adds(s, "@*/\n");
	buf_release(&M);
	buf_release(&K);
	return 0;
}

/* ---- diagmm: C[i][j] = A[i] * B[i][j] (diag(A) @ B) ----
 * Memory-bound: blocks walk rows (grid-stride in y), each thread moves ILP
 * float4s (or floats when a row is not 16-byte aligned) of a row. */
static int diagmm_supports(const json_t *spec)
{
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1);

	return json_is_true(json_object_get(bt_attrs(spec, "matmul"), "diag")) && a && b && bt_ndim(a) == 1 && bt_ndim(b) == 2;
}

static int diagmm_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int nt = bt_param(p, "NT", 256), vec = bt_param(p, "VEC", 4), ilp = bt_param(p, "ILP", 2);
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1), *c = bt_output(spec, 0);
	struct buf R = BUF_INIT, W = BUF_INIT;
	int per = nt * vec * ilp;

	if (!pow2_in(nt, 32, 1024) || (vec != 1 && vec != 4) || !pow2_in(ilp, 1, 8))
		return kf_err(err, "diagmm: bad parameters");
	bt_dims_expr(&R, b, 0, 1);
	bt_dims_expr(&W, b, 1, 2);
	buf_addf(s, "// template diagmm: NT=%d VEC=%d ILP=%d\n"
		    "#define NT %d\n#define ILP %d\n", nt, vec, ilp, nt, ilp);
	bt_cuh_section(s, diagmm_cuh, "head");
	if (vec == 4)
		bt_cuh_section(s, diagmm_cuh, "vec4");
	else
		bt_cuh_section(s, diagmm_cuh, "scalar");
	buf_addf(s, "    }\n}\n\n/*@launch\n"
		    "diagmm<<<dim3(ceil_div(%s, %d), min(%s, 65535)), %d>>>(%s, %s, %s, %s, %s);\n@*/\n",
		 W.s, per, R.s, nt, bt_name(a), bt_name(b), bt_name(c), R.s, W.s);
	buf_release(&R);
	buf_release(&W);
	return 0;
}

/* ---- matmul_splitk: C = A @ B with K cut into SPLIT slices ----
 * For small M*N and a long K (6) one tile grid cannot fill 132 SMs: each
 * block computes a BMxBN fp32 partial over its K slice (an 8x8 register
 * tile per thread, split in two 4-wide halves so float4 shared-memory reads
 * are conflict-free), stores it to scratch, and a second kernel adds the
 * SPLIT partials per element in double. */
static int splitk_supports(const json_t *spec)
{
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1), *c = bt_output(spec, 0);
	const json_t *at = json_object_get(spec, "attrs");
	long long m, n, k;

	if (!a || !b || !c || bt_input(spec, 2) || bt_ndim(a) != 2 || bt_ndim(b) != 2 || !at)
		return 0;
	if (json_is_true(json_object_get(at, "batched")) || json_is_true(json_object_get(at, "trans_a")) ||
	    json_is_true(json_object_get(at, "trans_b")) || json_is_true(json_object_get(at, "diag")))
		return 0;
	if (json_is_string(json_object_get(at, "mask")) &&
	    strcmp(json_string_value(json_object_get(at, "mask")), "none"))
		return 0;
	m = bt_dims_value(spec, a, 0, 1);
	k = bt_dims_value(spec, a, 1, 2);
	n = bt_dims_value(spec, b, 1, 2);
	/* Worth it when the output tiles alone leave SMs idle and K is long. */
	return m > 0 && n >= 16 && k >= 16384 && m * n <= (1LL << 20);
}

static int splitk_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int BM = bt_param(p, "BM", 128), BN = bt_param(p, "BN", 128), BK = bt_param(p, "BK", 8);
	int split = bt_param(p, "SPLIT", 32), nt;
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1), *c = bt_output(spec, 0);
	struct buf M = BUF_INIT, N = BUF_INIT, K = BUF_INIT;

	if ((BM != 64 && BM != 128) || (BN != 64 && BN != 128) || (BK != 8 && BK != 16) ||
	    !pow2_in(split, 1, 1024))
		return kf_err(err, "matmul_splitk: bad parameters");
	nt = (BM / 8) * (BN / 8);
	/* fp32 partials over at most 2^15 terms, at most 1 GiB of them */
	while (split < 1024 && bt_dims_value(spec, a, 1, 2) > 32768LL * split)
		split <<= 1;
	/* and enough blocks for two per SM while slices stay >= 16 tiles deep */
	while (split < 1024 && bt_dims_value(spec, a, 1, 2) >= 16LL * BK * split &&
	       ((bt_dims_value(spec, a, 0, 1) + BM - 1) / BM) *
	       ((bt_dims_value(spec, b, 1, 2) + BN - 1) / BN) * split < 256)
		split <<= 1;
	while (split > 1 && split * bt_dims_value(spec, a, 0, 1) * bt_dims_value(spec, b, 1, 2) > (1LL << 28))
		split >>= 1;
	bt_dims_expr(&M, a, 0, 1);
	bt_dims_expr(&K, a, 1, 2);
	bt_dims_expr(&N, b, 1, 2);
	buf_addf(s, "// template matmul_splitk: BM=%d BN=%d BK=%d SPLIT=%d\n"
		    "#define BM %d\n#define BN %d\n#define BK %d\n#define SPLIT %d\n#define NT %d\n",
		 BM, BN, BK, split, BM, BN, BK, split, nt);
	bt_cuh_section(s, matmul_splitk_cuh, "kernels");
	buf_addf(s, "/*@launch\nscratch float part[%d * %s * %s];\n"
		    "splitk<<<dim3(ceil_div(%s, %d), ceil_div(%s, %d), %d), %d>>>(%s, %s, part, %s, %s, %s);\n"
		    "splitk_sum<<<ceil_div(%s * %s, 256), 256>>>(part, %s, %s * %s);\n@*/\n",
		 split, M.s, N.s, N.s, BN, M.s, BM, split, nt, bt_name(a), bt_name(b), M.s, N.s, K.s,
		 M.s, N.s, bt_name(c), M.s, N.s);
	buf_release(&M);
	buf_release(&N);
	buf_release(&K);
	return 0;
}

/* ---- matmul_tc: 3xTF32 tensor-core GEMM ----
 * Same problems as "matmul" except the matrix-vector product (4) and the
 * diagonal one (12); triangular masks (14, 15) are applied on output (the K
 * loop is full). Each operand element x is split as hi = tf32(x), lo =
 * tf32(x - hi) (x - hi is exact in fp32) and C += a_hi*b_hi + a_hi*b_lo +
 * a_lo*b_hi: only a_lo*b_lo (~2^-22 relative) is dropped, so the result
 * stays within fp32 tolerance, plain TF32 (2^-11) would not.
 * The MMA is wmma m16n16k8 with precision::tf32 from <mma.h>: the hi/lo
 * split is applied element by element to loaded fragments, so it does not
 * depend on the (opaque) fragment layout. Tiles stream global -> shared with
 * cp.async (16-byte .cg copies with a src-size for the ragged edge when the
 * leading dimension is a multiple of 4, 4-byte .ca copies otherwise) in a
 * STAGES-deep ring. Rows of k-contiguous tiles are padded by 4 floats, of
 * m/n-contiguous ones by 8, so that the m16n8k8 operand reads (lane = 4g+t
 * reads row g column t, or row t column g) hit 32 distinct banks. SPLIT > 1 cuts K into slices whose fp32 partials a
 * second kernel adds in double; render raises SPLIT so that no slice sums
 * more than 2^15 products in fp32 (6: K = 2^19) and lowers it to keep the
 * partials within 1 GiB. */
/* The products of the "matmul" template but matrix-vector ("gemv"). */
static const struct bt_mm_kind *tc_kind_of(const json_t *spec)
{
	const struct bt_mm_kind *k = bt_mm_kind_of(spec);

	return k && !bt_mm_vec(spec) ? k : NULL;
}

static int tc_supports(const json_t *spec)
{
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1);

	return tc_kind_of(spec) && a && b && !bt_input(spec, 2) && bt_ndim(a) >= 2 && bt_ndim(b) >= 2;
}

/* Raises SPLIT for long sums and for grids too small for 132 SMs, then
 * keeps the fp32 partials within 1 GiB of scratch and batch * SPLIT within
 * grid.z (any SPLIT gives the same result up to rounding). */
static int tc_cap_split(const json_t *spec, const struct bt_mm_kind *k, int split, int BM, int BN,
			int BK)
{
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1);
	int na = bt_ndim(a), nb = bt_ndim(b), off = k->batched ? 1 : 0;
	long long bv = k->batched ? bt_dims_value(spec, a, 0, 1) : 1;
	long long mv = k->trans_a ? bt_dims_value(spec, a, off + 1, off + 2)
				  : bt_dims_value(spec, a, off, na - 1);
	long long nv = k->trans_b ? bt_dims_value(spec, b, off, off + 1)
				  : bt_dims_value(spec, b, nb - 1, nb);

	long long kv = k->trans_a ? bt_dims_value(spec, a, off, off + 1)
				  : bt_dims_value(spec, a, na - 1, na);

	if (bv <= 0 || mv <= 0 || nv <= 0 || kv <= 0)
		return 1;
	/* fp32 accumulators over K > 2^15 terms near the 1e-4 tolerance: slice K */
	while (split < 256 && kv > 32768LL * split)
		split <<= 1;
	/* too few output tiles for 132 SMs: slice K while slices stay >= 8 tiles deep */
	while (split < 256 && bv * ((mv + BM - 1) / BM) * ((nv + BN - 1) / BN) * split < 256 &&
	       kv >= 16LL * BK * split)
		split <<= 1;
	while (split > 1 && (split * bv * mv * nv > (1LL << 28) || split * bv > 65535))
		split >>= 1;
	return split;
}

/* The 3xTF32 products of one BK tile (fragments ah/al[FM], bh/bl[FN]) into
 * part, closing the kk loop, then part FADDed into acc: tensor-core
 * accumulation truncates, so long sums drift past 1e-4. matmul_tc, conv_tc. */
void tmpl_tc_emit_mma(struct buf *s)
{
	bt_cuh_section(s, tf32x3_cuh, "products");
	bt_cuh_section(s, tf32x3_cuh, "fadd");
}

/* The device helpers: cp.async wrappers and the tile loader (also conv_tc's). */
void tmpl_tc_helpers(struct buf *s)
{
	/* Without __CUDACC__ (the host emulator of tests/tools) the wmma and
	 * cp.async pieces come from tests/tools/emulate_shim_mv.h. */
	bt_cuh_fill(s, tc_cp_async_cuh, "cp_async", "P", "", "CP_COMMIT", "cp_commit", NULL);
	bt_cuh_section(s, tc_cp_async_cuh, "helpers");
}

static int tc_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	const struct bt_mm_kind *k = tc_kind_of(spec);
	int BM = bt_param(p, "BM", 128), BN = bt_param(p, "BN", 128), BK = bt_param(p, "BK", 32);
	int WM = bt_param(p, "WM", 2), WN = bt_param(p, "WN", 4), ST = bt_param(p, "STAGES", 2);
	int split = bt_param(p, "SPLIT", 1);
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1), *c = bt_output(spec, 0);
	int nt, sa, sb, smem;
	struct buf M = BUF_INIT, N = BUF_INIT, K = BUF_INIT, batch = BUF_INIT;

	if (!k)
		return kf_err(err, "matmul_tc: %s is not a supported product", bt_id(spec));
	if ((BM != 64 && BM != 128 && BM != 256) || (BN != 64 && BN != 128 && BN != 256) ||
	    (BK != 16 && BK != 32) || !pow2_in(WM, 1, 8) || !pow2_in(WN, 1, 8) ||
	    BM % (16 * WM) || BN % (16 * WN) || ST < 2 || ST > 4 || !pow2_in(split, 1, 256))
		return kf_err(err, "matmul_tc: bad parameters");
	nt = 32 * WM * WN;
	if (nt > 512 || (BM / WM / 16) * (BN / WN / 16) > 16)
		return kf_err(err, "matmul_tc: %d threads, warp tile too large", nt);
	sa = k->trans_a ? BK * (BM + 8) : BM * (BK + 4);
	sb = k->trans_b ? BN * (BK + 4) : BK * (BN + 8);
	smem = ST * (sa + sb);
	if (smem < BM * (BN + 4))
		smem = BM * (BN + 4);
	smem *= 4;
	if (smem > 227 * 1024)
		return kf_err(err, "matmul_tc: %d bytes of shared memory", smem);
	split = tc_cap_split(spec, k, split, BM, BN, BK);
	bt_mm_dims(spec, k, &batch, &M, &N, &K);
	buf_addf(s, "// template matmul_tc (3xTF32 wmma, cp.async): BM=%d BN=%d BK=%d WM=%d WN=%d "
		    "STAGES=%d SPLIT=%d\n"
		    "#define BM %d\n#define BN %d\n#define BK %d\n#define WM %d\n#define WN %d\n"
		    "#define STAGES %d\n#define SPLIT %d\n#define NT %d\n"
		    "#define FM (BM / WM / 16)\n#define FN (BN / WN / 16)\n"
		    "#define SA %d\n#define SB %d\n",
		 BM, BN, BK, WM, WN, ST, split, BM, BN, BK, WM, WN, ST, split, nt, sa, sb);
	tmpl_tc_helpers(s);
	bt_cuh_section(s, matmul_tc_cuh, "head");
	/* Stored layouts: A (M,K) or, transposed, (K,M); B (K,N) or (N,K). */
	buf_addf(s, "    const bool va = (%s & 3) == 0, vb = (%s & 3) == 0;\n",
		 k->trans_a ? "M" : "K", k->trans_b ? "K" : "N");
	bt_cuh_section(s, matmul_tc_cuh, "load_head");
	buf_adds(s, k->trans_a ? "        load_tile<BK, BM, 8>(As, A, M, kend, M, k0, row0, va);\n"
			       : "        load_tile<BM, BK, 4>(As, A, K, M, kend, row0, k0, va);\n");
	buf_adds(s, k->trans_b ? "        load_tile<BN, BK, 4>(Bs, B, K, N, kend, col0, k0, vb);\n"
			       : "        load_tile<BK, BN, 8>(Bs, B, N, kend, N, k0, col0, vb);\n");
	bt_cuh_section(s, matmul_tc_cuh, "ring");
	buf_addf(s, "            wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::%s> ah[FM], al[FM];\n"
		    "            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::%s> bh[FN], bl[FN];\n",
		 k->trans_a ? "col_major" : "row_major", k->trans_b ? "col_major" : "row_major");
	/* Fragment pointers (32-byte aligned: row offsets are multiples of 8
	 * rows of a stride that is a multiple of 4 floats, columns of 8). */
	bt_cuh_fill(s, matmul_tc_cuh, "frags",
		    "A_PTR", k->trans_a ? "As + kk * (BM + 8) + r" : "As + r * (BK + 4) + kk",
		    "A_LD", k->trans_a ? "BM + 8" : "BK + 4",
		    "B_PTR", k->trans_b ? "Bs + cc * (BK + 4) + kk" : "Bs + kk * (BN + 8) + cc",
		    "B_LD", k->trans_b ? "BK + 4" : "BN + 8", NULL);
	tmpl_tc_emit_mma(s);
	bt_cuh_section(s, matmul_tc_cuh, "store");
	if (k->tri == 1)
		buf_adds(s, "        out[gr * N + gc] = gr <= gc ? Cs[r * (BN + 4) + cc] : 0.0f;\n");
	else if (k->tri == 2)
		buf_adds(s, "        out[gr * N + gc] = gr >= gc ? Cs[r * (BN + 4) + cc] : 0.0f;\n");
	else
		buf_adds(s, "        out[gr * N + gc] = Cs[r * (BN + 4) + cc];\n");
	bt_cuh_section(s, matmul_tc_cuh, "kernel_end");
	if (split > 1)
		bt_cuh_section(s, matmul_tc_cuh, "tc_sum");
	/* With SPLIT == 1 the scratch is one element and unused. */
	if (split > 1)
		buf_addf(s, "/*@launch\nscratch float part[%d * %s * %s * %s];\n", split, batch.s, M.s, N.s);
	else
		buf_adds(s, "/*@launch\nscratch float part[1];\n");
	buf_addf(s, "mm_tc<<<dim3(ceil_div(%s, %d), ceil_div(%s, %d), %s * %d), %d, %d>>>"
		    "(%s, %s, %s, part, %s, %s, %s, %s);\n",
		 N.s, BN, M.s, BM, batch.s, split, nt, smem, bt_name(a), bt_name(b), bt_name(c),
		 M.s, N.s, K.s, batch.s);
	if (split > 1)
		buf_addf(s, "tc_sum<<<ceil_div(%s * %s * %s, 256), 256>>>(part, %s, %s * %s * %s);\n",
			 batch.s, M.s, N.s, bt_name(c), batch.s, M.s, N.s);
	buf_adds(s, "@*/\n");
	buf_release(&M);
	buf_release(&N);
	buf_release(&K);
	buf_release(&batch);
	return 0;
}

const struct tmpl_def tmpl_mv_defs[] = {
	{ "gemv", gemv_supports, gemv_render,
	  "{\"NT\": 256, \"ROWS\": 1, \"SPLIT\": 1, \"UNROLL\": 4}" },
	{ "diagmm", diagmm_supports, diagmm_render, "{\"NT\": 256, \"VEC\": 4, \"ILP\": 2}" },
	{ "matmul_splitk", splitk_supports, splitk_render,
	  "{\"BM\": 128, \"BN\": 128, \"BK\": 8, \"SPLIT\": 32}" },
	{ "matmul_tc", tc_supports, tc_render,
	  "{\"BM\": 128, \"BN\": 128, \"BK\": 32, \"WM\": 2, \"WN\": 4, \"STAGES\": 2, \"SPLIT\": 1}" },
	{ NULL, NULL, NULL, NULL },
};
