/* gemm_epi_emit's wgmma core (sm_90a): tools/gemm/wgmma_{tf32bf16,3xtf32}_128x128_ilv
 * generalised to any M, N, K (zero-filled edges), both layouts of A and B,
 * batches and K slices. The product runs transposed, C^T = B^T A^T: the A
 * tile (K-contiguous rows, 128-byte swizzle) is the shared-memory operand
 * and a 64-column slice of B per warpgroup the register operand, split in
 * registers. A stored [K][M], and rows that are not 16-byte multiples,
 * are copied 4 bytes at a time into the same layouts; B stored [N][K] with
 * K % 4 == 0 keeps its tile K-contiguous (16-byte copies). */
#include "kernels/emit/builtin_gemm_epi_int.h"

/* D[64 x 128] (+)= A (4 registers) * B (descriptor): tf32 k8 or bf16 k16. */
static void emit_wgmma_fn(struct buf *s, const char *fn, const char *shape, const char *bf_tail)
{
	buf_addf(s, "__device__ __forceinline__ void %s(float (&d)[64], const unsigned (&a)[4],\n"
		    "        unsigned long long desc, int scale_d)\n{\n"
		    "    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%69, 0;\\n\"\n"
		    "                 \"wgmma.mma_async.sync.aligned.%s {", fn, shape);
	for (int i = 0; i < 64; i++)
		buf_addf(s, "%%%d%s", i, i < 63 ? ", " : "");
	buf_addf(s, "}, {%%64, %%65, %%66, %%67}, %%68, p, 1, 1%s;\\n}\\n\"\n                 : ", bf_tail);
	for (int i = 0; i < 64; i++)
		buf_addf(s, "\"+f\"(d[%d])%s", i, i < 63 ? ", " : "");
	buf_adds(s, "\n                 : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(desc), \"r\"(scale_d));\n}\n");
}

/* A warpgroup's B fragment loads (ld.shared). */
static void emit_load_b(struct buf *s)
{
	buf_adds(s, "// A warpgroup's B fragment of a tile: operand rows 16ww+g, 16ww+g+8 are C\n"
		    "// columns 2g, 2g+1 of the warp's 16; nb[kk][0] holds k = 8kk + t, nb[kk][1]\n"
		    "// k = 8kk + t + 4. Tile [k][BSTR] (sb at the thread's column) or [n][BKS]\n"
		    "// (sb at the thread's row).\n"
		    "template <int BSTR> __device__ __forceinline__ void kfg_load_b_kn(float2 (&nb)[4][2], unsigned sb, int t)\n"
		    "{\n"
		    "#pragma unroll\n"
		    "    for (int kk = 0; kk < 4; kk++)\n"
		    "#pragma unroll\n"
		    "        for (int hh = 0; hh < 2; hh++) {\n"
		    "            const unsigned a = sb + (8 * kk + t + 4 * hh) * BSTR * 4;\n"
		    "            asm volatile(\"ld.shared.v2.f32 {%0, %1}, [%2];\\n\" : \"=f\"(nb[kk][hh].x), \"=f\"(nb[kk][hh].y) : \"r\"(a));\n"
		    "        }\n"
		    "}\n"
		    "template <int BKS> __device__ __forceinline__ void kfg_load_b_nk(float2 (&nb)[4][2], unsigned sb, int t)\n"
		    "{\n"
		    "#pragma unroll\n"
		    "    for (int kk = 0; kk < 4; kk++)\n"
		    "#pragma unroll\n"
		    "        for (int hh = 0; hh < 2; hh++) {\n"
		    "            const unsigned a = sb + (8 * kk + t + 4 * hh) * 4;\n"
		    "            asm volatile(\"ld.shared.f32 %0, [%1];\\n\" : \"=f\"(nb[kk][hh].x) : \"r\"(a));\n"
		    "            asm volatile(\"ld.shared.f32 %0, [%1];\\n\" : \"=f\"(nb[kk][hh].y) : \"r\"(a + BKS * 4));\n"
		    "        }\n"
		    "}\n");
}

void gemm_emit_wg_helpers(struct buf *s)
{
	buf_adds(s, "#ifndef KF_GEMM_EPI_WG\n#define KF_GEMM_EPI_WG\n"
		    "#ifdef __CUDACC__ // (on the host: tests/tools/emulate_shim_tc.h)\n"
		    "__device__ __forceinline__ void kfg_fence_async() { asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\"); }\n"
		    "__device__ __forceinline__ void kfg_wg_fence() { asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\"); }\n"
		    "__device__ __forceinline__ void kfg_wg_commit() { asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\"); }\n"
		    "template <int N> __device__ __forceinline__ void kfg_wg_wait() { asm volatile(\"wgmma.wait_group.sync.aligned %0;\\n\" :: \"n\"(N) : \"memory\"); }\n"
		    "__device__ __forceinline__ void kfg_keep(float& x) { asm volatile(\"\" : \"+f\"(x) :: \"memory\"); }\n");
	emit_wgmma_fn(s, "kfg_wgmma_tf32", "m64n128k8.f32.tf32.tf32", "");
	emit_wgmma_fn(s, "kfg_wgmma_bf16", "m64n128k16.f32.bf16.bf16", ", 0");
	emit_load_b(s);
	buf_adds(s, "#endif\n"
		    "// K-major operand, 128-byte swizzle: LBO 1 (unused), SBO 1024 bytes (8 rows of 128 B)\n"
		    "__device__ __forceinline__ unsigned long long kfg_desc(unsigned addr)\n"
		    "{ return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62); }\n");
	buf_adds(s, "// The split of an A tile (sa) into ss, same swizzled layout. BF 1: unit u = one\n"
		    "// row's 8-wide k step, 16 bf16 slots: 0-7 small(x), 8-15 x, in k order\n"
		    "// 0,4,1,5,2,6,3,7 (the register fragment's k = t, t + 4). BF 0: one 16-byte\n"
		    "// chunk, small = x - trunc(x) in fp32. The tile keeps x: wgmma truncates a tf32\n"
		    "// operand read from shared memory.\n"
		    "template <int BF> __device__ __forceinline__ void kfg_split_unit(unsigned sa, unsigned ss, int u)\n"
		    "{\n"
		    "    if (BF) {\n"
		    "        const int r = u >> 2, kk = u & 3;\n"
		    "        const unsigned o0 = r * 128 + (((2 * kk) ^ (r & 7)) << 4), o1 = r * 128 + (((2 * kk + 1) ^ (r & 7)) << 4);\n"
		    "        const float4 v0 = kfg_lds128(sa + o0), v1 = kfg_lds128(sa + o1);\n"
		    "        const float4 h0 = make_float4(kfg_trunc(v0.x), kfg_trunc(v0.y), kfg_trunc(v0.z), kfg_trunc(v0.w));\n"
		    "        const float4 h1 = make_float4(kfg_trunc(v1.x), kfg_trunc(v1.y), kfg_trunc(v1.z), kfg_trunc(v1.w));\n"
		    "        kfg_sts128(ss + o0, kfg_bf2(v0.x - h0.x, v1.x - h1.x), kfg_bf2(v0.y - h0.y, v1.y - h1.y),\n"
		    "                   kfg_bf2(v0.z - h0.z, v1.z - h1.z), kfg_bf2(v0.w - h0.w, v1.w - h1.w));\n"
		    "        kfg_sts128(ss + o1, kfg_bf2(v0.x, v1.x), kfg_bf2(v0.y, v1.y), kfg_bf2(v0.z, v1.z), kfg_bf2(v0.w, v1.w));\n"
		    "    } else {\n"
		    "        const unsigned off = u * 16;\n"
		    "        const float4 v = kfg_lds128(sa + off);\n"
		    "        const float4 h = make_float4(kfg_trunc(v.x), kfg_trunc(v.y), kfg_trunc(v.z), kfg_trunc(v.w));\n"
		    "        kfg_sts128(ss + off, __float_as_uint(v.x - h.x), __float_as_uint(v.y - h.y), __float_as_uint(v.z - h.z),\n"
		    "                   __float_as_uint(v.w - h.w));\n"
		    "    }\n"
		    "}\n"
		    "template <int BF, int LO, int HI, int NTH> __device__ __forceinline__ void kfg_split_tile(unsigned sa, unsigned ss, int tid)\n"
		    "{\n"
		    "#pragma unroll\n"
		    "    for (int e = 0; e < (HI - LO) / NTH; e++) kfg_split_unit<BF>(sa, ss, LO + tid + e * NTH);\n"
		    "}\n"
		    "// Register fragments: bh = trunc(x) (a register operand must hold tf32 bits);\n"
		    "// bl: BF 0 small(x) in tf32; BF 1 bf16 k16 pairs, slots 2t, 2t+1 = k t, t+4 of x,\n"
		    "// slots 2t+8, 2t+9 those of small(x).\n"
		    "template <int BF> __device__ __forceinline__ void kfg_frags(const float2 (&nb)[4][2], unsigned (&bh)[4][4], unsigned (&bl)[4][4])\n"
		    "{\n"
		    "#pragma unroll\n"
		    "    for (int kk = 0; kk < 4; kk++) {\n"
		    "        const float x[4] = { nb[kk][0].x, nb[kk][0].y, nb[kk][1].x, nb[kk][1].y };\n"
		    "        float s[4];\n"
		    "#pragma unroll\n"
		    "        for (int e = 0; e < 4; e++) {\n"
		    "            const float h = kfg_trunc(x[e]);\n"
		    "            s[e] = x[e] - h;\n"
		    "            bh[kk][e] = __float_as_uint(h);\n"
		    "        }\n"
		    "        if (BF) {\n"
		    "            bl[kk][0] = kfg_bf2(x[0], x[2]);\n"
		    "            bl[kk][1] = kfg_bf2(x[1], x[3]);\n"
		    "            bl[kk][2] = kfg_bf2(s[0], s[2]);\n"
		    "            bl[kk][3] = kfg_bf2(s[1], s[3]);\n"
		    "        } else {\n"
		    "#pragma unroll\n"
		    "            for (int e = 0; e < 4; e++) bl[kk][e] = __float_as_uint(s[e]);\n"
		    "        }\n"
		    "    }\n"
		    "}\n"
		    "// One 8-wide k step into d, small products first.\n"
		    "template <int BF> __device__ __forceinline__ void kfg_mma_step(float (&d)[64], const unsigned (&bh)[4][4],\n"
		    "        const unsigned (&bl)[4][4], int kk, unsigned long long d_raw, unsigned long long d_split, int scale_first)\n"
		    "{\n"
		    "    if (BF) {\n"
		    "        kfg_wgmma_bf16(d, bl[kk], d_split + 2 * kk, scale_first);\n"
		    "    } else {\n"
		    "        kfg_wgmma_tf32(d, bl[kk], d_raw + 2 * kk, scale_first);\n"
		    "        kfg_wgmma_tf32(d, bh[kk], d_split + 2 * kk, 1);\n"
		    "    }\n"
		    "    kfg_wgmma_tf32(d, bh[kk], d_raw + 2 * kk, 1);\n"
		    "}\n"
		    "#endif\n");
}

/* The copy of tile kt into its stage: A (128 x 32 at (m0, k0)) swizzled K-major,
 * B (32 x 128 at (k0, n0)) as [k][136] or, bt_k, [n][36]; zeros outside. */
static void emit_loader(struct buf *s, const struct gemm_cfg *c)
{
	const struct gemm_shape *sh = c->sh;

	buf_adds(s, "    auto load_tile = [&](int kt) {\n"
		    "        const unsigned sa = stage_a(kt), sb = sa + SA_BYTES;\n"
		    "        const long long k0 = kbeg + (long long)kt * 32;\n");
	if (c->vec_a)
		buf_adds(s, "#pragma unroll\n"
			    "        for (int e = 0; e < 4; e++) {\n"
			    "            const int id = tid + e * 256, r = id >> 3, q = id & 7;\n"
			    "            const long long gr = m0 + r, gk = k0 + q * 4;\n"
			    "            const bool in = gr < M && gk < kend;\n"
			    "            kfg_cp16(sa + r * 128 + ((q ^ (r & 7)) << 4), in ? A + gr * K + gk : A, in);\n"
			    "        }\n");
	else
		buf_addf(s, "#pragma unroll\n"
			    "        for (int e = 0; e < 16; e++) {\n"
			    "            const int id = tid + e * 256, r = %s, kk = %s;\n"
			    "            const long long gr = m0 + r, gk = k0 + kk;\n"
			    "            const bool in = gr < M && gk < kend;\n"
			    "            kfg_cp4(sa + r * 128 + (((kk >> 2) ^ (r & 7)) << 4) + (kk & 3) * 4, in ? A + %s : A, in);\n"
			    "        }\n",
			 sh->a_km ? "id & 127" : "id >> 5", sh->a_km ? "id >> 7" : "id & 31",
			 sh->a_km ? "gk * M + gr" : "gr * K + gk");
	if (c->bt_k)
		buf_adds(s, "#pragma unroll\n"
			    "        for (int e = 0; e < 4; e++) {\n"
			    "            const int id = tid + e * 256, r = id >> 3, q = id & 7;\n"
			    "            const long long gc = n0 + r, gk = k0 + q * 4;\n"
			    "            const bool in = gc < N && gk < kend;\n"
			    "            kfg_cp16(sb + (r * BKS + q * 4) * 4, in ? B + gc * K + gk : B, in);\n"
			    "        }\n");
	else if (c->vec_b)
		buf_adds(s, "#pragma unroll\n"
			    "        for (int e = 0; e < 4; e++) {\n"
			    "            const int id = tid + e * 256, r = id >> 5, q = id & 31;\n"
			    "            const long long gk = k0 + r, gc = n0 + q * 4;\n"
			    "            const bool in = gk < kend && gc < N;\n"
			    "            kfg_cp16(sb + (r * BSTR + q * 4) * 4, in ? B + gk * N + gc : B, in);\n"
			    "        }\n");
	else
		buf_addf(s, "#pragma unroll\n"
			    "        for (int e = 0; e < 16; e++) {\n"
			    "            const int id = tid + e * 256, r = %s, cc = %s;\n"
			    "            const long long gk = k0 + r, gc = n0 + cc;\n"
			    "            const bool in = gk < kend && gc < N;\n"
			    "            kfg_cp4(sb + (r * BSTR + cc) * 4, in ? B + %s : B, in);\n"
			    "        }\n",
			 sh->b_nk ? "id & 31" : "id >> 7", sh->b_nk ? "id >> 5" : "id & 127",
			 sh->b_nk ? "gc * K + gk" : "gk * N + gc");
	buf_adds(s, "    };\n");
}

static void emit_store(struct buf *s, const struct gemm_cfg *c)
{
	buf_adds(s, "    kfg_wait<0>();\n"
		    "    // acc[4j + h] is C (m0 + 2t + 8j + h, n), acc[4j + 2 + h] its column n + 1\n"
		    "    const long long n = n0 + 64 * wg + 16 * ww + 2 * g;\n"
		    "    if (n >= N) return;\n"
		    "#pragma unroll\n"
		    "    for (int j = 0; j < 16; j++)\n"
		    "#pragma unroll\n"
		    "        for (int h = 0; h < 2; h++) {\n"
		    "            const long long m = m0 + 2 * t + 8 * j + h;\n"
		    "            if (m >= M) continue;\n"
		    "            float* p = Cout + m * N + n;\n"
		    "            const float v0 = epi(acc[4 * j + h], m, n);\n"
		    "            if (n + 1 < N) {\n"
		    "                const float v1 = epi(acc[4 * j + 2 + h], m, n + 1);\n");
	if (c->sh->N % 2 == 0)
		buf_adds(s, "                *(float2*)p = make_float2(v0, v1);\n");
	else
		buf_adds(s, "                p[0] = v0;\n                p[1] = v1;\n");
	buf_adds(s, "            } else {\n"
		    "                p[0] = v0;\n"
		    "            }\n"
		    "        }\n");
}

/* The K loop into acc[64] (needs STAGES, BF, NT, SA_BYTES, tid, t, ktiles,
 * stage_a, load_tile(kt) and load_b(nb, kt); NUNITS and ssplit unless
 * presplit); a_wo: "" or " + OFFSET", this warpgroup's A rows in a tile;
 * late: the next tile's copies issued after the first k step (tensor cores
 * busy meanwhile), for a costly load (the conv's gather); presplit: each
 * stage holds the A tile's small part right after it (SA_BYTES on), copied
 * in from global memory with the tile, so that no thread splits A in the
 * loop (the conv core, whose channels-last copy of x is split once).
 * Shared with the conv core. */
void gemm_emit_wg_loop(struct buf *s, const char *a_wo, int late, int presplit)
{
	const char *load = "        if (kt + STAGES - 1 < ktiles) load_tile(kt + STAGES - 1);\n"
			   "        kfg_commit();\n";

	buf_addf(s, "    float acc[64], part[64];\n"
		    "#pragma unroll\n"
		    "    for (int i = 0; i < 64; i++) acc[i] = part[i] = 0.0f;\n"
		    "    float2 nb[4][2];\n"
		    "#pragma unroll\n"
		    "    for (int st = 0; st < STAGES - 1; st++) {\n"
		    "        if (st < ktiles) load_tile(st);\n"
		    "        kfg_commit();\n"
		    "    }\n"
		    "    kfg_wait<STAGES - 2>();\n");
	if (presplit) {
		/* cp.async writes through the generic proxy; wgmma reads
		 * through the async one */
		buf_addf(s, "    kfg_fence_async();\n"
			    "    __syncthreads();\n"
			    "    if (ktiles > 0) load_b(nb, 0);\n"
			    "    for (int kt = 0; kt < ktiles; kt++) {\n"
			    "        const bool more = kt + 1 < ktiles;\n"
			    "%s"
			    "        unsigned bh[4][4], bl[4][4];\n"
			    "        kfg_frags<BF>(nb, bh, bl);\n"
			    "        const unsigned long long d_raw = kfg_desc(stage_a(kt)%s), d_split = kfg_desc(stage_a(kt) + SA_BYTES%s);\n"
			    "        kfg_wg_fence();\n"
			    "        kfg_mma_step<BF>(part, bh, bl, 0, d_raw, d_split, 0);\n"
			    "%s"
			    "        kfg_mma_step<BF>(part, bh, bl, 1, d_raw, d_split, 1);\n"
			    "        kfg_mma_step<BF>(part, bh, bl, 2, d_raw, d_split, 1);\n"
			    "        kfg_mma_step<BF>(part, bh, bl, 3, d_raw, d_split, 1);\n"
			    "        kfg_wg_commit();\n"
			    "        if (more) {\n"
			    "            kfg_wait<STAGES - 2>();\n"
			    "            kfg_fence_async();\n"
			    "            __syncthreads();\n"
			    "            load_b(nb, kt + 1);\n"
			    "        }\n",
			 late ? "" : load, a_wo, a_wo, late ? load : "");
	} else {
		buf_addf(s, "    __syncthreads();\n"
			    "    if (ktiles > 0) {\n"
			    "        kfg_split_tile<BF, 0, NUNITS, NT>(stage_a(0), ssplit, tid);\n"
			    "        load_b(nb, 0);\n"
			    "    }\n"
			    "    kfg_fence_async();\n"
			    "    __syncthreads();\n"
			    "    for (int kt = 0; kt < ktiles; kt++) {\n"
			    "        const bool more = kt + 1 < ktiles;\n"
			    "%s"
			    "        unsigned bh[4][4], bl[4][4];\n"
			    "        kfg_frags<BF>(nb, bh, bl);\n"
			    "        const unsigned long long d_raw = kfg_desc(stage_a(kt)%s), d_split = kfg_desc(ssplit + (kt & 1) * SA_BYTES%s);\n"
			    "        const unsigned snext = ssplit + ((kt + 1) & 1) * SA_BYTES;\n"
			    "        kfg_wg_fence();\n"
			    "        // the split of tile kt+1 between this tile's k steps (tensor cores busy meanwhile)\n"
			    "        kfg_mma_step<BF>(part, bh, bl, 0, d_raw, d_split, 0);\n"
			    "%s"
			    "        if (more) {\n"
			    "            kfg_wait<STAGES - 2>();\n"
			    "            __syncthreads();\n"
			    "        }\n"
			    "        kfg_mma_step<BF>(part, bh, bl, 1, d_raw, d_split, 1);\n"
			    "        if (more) kfg_split_tile<BF, 0, NUNITS / 2, NT>(stage_a(kt + 1), snext, tid);\n"
			    "        kfg_mma_step<BF>(part, bh, bl, 2, d_raw, d_split, 1);\n"
			    "        if (more) {\n"
			    "            kfg_split_tile<BF, NUNITS / 2, NUNITS, NT>(stage_a(kt + 1), snext, tid);\n"
			    "            kfg_fence_async();\n"
			    "        }\n"
			    "        kfg_mma_step<BF>(part, bh, bl, 3, d_raw, d_split, 1);\n"
			    "        kfg_wg_commit();\n"
			    "        if (more) load_b(nb, kt + 1);\n",
			 late ? "" : load, a_wo, a_wo, late ? load : "");
	}
	buf_adds(s, "        kfg_wg_wait<0>();\n"
		    "        // the tile's sum added with FADD: tensor-core accumulation truncates\n"
		    "#pragma unroll\n"
		    "        for (int i = 0; i < 64; i++) {\n"
		    "            kfg_keep(part[i]);\n"
		    "            acc[i] += part[i];\n"
		    "        }\n"
		    "        __syncthreads();\n"
		    "    }\n");
}

void gemm_emit_wgmma(struct buf *s, const struct gemm_cfg *c)
{
	gemm_emit_wg_helpers(s);
	buf_addf(s, "extern \"C\" __global__ void __launch_bounds__(256, 1)\n"
		    "%s(const float* __restrict__ kf_a, const float* __restrict__ kf_b, float* __restrict__ kf_c%s,\n"
		    "   long long kf_M, long long kf_N, long long kf_K)\n{\n"
		    "    extern __shared__ __align__(1024) float kf_smem[];\n",
		 c->name, c->params);
	gemm_emit_prologue(s, c);
	buf_addf(s, "    constexpr int STAGES = %d, BF = %d, NT = 256, %s;\n"
		    "    constexpr unsigned SA_BYTES = 16384, STAGE_BYTES = %d;   // multiples of 1024\n"
		    "    constexpr int NUNITS = BF ? 512 : 1024;   // split units of a tile\n"
		    "    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;\n"
		    "    const int wg = warp >> 2, ww = warp & 3, g = lane >> 2, t = lane & 3;\n"
		    "    const long long m0 = (long long)blockIdx.y * 128, n0 = (long long)blockIdx.x * 128;\n"
		    "    const unsigned sbase = (kfg_smem(kf_smem) + 1023u) & ~1023u;\n"
		    "    const unsigned ssplit = sbase + STAGES * STAGE_BYTES;   // two split buffers\n"
		    "    const unsigned b_off = %s;\n"
		    "    auto stage_a = [&](int kt) { return sbase + (kt %% STAGES) * STAGE_BYTES; };\n",
		 c->stages, c->bf, c->bt_k ? "BKS = 36" : "BSTR = 136", c->bt_k ? 16384 + 18432 : 16384 + 17408,
		 c->bt_k ? "(64 * wg + 16 * ww + 2 * g) * BKS * 4" : "(64 * wg + 16 * ww + 2 * g) * 4");
	emit_loader(s, c);
	buf_addf(s, "    auto load_b = [&](float2 (&nb)[4][2], int kt) { kfg_load_b_%s<%s>(nb, stage_a(kt) + SA_BYTES + b_off, t); };\n",
		 c->bt_k ? "nk" : "kn", c->bt_k ? "BKS" : "BSTR");
	gemm_emit_wg_loop(s, "", 0, 0);
	emit_store(s, c);
	buf_adds(s, "}\n");
}
