// The GEMM epilogue kernels on wgmma (kernels/emit/builtin_gemm_epi_wg.c):
// helpers, loaders, the k loop (split or presplit A) and stores.
//@ wgmma_fn_tail

                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(scale_d));
}
//@ load_b
// A warpgroup's B fragment of a tile: operand rows 16ww+g, 16ww+g+8 are C
// columns 2g, 2g+1 of the warp's 16; nb[kk][0] holds k = 8kk + t, nb[kk][1]
// k = 8kk + t + 4. Tile [k][BSTR] (sb at the thread's column) or [n][BKS]
// (sb at the thread's row).
template <int BSTR> __device__ __forceinline__ void kfg_load_b_kn(float2 (&nb)[4][2], unsigned sb, int t)
{
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            const unsigned a = sb + (8 * kk + t + 4 * hh) * BSTR * 4;
            asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(nb[kk][hh].x), "=f"(nb[kk][hh].y) : "r"(a));
        }
}
template <int BKS> __device__ __forceinline__ void kfg_load_b_nk(float2 (&nb)[4][2], unsigned sb, int t)
{
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
#pragma unroll
        for (int hh = 0; hh < 2; hh++) {
            const unsigned a = sb + (8 * kk + t + 4 * hh) * 4;
            asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(nb[kk][hh].x) : "r"(a));
            asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(nb[kk][hh].y) : "r"(a + BKS * 4));
        }
}
//@ helpers_head
#ifndef KF_GEMM_EPI_WG
#define KF_GEMM_EPI_WG
#ifdef __CUDACC__ // (on the host: tests/tools/emulate_shim_tc.h)
__device__ __forceinline__ void kfg_fence_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void kfg_wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void kfg_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void kfg_wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory"); }
__device__ __forceinline__ void kfg_keep(float& x) { asm volatile("" : "+f"(x) :: "memory"); }
//@ desc_split
#endif
// K-major operand, 128-byte swizzle: LBO 1 (unused), SBO 1024 bytes (8 rows of 128 B)
__device__ __forceinline__ unsigned long long kfg_desc(unsigned addr)
{ return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62); }
// The split of an A tile (sa) into ss, same swizzled layout. BF 1: unit u = one
// row's 8-wide k step, 16 bf16 slots: 0-7 small(x), 8-15 x, in k order
// 0,4,1,5,2,6,3,7 (the register fragment's k = t, t + 4). BF 0: one 16-byte
// chunk, small = x - trunc(x) in fp32. The tile keeps x: wgmma truncates a tf32
// operand read from shared memory.
template <int BF> __device__ __forceinline__ void kfg_split_unit(unsigned sa, unsigned ss, int u)
{
    if (BF) {
        const int r = u >> 2, kk = u & 3;
        const unsigned o0 = r * 128 + (((2 * kk) ^ (r & 7)) << 4), o1 = r * 128 + (((2 * kk + 1) ^ (r & 7)) << 4);
        const float4 v0 = kfg_lds128(sa + o0), v1 = kfg_lds128(sa + o1);
        const float4 h0 = make_float4(kfg_trunc(v0.x), kfg_trunc(v0.y), kfg_trunc(v0.z), kfg_trunc(v0.w));
        const float4 h1 = make_float4(kfg_trunc(v1.x), kfg_trunc(v1.y), kfg_trunc(v1.z), kfg_trunc(v1.w));
        kfg_sts128(ss + o0, kfg_bf2(v0.x - h0.x, v1.x - h1.x), kfg_bf2(v0.y - h0.y, v1.y - h1.y),
                   kfg_bf2(v0.z - h0.z, v1.z - h1.z), kfg_bf2(v0.w - h0.w, v1.w - h1.w));
        kfg_sts128(ss + o1, kfg_bf2(v0.x, v1.x), kfg_bf2(v0.y, v1.y), kfg_bf2(v0.z, v1.z), kfg_bf2(v0.w, v1.w));
    } else {
        const unsigned off = u * 16;
        const float4 v = kfg_lds128(sa + off);
        const float4 h = make_float4(kfg_trunc(v.x), kfg_trunc(v.y), kfg_trunc(v.z), kfg_trunc(v.w));
        kfg_sts128(ss + off, __float_as_uint(v.x - h.x), __float_as_uint(v.y - h.y), __float_as_uint(v.z - h.z),
                   __float_as_uint(v.w - h.w));
    }
}
template <int BF, int LO, int HI, int NTH> __device__ __forceinline__ void kfg_split_tile(unsigned sa, unsigned ss, int tid)
{
#pragma unroll
    for (int e = 0; e < (HI - LO) / NTH; e++) kfg_split_unit<BF>(sa, ss, LO + tid + e * NTH);
}
// Register fragments: bh = trunc(x) (a register operand must hold tf32 bits);
// bl: BF 0 small(x) in tf32; BF 1 bf16 k16 pairs, slots 2t, 2t+1 = k t, t+4 of x,
// slots 2t+8, 2t+9 those of small(x).
template <int BF> __device__ __forceinline__ void kfg_frags(const float2 (&nb)[4][2], unsigned (&bh)[4][4], unsigned (&bl)[4][4])
{
#pragma unroll
    for (int kk = 0; kk < 4; kk++) {
        const float x[4] = { nb[kk][0].x, nb[kk][0].y, nb[kk][1].x, nb[kk][1].y };
        float s[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const float h = kfg_trunc(x[e]);
            s[e] = x[e] - h;
            bh[kk][e] = __float_as_uint(h);
        }
        if (BF) {
            bl[kk][0] = kfg_bf2(x[0], x[2]);
            bl[kk][1] = kfg_bf2(x[1], x[3]);
            bl[kk][2] = kfg_bf2(s[0], s[2]);
            bl[kk][3] = kfg_bf2(s[1], s[3]);
        } else {
#pragma unroll
            for (int e = 0; e < 4; e++) bl[kk][e] = __float_as_uint(s[e]);
        }
    }
}
// One 8-wide k step into d, small products first.
template <int BF> __device__ __forceinline__ void kfg_mma_step(float (&d)[64], const unsigned (&bh)[4][4],
        const unsigned (&bl)[4][4], int kk, unsigned long long d_raw, unsigned long long d_split, int scale_first)
{
    if (BF) {
        kfg_wgmma_bf16(d, bl[kk], d_split + 2 * kk, scale_first);
    } else {
        kfg_wgmma_tf32(d, bl[kk], d_raw + 2 * kk, scale_first);
        kfg_wgmma_tf32(d, bh[kk], d_split + 2 * kk, 1);
    }
    kfg_wgmma_tf32(d, bh[kk], d_raw + 2 * kk, 1);
}
#endif
//@ loader_head
    auto load_tile = [&](int kt) {
        const unsigned sa = stage_a(kt), sb = sa + SA_BYTES;
        const long long k0 = kbeg + (long long)kt * 32;
//@ loader_a
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int id = tid + e * 256, r = id >> 3, q = id & 7;
            const long long gr = m0 + r, gk = k0 + q * 4;
            const bool in = gr < M && gk < kend;
            kfg_cp16(sa + r * 128 + ((q ^ (r & 7)) << 4), in ? A + gr * K + gk : A, in);
        }
//@ loader_a_tile
#pragma unroll
        for (int e = 0; e < 16; e++) {
            const int id = tid + e * 256, r = @R@, kk = @C@;
            const long long gr = m0 + r, gk = k0 + kk;
            const bool in = gr < M && gk < kend;
            kfg_cp4(sa + r * 128 + (((kk >> 2) ^ (r & 7)) << 4) + (kk & 3) * 4, in ? A + @IDX@ : A, in);
        }
//@ loader_b_kmajor
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int id = tid + e * 256, r = id >> 3, q = id & 7;
            const long long gc = n0 + r, gk = k0 + q * 4;
            const bool in = gc < N && gk < kend;
            kfg_cp16(sb + (r * BKS + q * 4) * 4, in ? B + gc * K + gk : B, in);
        }
//@ loader_b_nmajor
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int id = tid + e * 256, r = id >> 5, q = id & 31;
            const long long gk = k0 + r, gc = n0 + q * 4;
            const bool in = gk < kend && gc < N;
            kfg_cp16(sb + (r * BSTR + q * 4) * 4, in ? B + gk * N + gc : B, in);
        }
//@ loader_b_tile
#pragma unroll
        for (int e = 0; e < 16; e++) {
            const int id = tid + e * 256, r = @R@, cc = @C@;
            const long long gk = k0 + r, gc = n0 + cc;
            const bool in = gk < kend && gc < N;
            kfg_cp4(sb + (r * BSTR + cc) * 4, in ? B + @IDX@ : B, in);
        }
//@ store_head
    kfg_wait<0>();
    // acc[4j + h] is C (m0 + 2t + 8j + h, n), acc[4j + 2 + h] its column n + 1
    const long long n = n0 + 64 * wg + 16 * ww + 2 * g;
    if (n >= N) return;
#pragma unroll
    for (int j = 0; j < 16; j++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const long long m = m0 + 2 * t + 8 * j + h;
            if (m >= M) continue;
            float* p = Cout + m * N + n;
            const float v0 = epi(acc[4 * j + h], m, n);
            if (n + 1 < N) {
                const float v1 = epi(acc[4 * j + 2 + h], m, n + 1);
//@ store_scalar
            } else {
                p[0] = v0;
            }
        }
//@ loop_head
    float acc[64], part[64];
#pragma unroll
    for (int i = 0; i < 64; i++) acc[i] = part[i] = 0.0f;
    float2 nb[4][2];
#pragma unroll
    for (int st = 0; st < STAGES - 1; st++) {
        if (st < ktiles) load_tile(st);
        kfg_commit();
    }
    kfg_wait<STAGES - 2>();
//@ loop_split
    kfg_fence_async();
    __syncthreads();
    if (ktiles > 0) load_b(nb, 0);
    for (int kt = 0; kt < ktiles; kt++) {
        const bool more = kt + 1 < ktiles;
@EARLY_LOAD@        unsigned bh[4][4], bl[4][4];
        kfg_frags<BF>(nb, bh, bl);
        const unsigned long long d_raw = kfg_desc(stage_a(kt)@A_WO@), d_split = kfg_desc(stage_a(kt) + SA_BYTES@A_WO@);
        kfg_wg_fence();
        kfg_mma_step<BF>(part, bh, bl, 0, d_raw, d_split, 0);
@LATE_LOAD@        kfg_mma_step<BF>(part, bh, bl, 1, d_raw, d_split, 1);
        kfg_mma_step<BF>(part, bh, bl, 2, d_raw, d_split, 1);
        kfg_mma_step<BF>(part, bh, bl, 3, d_raw, d_split, 1);
        kfg_wg_commit();
        if (more) {
            kfg_wait<STAGES - 2>();
            kfg_fence_async();
            __syncthreads();
            load_b(nb, kt + 1);
        }
//@ loop_presplit
    __syncthreads();
    if (ktiles > 0) {
        kfg_split_tile<BF, 0, NUNITS, NT>(stage_a(0), ssplit, tid);
        load_b(nb, 0);
    }
    kfg_fence_async();
    __syncthreads();
    for (int kt = 0; kt < ktiles; kt++) {
        const bool more = kt + 1 < ktiles;
@EARLY_LOAD@        unsigned bh[4][4], bl[4][4];
        kfg_frags<BF>(nb, bh, bl);
        const unsigned long long d_raw = kfg_desc(stage_a(kt)@A_WO@), d_split = kfg_desc(ssplit + (kt & 1) * SA_BYTES@A_WO@);
        const unsigned snext = ssplit + ((kt + 1) & 1) * SA_BYTES;
        kfg_wg_fence();
        // the split of tile kt+1 between this tile's k steps (tensor cores busy meanwhile)
        kfg_mma_step<BF>(part, bh, bl, 0, d_raw, d_split, 0);
@LATE_LOAD@        if (more) {
            kfg_wait<STAGES - 2>();
            __syncthreads();
        }
        kfg_mma_step<BF>(part, bh, bl, 1, d_raw, d_split, 1);
        if (more) kfg_split_tile<BF, 0, NUNITS / 2, NT>(stage_a(kt + 1), snext, tid);
        kfg_mma_step<BF>(part, bh, bl, 2, d_raw, d_split, 1);
        if (more) {
            kfg_split_tile<BF, NUNITS / 2, NUNITS, NT>(stage_a(kt + 1), snext, tid);
            kfg_fence_async();
        }
        kfg_mma_step<BF>(part, bh, bl, 3, d_raw, d_split, 1);
        kfg_wg_commit();
        if (more) load_b(nb, kt + 1);
//@ loop_fadd
        kfg_wg_wait<0>();
        // the tile's sum added with FADD: tensor-core accumulation truncates
#pragma unroll
        for (int i = 0; i < 64; i++) {
            kfg_keep(part[i]);
            acc[i] += part[i];
        }
        __syncthreads();
    }
//@ kernel_head
    constexpr int STAGES = @STAGES@, BF = @BF@, NT = 256, @B_STRIDE@;
    constexpr unsigned SA_BYTES = 16384, STAGE_BYTES = @STAGE_BYTES@;   // multiples of 1024
    constexpr int NUNITS = BF ? 512 : 1024;   // split units of a tile
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wg = warp >> 2, ww = warp & 3, g = lane >> 2, t = lane & 3;
    const long long m0 = (long long)blockIdx.y * 128, n0 = (long long)blockIdx.x * 128;
    const unsigned sbase = (kfg_smem(kf_smem) + 1023u) & ~1023u;
    const unsigned ssplit = sbase + STAGES * STAGE_BYTES;   // two split buffers
    const unsigned b_off = @B_OFF@;
    auto stage_a = [&](int kt) { return sbase + (kt % STAGES) * STAGE_BYTES; };
