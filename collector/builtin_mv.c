/* Templates for matrix-vector, split-K, diagonal and tensor-core matmul
 * paths: "gemv" (4), "matmul_splitk" (6: small M*N, huge K), "diagmm" (12)
 * and "matmul_tc" (3xTF32 tensor-core GEMM, see builtin_mv_tc.inc). */
#include "collector/builtin_tmpl.h"

#include <string.h>

#include "collector/builtin_util.h"

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

	return bt_number(spec) == 4 && a && b && !bt_input(spec, 2) && bt_ndim(a) == 2;
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
	buf_addf(s, "extern \"C\" __global__ void __launch_bounds__(NT)\n"
		    "gemv(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,\n"
		    "     double* __restrict__ part, long long M, long long K)\n{\n"
		    "    __shared__ double red[NT / 32][ROWS];\n"
		    "    const long long r0 = (long long)blockIdx.x * ROWS;\n"
		    "    const float* Ar[ROWS];\n"
		    "#pragma unroll\n"
		    "    for (int j = 0; j < ROWS; j++) Ar[j] = A + min(r0 + j, M - 1) * K; // clamped: duplicate rows are not stored\n"
		    "    // this block's K slice, a multiple of 4 long so float4s stay aligned\n"
		    "    const long long chunk = (K + 4LL * SPLIT - 1) / (4LL * SPLIT) * 4;\n"
		    "    const long long k0 = blockIdx.y * chunk, k1 = min(K, k0 + chunk);\n"
		    "    float acc[ROWS][4];\n"
		    "#pragma unroll\n"
		    "    for (int j = 0; j < ROWS; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;\n"
		    "    double dacc[ROWS];\n"
		    "#pragma unroll\n"
		    "    for (int j = 0; j < ROWS; j++) dacc[j] = 0.0;\n"
		    "    if ((K & 3) == 0) {\n"
		    "        const float4* B4 = reinterpret_cast<const float4*>(B + k0);\n"
		    "        const long long n4 = k0 < k1 ? (k1 - k0) >> 2 : 0;\n"
		    "        // fp32 partials flushed to double every 1024 float4s per thread\n"
		    "        for (long long base = 0; base < n4; base += (long long)NT * 1024) {\n"
		    "            const long long e = min(n4, base + (long long)NT * 1024);\n"
		    "#pragma unroll %d\n"
		    "            for (long long i = base + threadIdx.x; i < e; i += NT) {\n"
		    "                const float4 bv = __ldg(B4 + i);\n"
		    "#pragma unroll\n"
		    "                for (int j = 0; j < ROWS; j++) {\n"
		    "                    const float4 av = reinterpret_cast<const float4*>(Ar[j] + k0)[i];\n"
		    "                    acc[j][0] = fmaf(av.x, bv.x, acc[j][0]);\n"
		    "                    acc[j][1] = fmaf(av.y, bv.y, acc[j][1]);\n"
		    "                    acc[j][2] = fmaf(av.z, bv.z, acc[j][2]);\n"
		    "                    acc[j][3] = fmaf(av.w, bv.w, acc[j][3]);\n"
		    "                }\n"
		    "            }\n"
		    "#pragma unroll\n"
		    "            for (int j = 0; j < ROWS; j++) {\n"
		    "                dacc[j] += ((double)acc[j][0] + (double)acc[j][1]) + ((double)acc[j][2] + (double)acc[j][3]);\n"
		    "                acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;\n"
		    "            }\n"
		    "        }\n"
		    "    } else {\n"
		    "        for (long long k = k0 + threadIdx.x; k < k1; k += NT) {\n"
		    "            const double bv = (double)B[k];\n"
		    "#pragma unroll\n"
		    "            for (int j = 0; j < ROWS; j++) dacc[j] += (double)Ar[j][k] * bv;\n"
		    "        }\n"
		    "    }\n"
		    "    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;\n"
		    "#pragma unroll\n"
		    "    for (int j = 0; j < ROWS; j++) {\n"
		    "        double v = dacc[j];\n"
		    "        for (int o = 16; o; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);\n"
		    "        if (lane == 0) red[w][j] = v;\n"
		    "    }\n"
		    "    __syncthreads();\n"
		    "    if (threadIdx.x < ROWS && r0 + threadIdx.x < M) {\n"
		    "        double v = 0.0;\n"
		    "        for (int i = 0; i < NT / 32; i++) v += red[i][threadIdx.x];\n"
		    "        if (SPLIT == 1) C[r0 + threadIdx.x] = (float)v;\n"
		    "        else part[(r0 + threadIdx.x) * SPLIT + blockIdx.y] = v;\n"
		    "    }\n"
		    "}\n\n", unroll);
	if (split > 1)
		buf_adds(s, "extern \"C\" __global__ void gemv_sum(const double* __restrict__ part,\n"
			    "                                    float* __restrict__ C, long long M)\n{\n"
			    "    const long long m = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
			    "    if (m >= M) return;\n"
			    "    double v = 0.0;\n"
			    "    for (int i = 0; i < SPLIT; i++) v += part[m * SPLIT + i];\n"
			    "    C[m] = (float)v;\n"
			    "}\n\n");
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

	return bt_number(spec) == 12 && a && b && bt_ndim(a) == 1 && bt_ndim(b) == 2;
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
	buf_adds(s, "extern \"C\" __global__ void __launch_bounds__(NT)\n"
		    "diagmm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,\n"
		    "       long long R, long long W)\n{\n"
		    "    for (long long r = blockIdx.y; r < R; r += gridDim.y) {\n"
		    "        const float d = __ldg(A + r);\n"
		    "        const float* br = B + r * W;\n"
		    "        float* cr = C + r * W;\n");
	if (vec == 4)
		buf_adds(s, "        if ((W & 3) == 0) {\n"
			    "            const long long w4 = W >> 2;\n"
			    "            const long long j0 = (long long)blockIdx.x * (NT * ILP) + threadIdx.x;\n"
			    "            float4 v[ILP];\n"
			    "#pragma unroll\n"
			    "            for (int u = 0; u < ILP; u++)\n"
			    "                if (j0 + u * NT < w4) v[u] = __ldg(reinterpret_cast<const float4*>(br) + j0 + u * NT);\n"
			    "#pragma unroll\n"
			    "            for (int u = 0; u < ILP; u++)\n"
			    "                if (j0 + u * NT < w4)\n"
			    "                    __stcs(reinterpret_cast<float4*>(cr) + j0 + u * NT,\n"
			    "                           make_float4(d * v[u].x, d * v[u].y, d * v[u].z, d * v[u].w));\n"
			    "            continue;\n"
			    "        }\n"
			    "        // unaligned rows: the same span of 4 * NT * ILP elements, one at a time\n"
			    "        for (long long j = (long long)blockIdx.x * (4 * NT * ILP) + threadIdx.x;\n"
			    "             j < min(W, (long long)(blockIdx.x + 1) * (4 * NT * ILP)); j += NT)\n"
			    "            cr[j] = d * br[j];\n");
	else
		buf_adds(s, "        const long long j0 = (long long)blockIdx.x * (NT * ILP) + threadIdx.x;\n"
			    "        float v[ILP];\n"
			    "#pragma unroll\n"
			    "        for (int u = 0; u < ILP; u++)\n"
			    "            if (j0 + u * NT < W) v[u] = __ldg(br + j0 + u * NT);\n"
			    "#pragma unroll\n"
			    "        for (int u = 0; u < ILP; u++)\n"
			    "            if (j0 + u * NT < W) __stcs(cr + j0 + u * NT, d * v[u]);\n");
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
	bt_dims_expr(&M, a, 0, 1);
	bt_dims_expr(&K, a, 1, 2);
	bt_dims_expr(&N, b, 1, 2);
	buf_addf(s, "// template matmul_splitk: BM=%d BN=%d BK=%d SPLIT=%d\n"
		    "#define BM %d\n#define BN %d\n#define BK %d\n#define SPLIT %d\n#define NT %d\n",
		 BM, BN, BK, split, BM, BN, BK, split, nt);
	buf_adds(s, "extern \"C\" __global__ void __launch_bounds__(NT)\n"
		    "splitk(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ part,\n"
		    "       long long M, long long N, long long K)\n{\n"
		    "    __align__(16) __shared__ float As[BK][BM + 4];\n"
		    "    __align__(16) __shared__ float Bs[BK][BN + 4];\n"
		    "    const long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;\n"
		    "    const long long chunk = (K + (long long)SPLIT * BK - 1) / ((long long)SPLIT * BK) * BK;\n"
		    "    const long long kbeg = blockIdx.z * chunk, kend = min(K, kbeg + chunk);\n"
		    "    const int tid = threadIdx.x, tr = tid / (BN / 8), tc = tid % (BN / 8);\n"
		    "    float acc[8][8];\n"
		    "#pragma unroll\n"
		    "    for (int i = 0; i < 8; i++)\n"
		    "#pragma unroll\n"
		    "        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;\n"
		    "    for (long long k0 = kbeg; k0 < kend; k0 += BK) {\n"
		    "        for (int i = tid; i < BM * BK; i += NT) {\n"
		    "            const int r = i / BK, kk = i % BK;\n"
		    "            const long long gr = row0 + r, gk = k0 + kk;\n"
		    "            As[kk][r] = (gr < M && gk < kend) ? A[gr * K + gk] : 0.0f;\n"
		    "        }\n"
		    "        for (int i = tid; i < BN * BK; i += NT) {\n"
		    "            const int cc = i % BN, kk = i / BN;\n"
		    "            const long long gc = col0 + cc, gk = k0 + kk;\n"
		    "            Bs[kk][cc] = (gc < N && gk < kend) ? B[gk * N + gc] : 0.0f;\n"
		    "        }\n"
		    "        __syncthreads();\n"
		    "#pragma unroll\n"
		    "        for (int kk = 0; kk < BK; kk++) {\n"
		    "            // rows tr*4.. and BM/2+tr*4.., columns tc*4.. and BN/2+tc*4..\n"
		    "            const float4 a0 = *reinterpret_cast<const float4*>(&As[kk][tr * 4]);\n"
		    "            const float4 a1 = *reinterpret_cast<const float4*>(&As[kk][BM / 2 + tr * 4]);\n"
		    "            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[kk][tc * 4]);\n"
		    "            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[kk][BN / 2 + tc * 4]);\n"
		    "            const float av[8] = { a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w };\n"
		    "            const float bv[8] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };\n"
		    "#pragma unroll\n"
		    "            for (int i = 0; i < 8; i++)\n"
		    "#pragma unroll\n"
		    "                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);\n"
		    "        }\n"
		    "        __syncthreads();\n"
		    "    }\n"
		    "    float* P = part + blockIdx.z * M * N;\n"
		    "#pragma unroll\n"
		    "    for (int i = 0; i < 8; i++) {\n"
		    "        const long long r = row0 + (i < 4 ? tr * 4 + i : BM / 2 + tr * 4 + i - 4);\n"
		    "        if (r >= M) continue;\n"
		    "#pragma unroll\n"
		    "        for (int j = 0; j < 8; j++) {\n"
		    "            const long long cc = col0 + (j < 4 ? tc * 4 + j : BN / 2 + tc * 4 + j - 4);\n"
		    "            if (cc < N) P[r * N + cc] = acc[i][j];\n"
		    "        }\n"
		    "    }\n"
		    "}\n\n"
		    "extern \"C\" __global__ void splitk_sum(const float* __restrict__ part, float* __restrict__ C,\n"
		    "                                      long long MN)\n{\n"
		    "    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
		    "    if (i >= MN) return;\n"
		    "    double v = 0.0;\n"
		    "#pragma unroll 8\n"
		    "    for (int z = 0; z < SPLIT; z++) v += (double)part[z * MN + i];\n"
		    "    C[i] = (float)v;\n"
		    "}\n\n");
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

const struct tmpl_def tmpl_mv_defs[] = {
	{ "gemv", gemv_supports, gemv_render,
	  "{\"NT\": 256, \"ROWS\": 1, \"SPLIT\": 1, \"UNROLL\": 4}" },
	{ "diagmm", diagmm_supports, diagmm_render, "{\"NT\": 256, \"VEC\": 4, \"ILP\": 2}" },
	{ "matmul_splitk", splitk_supports, splitk_render,
	  "{\"BM\": 128, \"BN\": 128, \"BK\": 8, \"SPLIT\": 32}" },
	{ NULL, NULL, NULL, NULL },
};
