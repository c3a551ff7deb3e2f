// Host emulation of the f64 rendering's fp64 tensor-core helpers (kernels/cuda/graph_f64.cuh,
// dmma; the device versions under #ifdef __CUDACC__), warp-collective as emulate_shim_tc.h's
// mma.sync: every lane posts its fragments, yields, computes its own outputs, yields. Not a
// shim extension (emulate_shim_*.h): emulate_refs.py puts it at the head of the programs that
// call gf64_dmma only, so the shim's text, which keys every cached emulator program, stays.
// The f64 rendering's fp64 tensor-core step (kernels/cuda/graph_f64.cuh, dmma), m8n8k4:
// lane l holds A (l / 4, l % 4) and B (k l % 4, column l / 4); it sums D (l / 4, 2 (l % 4) + i)
// in the order k = 0..3, each an FMA.
static double kf_dmma_a[KF_MAXT], kf_dmma_b[KF_MAXT];
static inline void gf64_dmma(double (&d)[2], double a, double b)
{
    unsigned t = kf_cur, base = t - t % 32, lane = t % 32;
    kf_dmma_a[t] = a;
    kf_dmma_b[t] = b;
    kf_yield();
    double r[2];
    for (int i = 0; i < 2; i++) {
        const unsigned row = lane / 4, col = lane % 4 * 2 + i;
        r[i] = d[i];
        for (unsigned k = 0; k < 4; k++) r[i] = fma(kf_dmma_a[base + row * 4 + k], kf_dmma_b[base + col * 4 + k], r[i]);
    }
    kf_yield();
    d[0] = r[0];
    d[1] = r[1];
}
// sm_90's m16n8k16: a[v] holds A (l / 4 + 8 (v & 1), l % 4 + 4 (v >> 1)), b[v] B (k l % 4 + 4v,
// column l / 4); d0 D (l / 4, 2 (l % 4) + i), d1 (l / 4 + 8, ...); k = 0..15, each an FMA.
static double kf_dmma16_a[KF_MAXT][8], kf_dmma16_b[KF_MAXT][4];
static inline void gf64_dmma16(double (&d0)[2], double (&d1)[2], const double (&a)[8], const double (&b)[4])
{
    unsigned t = kf_cur, base = t - t % 32, lane = t % 32;
    for (int v = 0; v < 8; v++) kf_dmma16_a[t][v] = a[v];
    for (int v = 0; v < 4; v++) kf_dmma16_b[t][v] = b[v];
    kf_yield();
    double r[4];
    for (int i = 0; i < 4; i++) {
        const unsigned row = lane / 4 + 8 * (i >> 1), col = lane % 4 * 2 + (i & 1);
        r[i] = i < 2 ? d0[i] : d1[i - 2];
        for (unsigned k = 0; k < 16; k++)
            r[i] = fma(kf_dmma16_a[base + row % 8 * 4 + k % 4][(row >= 8) + 2 * (k / 4)],
                       kf_dmma16_b[base + col * 4 + k % 4][k / 4], r[i]);
    }
    kf_yield();
    d0[0] = r[0];
    d0[1] = r[1];
    d1[0] = r[2];
    d1[1] = r[3];
}
