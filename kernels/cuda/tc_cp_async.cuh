// cp.async wrappers and the zero-filling tile loader of matmul_tc and
// conv_tc (kernels/builtin_mv.c tmpl_tc_helpers); the wrappers (section
// cp_async: cp16 and cp4 prefixed by P, the commit named CP_COMMIT) are conv_epi's too
// (kernels/emit/builtin_conv_epi.c). Without __CUDACC__ (the host
// emulator of tests/tools) the wmma and cp.async pieces come from
// tests/tools/emulate_shim_mv.h.
//@ cp_async
#ifdef __CUDACC__
#include <mma.h>
#endif
using namespace nvcuda;
__device__ __forceinline__ void @P@cp16(float* dst, const float* src, int bytes) {
#ifdef __CUDACC__
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(d), "l"(src), "r"(bytes) : "memory");
#else
    kf_cp_async(dst, src, 16, bytes);
#endif
}
__device__ __forceinline__ void @P@cp4(float* dst, const float* src, int bytes) {
#ifdef __CUDACC__
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(d), "l"(src), "r"(bytes) : "memory");
#else
    kf_cp_async(dst, src, 4, bytes);
#endif
}
__device__ __forceinline__ void @CP_COMMIT@() {
#ifdef __CUDACC__
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#else
    kf_cp_commit();
#endif
}
//@ helpers
template <int N> __device__ __forceinline__ void cp_wait() {
#ifdef __CUDACC__
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
#else
    kf_cp_wait(N);
#endif
}
// Copies the TR x TC window at (ro, co) of a row-major matrix X (leading
// dimension ld, valid rows < rlim, columns < clim) to S[TR][TC + PAD],
// zero-filling outside. src-size 0 reads nothing, the address is only clamped.
template <int TR, int TC, int PAD>
__device__ __forceinline__ void load_tile(float* S, const float* __restrict__ X, long long ld,
        long long rlim, long long clim, long long ro, long long co, bool vec) {
    if (vec) {
        for (int c = threadIdx.x; c < TR * TC / 4; c += NT) {
            const int r = c / (TC / 4), q = (c % (TC / 4)) * 4;
            const long long gr = ro + r, gc = co + q;
            const long long n = gr < rlim ? max(0LL, min(4LL, clim - gc)) : 0;
            cp16(S + r * (TC + PAD) + q, n ? X + gr * ld + gc : X, (int)n * 4);
        }
    } else {
        for (int c = threadIdx.x; c < TR * TC; c += NT) {
            const int r = c / TC, q = c % TC;
            const long long gr = ro + r, gc = co + q;
            const bool in = gr < rlim && gc < clim;
            cp4(S + r * (TC + PAD) + q, in ? X + gr * ld + gc : X, in ? 4 : 0);
        }
    }
}
