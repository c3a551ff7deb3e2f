// Host emulation of gemm_epi's mma.sync helpers (collector/builtin_gemm_epi*.c,
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
