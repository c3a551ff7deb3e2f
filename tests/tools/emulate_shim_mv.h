// Host emulation of what kernels/builtin_mv.c's matmul_tc uses: wmma
// m16n16k8 tf32 fragments and cp.async groups (the kernel calls these only
// when not compiled by NVRTC/nvcc).
// Fragments: every thread holds the whole tile (elementwise code such as the
// 3xTF32 split is layout-free); mma_sync computes, and store_matrix_sync
// writes, only the elements e with e % 32 == lane, so a warp covers the tile
// once. The MMA truncates its operands to tf32 like the hardware.
// cp.async: copies are queued per thread and done only when wait_group
// retires their commit group, so a missing wait reads stale shared memory.
#include <type_traits>
#include <vector>

namespace nvcuda {
namespace wmma {
struct row_major {};
struct col_major {};
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
namespace precision {
struct tf32 {};
}
enum layout_t { mem_row_major, mem_col_major };

static inline float kf_tf32_bits(float v, unsigned add)
{
    unsigned u;
    memcpy(&u, &v, 4);
    u = (u + add) & 0xffffe000u;
    memcpy(&v, &u, 4);
    return v;
}
static inline float __float_to_tf32(float v) { return kf_tf32_bits(v, 0x1000u); }

template <class Use, int m, int n, int k, class T, class L = void>
struct fragment {
    enum { R = std::is_same<Use, matrix_b>::value ? k : m,
           C = std::is_same<Use, matrix_a>::value ? k : n, num_elements = R * C };
    float x[R * C];
};

template <class Use, int m, int n, int k, class T, class L>
static inline void load_matrix_sync(fragment<Use, m, n, k, T, L> &f, const float *p, unsigned ldm)
{
    typedef fragment<Use, m, n, k, T, L> F;
    for (int r = 0; r < F::R; r++)
        for (int c = 0; c < F::C; c++)
            f.x[r * F::C + c] = std::is_same<L, col_major>::value ? p[r + c * ldm] : p[r * ldm + c];
}

template <class Use, int m, int n, int k, class T, class L>
static inline void fill_fragment(fragment<Use, m, n, k, T, L> &f, float v)
{
    for (int e = 0; e < f.num_elements; e++)
        f.x[e] = v;
}

template <int m, int n, int k, class LA, class LB>
static inline void mma_sync(fragment<accumulator, m, n, k, float> &d,
                            const fragment<matrix_a, m, n, k, precision::tf32, LA> &a,
                            const fragment<matrix_b, m, n, k, precision::tf32, LB> &b,
                            const fragment<accumulator, m, n, k, float> &c)
{
    int lane = kf_cur % 32;
    for (int e = lane; e < m * n; e += 32) {
        int i = e / n, j = e % n;
        float s = c.x[e];
        for (int q = 0; q < k; q++)
            s += kf_tf32_bits(a.x[i * k + q], 0) * kf_tf32_bits(b.x[q * n + j], 0);
        d.x[e] = s;
    }
}

template <int m, int n, int k>
static inline void store_matrix_sync(float *p, const fragment<accumulator, m, n, k, float> &f,
                                     unsigned ldm, layout_t l)
{
    for (int e = kf_cur % 32; e < m * n; e += 32) {
        int r = e / n, c = e % n;
        p[l == mem_row_major ? r * ldm + c : r + c * ldm] = f.x[e];
    }
}
} // namespace wmma
} // namespace nvcuda

struct kf_cp { void *dst; const void *src; int size, bytes; long long group; };
static std::vector<kf_cp> kf_cpq[KF_MAXT];
static long long kf_cpgroup[KF_MAXT];

static inline void kf_cp_async(void *dst, const void *src, int size, int bytes)
{
    kf_cpq[kf_cur].push_back({ dst, src, size, bytes, kf_cpgroup[kf_cur] });
}
static inline void kf_cp_commit() { kf_cpgroup[kf_cur]++; }
static inline void kf_cp_wait(int pending)
{
    std::vector<kf_cp> &q = kf_cpq[kf_cur], keep;
    for (kf_cp &c : q) {
        if (c.group < kf_cpgroup[kf_cur] - pending) {
            memset(c.dst, 0, c.size);
            memcpy(c.dst, c.src, c.bytes);
        } else {
            keep.push_back(c);
        }
    }
    q.swap(keep);
}
