// The GEMM epilogue kernels (kernels/emit/builtin_gemm_epi.c): the common
// device helpers, the epilogue function, the kernel prologue and the kernel
// that adds the K slices.
//@ common
#ifndef KF_GEMM_EPI_COMMON
#define KF_GEMM_EPI_COMMON
#ifdef __CUDACC__ // (on the host: tests/tools/emulate_shim_mma.h)
__device__ __forceinline__ unsigned kfg_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// cp.async with src-size: 0 bytes read give zeros (the edges)
__device__ __forceinline__ void kfg_cp16(unsigned d, const float* s, bool in)
{ asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(d), "l"(s), "r"(in ? 16 : 0) : "memory"); }
__device__ __forceinline__ void kfg_cp4(unsigned d, const float* s, bool in)
{ asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(d), "l"(s), "r"(in ? 4 : 0) : "memory"); }
__device__ __forceinline__ void kfg_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void kfg_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory"); }
__device__ __forceinline__ float4 kfg_lds128(unsigned a)
{
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(a));
    return v;
}
__device__ __forceinline__ void kfg_sts128(unsigned a, unsigned x, unsigned y, unsigned z, unsigned w)
{ asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" :: "r"(a), "r"(x), "r"(y), "r"(z), "r"(w) : "memory"); }
__device__ __forceinline__ float kfg_trunc(float x) { return __uint_as_float(__float_as_uint(x) & 0xffffe000u); }
// two floats as bf16x2 (round to nearest), lo in the low half (the lower k slot)
__device__ __forceinline__ unsigned kfg_bf2(float lo, float hi)
{
    unsigned d;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}
#endif
#endif
//@ epi_fn
__device__ __forceinline__ float @NAME@_epi(float v, long long b, long long m, long long n@PARAMS@)
{
    (void)b, (void)m, (void)n;
    {
@CODE@
    }
    return v;
}
//@ prologue
    const long long kf_bz = blockIdx.z / @SPLIT@, kf_sz = blockIdx.z % @SPLIT@;
    const long long M = kf_M, N = kf_N, K = kf_K;
    const float* __restrict__ A = kf_a + @A_OFF@;
    const float* __restrict__ B = kf_b + @B_OFF@;
    float* __restrict__ Cout = kf_c + (kf_sz * @BATCH@LL + kf_bz) * M * N;
    // this block's K slice, whole 32-wide tiles but the last
    const long long kchunk = (K + @SPLIT@LL * 32 - 1) / (@SPLIT@LL * 32) * 32;
    const long long kbeg = kf_sz * kchunk, kend = min(K, kbeg + kchunk);
    const int ktiles = kend > kbeg ? (int)((kend - kbeg + 31) / 32) : 0;
//@ sum
// The K slices' fp32 partials added in double, then the epilogue.
extern "C" __global__ void __launch_bounds__(256)
@NAME@_sum(const float* __restrict__ kf_p, float* __restrict__ kf_c@PARAMS@, long long kf_MN,
       long long kf_N, long long kf_total)
{
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= kf_total) return;
    double acc = 0.0;
#pragma unroll 4
    for (int z = 0; z < @SPLIT@; z++) acc += (double)kf_p[z * kf_total + i];
    const long long r = i % kf_MN;
    kf_c[i] = @NAME@_epi((float)acc, i / kf_MN, r / kf_N, r % kf_N@PNAMES@);
}
