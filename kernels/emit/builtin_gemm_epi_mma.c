/* gemm_epi_emit's mma.sync core (sm_80+): tools/gemm/mma_{tf32bf16,3xtf32}_128x128_part
 * generalised to any M, N, K (zero-filled edges), both layouts of A and B,
 * batches, K slices and tiles BM x BN on WM x WN warps. Fragments come
 * from shared memory with 16-byte loads (thread t of a quad takes k =
 * 4t..4t+3 and feeds two MMAs; the n index is permuted so that a float4 of
 * a B row holds the thread's column of 4 n-tiles); XOR swizzles keep both
 * loads conflict-free: A chunk c of row r at c ^ 4(r & 1), B chunk c of
 * row r at c ^ 2((r >> 2) & 3). Each 32-wide K tile's products go to a
 * fresh partial accumulator added to the sum with FADD. */
#include "kernels/emit/builtin_gemm_epi_int.h"

void gemm_emit_mma_helpers(struct buf *s)
{
	buf_adds(s, "#ifndef KF_GEMM_EPI_MMA\n#define KF_GEMM_EPI_MMA\n"
		    "// big = tf32(x) (rounded), small = x - big (exact)\n"
		    "__device__ __forceinline__ void kfg_split(float x, unsigned& big, unsigned& small)\n"
		    "{\n"
		    "    const unsigned h = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;\n"
		    "    big = h;\n"
		    "    small = __float_as_uint(x - __uint_as_float(h));\n"
		    "}\n"
		    "#ifdef __CUDACC__ // (on the host: tests/tools/emulate_shim_mma.h)\n"
		    "__device__ __forceinline__ void kfg_mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)\n"
		    "{\n"
		    "    asm(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\\n\"\n"
		    "        : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
		    "        : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b0), \"r\"(b1));\n"
		    "}\n"
		    "__device__ __forceinline__ void kfg_mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)\n"
		    "{\n"
		    "    asm(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\\n\"\n"
		    "        : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
		    "        : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b0), \"r\"(b1));\n"
		    "}\n"
		    "#endif\n"
		    "#endif\n");
}

static void emit_loader(struct buf *s, const struct gemm_cfg *c)
{
	const struct gemm_shape *sh = c->sh;

	buf_adds(s, "    auto load = [&](int stage, int kt) {\n"
		    "        const long long k0 = kbeg + (long long)kt * BK;\n"
		    "        const unsigned sa = sbase + stage * (SA + SB) * 4, sb = sa + SA * 4;\n");
	if (c->vec_a)
		buf_adds(s, "#pragma unroll\n"
			    "        for (int e = 0; e < BM * 8 / NTHR; e++) {\n"
			    "            const int id = tid + e * NTHR, r = id >> 3, q = id & 7;\n"
			    "            const long long gr = m0 + r, gk = k0 + q * 4;\n"
			    "            const bool in = gr < M && gk < kend;\n"
			    "            kfg_cp16(sa + (r * BK + ((q ^ ((r & 1) << 2)) << 2)) * 4, in ? A + gr * K + gk : A, in);\n"
			    "        }\n");
	else
		buf_addf(s, "#pragma unroll 2\n"   /* fully unrolled, the kernel spills */
			    "        for (int e = 0; e < BM * BK / NTHR; e++) {\n"
			    "            const int id = tid + e * NTHR, r = %s, kk = %s;\n"
			    "            const long long gr = m0 + r, gk = k0 + kk;\n"
			    "            const bool in = gr < M && gk < kend;\n"
			    "            kfg_cp4(sa + (r * BK + (((kk >> 2) ^ ((r & 1) << 2)) << 2) + (kk & 3)) * 4, in ? A + %s : A, in);\n"
			    "        }\n",
			 sh->a_km ? "id % BM" : "id >> 5", sh->a_km ? "id / BM" : "id & 31",
			 sh->a_km ? "gk * M + gr" : "gr * K + gk");
	if (c->vec_b)
		buf_adds(s, "#pragma unroll\n"
			    "        for (int e = 0; e < BK * (BN / 4) / NTHR; e++) {\n"
			    "            const int id = tid + e * NTHR, r = id / (BN / 4), q = id % (BN / 4);\n"
			    "            const long long gk = k0 + r, gc = n0 + q * 4;\n"
			    "            const bool in = gk < kend && gc < N;\n"
			    "            kfg_cp16(sb + (r * BN + ((q ^ (((r >> 2) & 3) << 1)) << 2)) * 4, in ? B + gk * N + gc : B, in);\n"
			    "        }\n");
	else
		buf_addf(s, "#pragma unroll 2\n"
			    "        for (int e = 0; e < BK * BN / NTHR; e++) {\n"
			    "            const int id = tid + e * NTHR, r = %s, cc = %s;\n"
			    "            const long long gk = k0 + r, gc = n0 + cc;\n"
			    "            const bool in = gk < kend && gc < N;\n"
			    "            kfg_cp4(sb + (r * BN + (((cc >> 2) ^ (((r >> 2) & 3) << 1)) << 2) + (cc & 3)) * 4, in ? B + %s : B, in);\n"
			    "        }\n",
			 sh->b_nk ? "id & 31" : "id / BN", sh->b_nk ? "id >> 5" : "id % BN",
			 sh->b_nk ? "gc * K + gk" : "gk * N + gc");
	buf_adds(s, "    };\n");
}

/* One 16-wide k half h of the tile: fragments split and multiplied into part. */
static void emit_products(struct buf *s, int bf)
{
	if (bf)
		buf_adds(s, "                // tf32 big*big; both small products as one bf16 m16n8k16: slots 2t, 2t+1\n"
			    "                // are k = 4t+2s, 4t+2s+1 of small(a)*b, slots 2t+8, 2t+9 of a*small(b)\n"
			    "                unsigned ab[MT][4], ap[MT][4], bb[NQ * 4][2], bp[NQ * 4][2];\n"
			    "#pragma unroll\n"
			    "                for (int i = 0; i < MT; i++) {\n"
			    "                    const float x00 = s ? ra[i][0].z : ra[i][0].x, x01 = s ? ra[i][0].w : ra[i][0].y;\n"
			    "                    const float x10 = s ? ra[i][1].z : ra[i][1].x, x11 = s ? ra[i][1].w : ra[i][1].y;\n"
			    "                    unsigned s00, s01, s10, s11;\n"
			    "                    kfg_split(x00, ab[i][0], s00);\n"
			    "                    kfg_split(x10, ab[i][1], s10);\n"
			    "                    kfg_split(x01, ab[i][2], s01);\n"
			    "                    kfg_split(x11, ab[i][3], s11);\n"
			    "                    ap[i][0] = kfg_bf2(__uint_as_float(s00), __uint_as_float(s01));\n"
			    "                    ap[i][1] = kfg_bf2(__uint_as_float(s10), __uint_as_float(s11));\n"
			    "                    ap[i][2] = kfg_bf2(x00, x01);\n"
			    "                    ap[i][3] = kfg_bf2(x10, x11);\n"
			    "                }\n"
			    "#pragma unroll\n"
			    "                for (int qq = 0; qq < NQ; qq++) {\n"
			    "                    const float4 y0 = rb[2 * s][qq], y1 = rb[2 * s + 1][qq];\n"
			    "                    const float v0[4] = { y0.x, y0.y, y0.z, y0.w }, v1[4] = { y1.x, y1.y, y1.z, y1.w };\n"
			    "#pragma unroll\n"
			    "                    for (int jj = 0; jj < 4; jj++) {\n"
			    "                        unsigned s0, s1;\n"
			    "                        kfg_split(v0[jj], bb[4 * qq + jj][0], s0);\n"
			    "                        kfg_split(v1[jj], bb[4 * qq + jj][1], s1);\n"
			    "                        bp[4 * qq + jj][0] = kfg_bf2(v0[jj], v1[jj]);\n"
			    "                        bp[4 * qq + jj][1] = kfg_bf2(__uint_as_float(s0), __uint_as_float(s1));\n"
			    "                    }\n"
			    "                }\n"
			    "#pragma unroll\n"
			    "                for (int i = 0; i < MT; i++)\n"
			    "#pragma unroll\n"
			    "                    for (int j = 0; j < NQ * 4; j++) {\n"
			    "                        kfg_mma_bf16(part[i][j], ap[i], bp[j][0], bp[j][1]);\n"
			    "                        kfg_mma_tf32(part[i][j], ab[i], bb[j][0], bb[j][1]);\n"
			    "                    }\n");
	else
		buf_adds(s, "                unsigned ab[MT][4], as[MT][4], bb[NQ * 4][2], bs[NQ * 4][2];\n"
			    "#pragma unroll\n"
			    "                for (int i = 0; i < MT; i++) {\n"
			    "                    kfg_split(s ? ra[i][0].z : ra[i][0].x, ab[i][0], as[i][0]);\n"
			    "                    kfg_split(s ? ra[i][1].z : ra[i][1].x, ab[i][1], as[i][1]);\n"
			    "                    kfg_split(s ? ra[i][0].w : ra[i][0].y, ab[i][2], as[i][2]);\n"
			    "                    kfg_split(s ? ra[i][1].w : ra[i][1].y, ab[i][3], as[i][3]);\n"
			    "                }\n"
			    "#pragma unroll\n"
			    "                for (int qq = 0; qq < NQ; qq++) {\n"
			    "                    const float4 x0 = rb[2 * s][qq], x1 = rb[2 * s + 1][qq];\n"
			    "                    const float v0[4] = { x0.x, x0.y, x0.z, x0.w }, v1[4] = { x1.x, x1.y, x1.z, x1.w };\n"
			    "#pragma unroll\n"
			    "                    for (int jj = 0; jj < 4; jj++) {\n"
			    "                        kfg_split(v0[jj], bb[4 * qq + jj][0], bs[4 * qq + jj][0]);\n"
			    "                        kfg_split(v1[jj], bb[4 * qq + jj][1], bs[4 * qq + jj][1]);\n"
			    "                    }\n"
			    "                }\n"
			    "                // small products first\n"
			    "#pragma unroll\n"
			    "                for (int i = 0; i < MT; i++)\n"
			    "#pragma unroll\n"
			    "                    for (int j = 0; j < NQ * 4; j++) {\n"
			    "                        kfg_mma_tf32(part[i][j], as[i], bb[j][0], bb[j][1]);\n"
			    "                        kfg_mma_tf32(part[i][j], ab[i], bs[j][0], bs[j][1]);\n"
			    "                        kfg_mma_tf32(part[i][j], ab[i], bb[j][0], bb[j][1]);\n"
			    "                    }\n");
}

static void emit_store(struct buf *s, const struct gemm_cfg *c)
{
	buf_adds(s, "    kfg_wait<0>();\n"
		    "    // thread (g, t): rows g, g + 8 of each m16 tile; per group of 4 n-tiles\n"
		    "    // the 8 contiguous columns 8t..8t+7 (acc[i][4qq + jj][2rr] column jj,\n"
		    "    // acc[i][4qq + jj][2rr + 1] column 4 + jj)\n"
		    "#pragma unroll\n"
		    "    for (int i = 0; i < MT; i++)\n"
		    "#pragma unroll\n"
		    "        for (int rr = 0; rr < 2; rr++) {\n"
		    "            const long long m = m0 + wm0 + 16 * i + g + 8 * rr;\n"
		    "            if (m >= M) continue;\n"
		    "#pragma unroll\n"
		    "            for (int qq = 0; qq < NQ; qq++) {\n"
		    "                const long long n = n0 + wn0 + 32 * qq + 8 * t;\n"
		    "                if (n >= N) continue;\n"
		    "                float o[8];\n"
		    "#pragma unroll\n"
		    "                for (int jj = 0; jj < 4; jj++) {\n"
		    "                    o[jj] = epi(acc[i][4 * qq + jj][2 * rr], m, n + jj);\n"
		    "                    o[4 + jj] = epi(acc[i][4 * qq + jj][2 * rr + 1], m, n + 4 + jj);\n"
		    "                }\n"
		    "                float* p = Cout + m * N + n;\n");
	if (c->sh->N % 4 == 0)
		buf_adds(s, "                if (n + 8 <= N) {\n"
			    "                    *(float4*)p = make_float4(o[0], o[1], o[2], o[3]);\n"
			    "                    *(float4*)(p + 4) = make_float4(o[4], o[5], o[6], o[7]);\n"
			    "                    continue;\n"
			    "                }\n");
	buf_adds(s, "#pragma unroll\n"
		    "                for (int jj = 0; jj < 8; jj++)\n"
		    "                    if (n + jj < N) p[jj] = o[jj];\n"
		    "            }\n"
		    "        }\n");
}

/* One K tile's MMAs into a fresh partial sum, FADDed into acc[MT][NQ * 4][4].
 * Expects BK = 32, MT, NQ, BN, g, t, sa, sb (the stage's shared byte
 * addresses), a_off[MT] (row wm0 + 16i + g), b_off[NQ]; a_swz: the XOR of
 * the A rows' 16-byte chunks for row g (rows wm0 + 16i + g + 8 alike).
 * Shared with the conv core (builtin_conv_epi_mma.c). */
void gemm_emit_mma_ktile(struct buf *s, int bf, const char *a_swz)
{
	buf_addf(s, "        float part[MT][NQ * 4][4];\n"
		    "#pragma unroll\n"
		    "        for (int i = 0; i < MT; i++)\n"
		    "#pragma unroll\n"
		    "            for (int j = 0; j < NQ * 4; j++)\n"
		    "#pragma unroll\n"
		    "                for (int e = 0; e < 4; e++) part[i][j][e] = 0.0f;\n"
		    "#pragma unroll\n"
		    "        for (int h = 0; h < BK / 16; h++) {\n"
		    "            float4 ra[MT][2], rb[4][NQ];\n"
		    "#pragma unroll\n"
		    "            for (int i = 0; i < MT; i++) {\n"
		    "                const unsigned col = ((4 * h + t) ^ (%s)) << 4;\n"
		    "                ra[i][0] = kfg_lds128(sa + a_off[i] + col);\n"
		    "                ra[i][1] = kfg_lds128(sa + a_off[i] + 8 * BK * 4 + col);\n"
		    "            }\n"
		    "#pragma unroll\n"
		    "            for (int q = 0; q < 4; q++)\n"
		    "#pragma unroll\n"
		    "                for (int qq = 0; qq < NQ; qq++) rb[q][qq] = kfg_lds128(sb + b_off[qq] + (16 * h + q) * BN * 4);\n"
		    "#pragma unroll\n"
		    "            for (int s = 0; s < 2; s++) {\n",
		 a_swz);
	emit_products(s, bf);
	buf_adds(s, "            }\n"
		    "        }\n"
		    "        // the tile's sum added with FADD: tensor-core accumulation truncates\n"
		    "#pragma unroll\n"
		    "        for (int i = 0; i < MT; i++)\n"
		    "#pragma unroll\n"
		    "            for (int j = 0; j < NQ * 4; j++)\n"
		    "#pragma unroll\n"
		    "                for (int e = 0; e < 4; e++) acc[i][j][e] += part[i][j][e];\n");
}

void gemm_emit_mma(struct buf *s, const struct gemm_cfg *c)
{
	gemm_emit_mma_helpers(s);
	buf_addf(s, "extern \"C\" __global__ void __launch_bounds__(%d, 1)\n"
		    "%s(const float* __restrict__ kf_a, const float* __restrict__ kf_b, float* __restrict__ kf_c%s,\n"
		    "   long long kf_M, long long kf_N, long long kf_K)\n{\n"
		    "    extern __shared__ __align__(128) float kf_smem[];\n",
		 c->nthr, c->name, c->params);
	gemm_emit_prologue(s, c);
	buf_addf(s, "    constexpr int BM = %d, BN = %d, BK = 32, WM = %d, WN = %d, STAGES = %d, NTHR = %d;\n"
		    "    constexpr int MT = BM / WM / 16, NQ = BN / WN / 32, SA = BM * BK, SB = BK * BN;\n"
		    "    (void)WM;\n"
		    "    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;\n"
		    "    const int g = lane >> 2, t = lane & 3;\n"
		    "    const int wm0 = (warp / WN) * (BM / WM), wn0 = (warp %% WN) * (BN / WN);\n"
		    "    const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;\n"
		    "    const unsigned sbase = kfg_smem(kf_smem);\n",
		 c->BM, c->BN, c->WM, c->WN, c->stages, c->nthr);
	emit_loader(s, c);
	buf_addf(s, "    float acc[MT][NQ * 4][4];\n"
		    "#pragma unroll\n"
		    "    for (int i = 0; i < MT; i++)\n"
		    "#pragma unroll\n"
		    "        for (int j = 0; j < NQ * 4; j++)\n"
		    "#pragma unroll\n"
		    "            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;\n"
		    "#pragma unroll\n"
		    "    for (int st = 0; st < STAGES - 1; st++) {\n"
		    "        if (st < ktiles) load(st, st);\n"
		    "        kfg_commit();\n"
		    "    }\n"
		    "    unsigned a_off[MT], b_off[NQ];   // fragment addresses (bytes, within a stage)\n"
		    "#pragma unroll\n"
		    "    for (int i = 0; i < MT; i++) a_off[i] = (wm0 + 16 * i + g) * BK * 4;\n"
		    "#pragma unroll\n"
		    "    for (int q = 0; q < NQ; q++) b_off[q] = (4 * t * BN + ((((wn0 >> 2) + 8 * q + g) ^ (t << 1)) << 2)) * 4;\n"
		    "    for (int kt = 0; kt < ktiles; kt++) {\n"
		    "        kfg_wait<STAGES - 2>();\n"
		    "        __syncthreads();\n"
		    "        if (kt + STAGES - 1 < ktiles) load((kt + STAGES - 1) %% STAGES, kt + STAGES - 1);\n"
		    "        kfg_commit();\n"
		    "        const unsigned sa = sbase + (kt %% STAGES) * (SA + SB) * 4, sb = sa + SA * 4;\n");
	gemm_emit_mma_ktile(s, c->bf, "(g & 1) << 2");
	buf_adds(s, "    }\n");
	emit_store(s, c);
	buf_adds(s, "}\n");
}
