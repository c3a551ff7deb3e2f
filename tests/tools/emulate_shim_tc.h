// Host emulation of gemm_epi's mma.sync helpers (kernels/emit/builtin_gemm_epi*.c,
// the device versions under #ifdef __CUDACC__), used by its core and conv_epi's
// mma core: shared addresses are offsets into kf_dyn_smem; cp.async goes through
// kf_cp_async (emulate_shim_mv.h); mma.sync is warp-collective: every lane posts
// its fragments, yields, computes its own outputs from the warp's, yields.
// Operands as the hardware takes them: tf32 truncated to 10 mantissa bits,
// bf16 pairs as packed; products summed in double.
static inline unsigned kfg_smem(const void *p) { return (unsigned)((const unsigned char *)p - kf_dyn_smem); }
static inline void kfg_cp16(unsigned d, const float *s, bool in) { kf_cp_async(kf_dyn_smem + d, s, 16, in ? 16 : 0); }
static inline void kfg_cp4(unsigned d, const float *s, bool in) { kf_cp_async(kf_dyn_smem + d, s, 4, in ? 4 : 0); }
static inline void kfg_commit() { kf_cp_commit(); }
template <int N> static inline void kfg_wait() { kf_cp_wait(N); }
static inline float4 kfg_lds128(unsigned a) { float4 v; memcpy(&v, kf_dyn_smem + a, 16); return v; }
static inline void kfg_sts128(unsigned a, unsigned x, unsigned y, unsigned z, unsigned w)
{ unsigned v[4] = { x, y, z, w }; memcpy(kf_dyn_smem + a, v, 16); }
static inline float kfg_trunc(float x) { return __uint_as_float(__float_as_uint(x) & 0xffffe000u); }
static inline unsigned kf_bf16_rn(float x)
{
    unsigned u = __float_as_uint(x);
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}
static inline unsigned kfg_bf2(float lo, float hi) { return kf_bf16_rn(lo) | kf_bf16_rn(hi) << 16; }
static inline double kf_bf16_val(unsigned pair, int hi) { return __uint_as_float((hi ? pair >> 16 : pair & 0xffffu) << 16); }
static unsigned kf_mma_a[KF_MAXT][4], kf_mma_b[KF_MAXT][2];
// D (thread g = lane / 4, t = lane % 4): d0 (g, 2t), d1 (g, 2t + 1), d2 (g + 8, 2t), d3 (g + 8, 2t + 1).
template <class F> static inline void kf_mma(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1, F dot)
{
    unsigned t = kf_cur, base = t - t % 32, lane = t % 32;
    for (int i = 0; i < 4; i++) kf_mma_a[t][i] = a[i];
    kf_mma_b[t][0] = b0;
    kf_mma_b[t][1] = b1;
    kf_yield();
    float r[4];
    for (int i = 0; i < 4; i++) {
        const int row = (int)(lane / 4) + 8 * (i >> 1), col = (int)(lane % 4) * 2 + (i & 1);
        r[i] = (float)((double)d[i] + dot(base, row, col));
    }
    kf_yield();
    for (int i = 0; i < 4; i++) d[i] = r[i];
}
// m16n8k8 tf32: a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); b0 (k t, n g), b1 (k t + 4, n g).
static inline void kfg_mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    kf_mma(d, a, b0, b1, [](unsigned base, int row, int col) {
        double s = 0;
        for (int k = 0; k < 8; k++) {
            const unsigned al = base + (row % 8) * 4 + k % 4, bl = base + col * 4 + k % 4;
            const unsigned av = kf_mma_a[al][(row >= 8) + 2 * (k >= 4)], bv = kf_mma_b[bl][k >= 4];
            s += (double)__uint_as_float(av & 0xffffe000u) * __uint_as_float(bv & 0xffffe000u);
        }
        return s;
    });
}
// m16n8k16 bf16: a0 (g, 2t..2t+1), a1 (g + 8, 2t..), a2 (g, 2t+8..), a3 (g + 8, 2t+8..);
// b0 (k 2t..2t+1, n g), b1 (k 2t+8..2t+9, n g); the lower k in the low half.
static inline void kfg_mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    kf_mma(d, a, b0, b1, [](unsigned base, int row, int col) {
        double s = 0;
        for (int k = 0; k < 16; k++) {
            const int kk = k % 8, hi = k & 1;
            const unsigned al = base + (row % 8) * 4 + kk / 2, bl = base + col * 4 + kk / 2;
            const unsigned av = kf_mma_a[al][(row >= 8) + 2 * (k >= 8)], bv = kf_mma_b[bl][k >= 8];
            s += kf_bf16_val(av, hi) * kf_bf16_val(bv, hi);
        }
        return s;
    });
}
// gemm_epi's wgmma helpers (builtin_gemm_epi_wg.c; conv_epi's wgmma core too).
// wgmma is warpgroup-collective: every thread of the 128 posts its register
// fragment (the A operand, 64 rows x k), yields, computes its 64 outputs, yields.
// The B operand is read from shared memory through the descriptor: K-major,
// 128-byte swizzle (kf_wg_smem; the 16-byte chunk index XORed with address
// bits 7-9). Synchronous: fences,
// commits and waits are no-ops. Operands as the hardware takes them (tf32
// truncated); products summed in double.
static inline void kfg_fence_async() {}
static inline void kfg_wg_fence() {}
static inline void kfg_wg_commit() {}
template <int N> static inline void kfg_wg_wait() {}
static inline void kfg_keep(float &) {}
static unsigned kf_wg_a[KF_MAXT][4];
// Byte offset of element (n, kbyte) of the operand: 8-row groups SBO apart,
// rows of a group 128 bytes apart (the 128-byte swizzle mode, the only one the
// emitters use).
static inline unsigned kf_wg_smem(unsigned long long desc, int n, int kbyte)
{
    if (desc >> 62 != 1) { fprintf(stderr, "wgmma emulation: not the 128-byte swizzle\n"); abort(); }
    const unsigned sbo = (unsigned)((desc >> 32) & 0x3FFFull) << 4;
    unsigned a = (unsigned)((desc & 0x3FFFull) << 4) + (unsigned)(n / 8) * sbo + (unsigned)(n % 8) * 128u + (unsigned)kbyte;
    return a ^ (((a >> 7) & 7u) << 4);
}
template <class F> static inline void kf_wgmma(float (&d)[64], const unsigned (&a)[4], int scale_d, F dot)
{
    unsigned t = kf_cur, base = t - t % 128, lane = t % 32, w = t % 128 / 32;
    for (int i = 0; i < 4; i++) kf_wg_a[t][i] = a[i];
    kf_yield();
    float r[64];
    for (int j = 0; j < 16; j++)
        for (int i = 0; i < 4; i++) {
            const int row = (int)(16 * w + lane / 4 + 8 * (i >> 1)), col = (int)(8 * j + lane % 4 * 2 + (i & 1));
            r[4 * j + i] = (float)((scale_d ? (double)d[4 * j + i] : 0.0) + dot(base, row, col));
        }
    kf_yield();
    for (int i = 0; i < 64; i++) d[i] = r[i];
}
// m64n128k8 tf32: the register rows as mma.sync's m16n8k8 A, warp w rows 16w..16w+15.
static inline void kfg_wgmma_tf32(float (&d)[64], const unsigned (&a)[4], unsigned long long desc, int scale_d)
{
    kf_wgmma(d, a, scale_d, [desc](unsigned base, int row, int col) {
        double s = 0;
        for (int k = 0; k < 8; k++) {
            const unsigned th = base + (unsigned)(row / 16 * 32 + row % 8 * 4 + k % 4);
            const unsigned av = kf_wg_a[th][(row % 16 >= 8) + 2 * (k >= 4)];
            unsigned bv;
            memcpy(&bv, kf_dyn_smem + kf_wg_smem(desc, col, 4 * k), 4);
            s += (double)__uint_as_float(av & 0xffffe000u) * __uint_as_float(bv & 0xffffe000u);
        }
        return s;
    });
}
// m64n128k16 bf16: register k 2t, 2t+1 (a0, a1) and 2t+8, 2t+9 (a2, a3), the lower k in the low half.
static inline void kfg_wgmma_bf16(float (&d)[64], const unsigned (&a)[4], unsigned long long desc, int scale_d)
{
    kf_wgmma(d, a, scale_d, [desc](unsigned base, int row, int col) {
        double s = 0;
        for (int k = 0; k < 16; k++) {
            const unsigned th = base + (unsigned)(row / 16 * 32 + row % 8 * 4 + k % 8 / 2);
            const unsigned av = kf_wg_a[th][(row % 16 >= 8) + 2 * (k >= 8)];
            unsigned short bh;
            memcpy(&bh, kf_dyn_smem + kf_wg_smem(desc, col, 2 * k), 2);
            s += kf_bf16_val(av, k & 1) * (double)__uint_as_float((unsigned)bh << 16);
        }
        return s;
    });
}
template <int BSTR> static inline void kfg_load_b_kn(float2 (&nb)[4][2], unsigned sb, int t)
{
    for (int kk = 0; kk < 4; kk++)
        for (int hh = 0; hh < 2; hh++) memcpy(&nb[kk][hh], kf_dyn_smem + sb + (8 * kk + t + 4 * hh) * BSTR * 4, 8);
}
template <int BKS> static inline void kfg_load_b_nk(float2 (&nb)[4][2], unsigned sb, int t)
{
    for (int kk = 0; kk < 4; kk++)
        for (int hh = 0; hh < 2; hh++) {
            const unsigned a = sb + (8 * kk + t + 4 * hh) * 4;
            memcpy(&nb[kk][hh].x, kf_dyn_smem + a, 4);
            memcpy(&nb[kk][hh].y, kf_dyn_smem + a + BKS * 4, 4);
        }
}
