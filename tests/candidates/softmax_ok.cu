// problem: softmax
// expect: ok
// Row softmax: one block per row, block-wide max and sum reductions in
// shared memory (dynamic), then a normalising pass.
#include <cuda_fp16.h>

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void __launch_bounds__(1024)
softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows, long long cols)
{
    extern __shared__ float red[];
    const float* xr = x + (long long)blockIdx.x * cols;
    float* yr = y + (long long)blockIdx.x * cols;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    float m = -3.402823466e38f;
    for (long long i = threadIdx.x; i < cols; i += blockDim.x) m = fmaxf(m, xr[i]);
    m = warp_max(m);
    if (lane == 0) red[warp] = m;
    __syncthreads();
    m = lane < nw ? red[lane] : -3.402823466e38f;
    m = warp_max(m);
    __syncthreads();
    float s = 0.f;
    for (long long i = threadIdx.x; i < cols; i += blockDim.x) s += __expf(xr[i] - m);
    s = warp_sum(s);
    if (lane == 0) red[warp] = s;
    __syncthreads();
    s = lane < nw ? red[lane] : 0.f;
    s = warp_sum(s);
    float inv = 1.f / s;
    for (long long i = threadIdx.x; i < cols; i += blockDim.x) yr[i] = __expf(xr[i] - m) * inv;
}

/*@launch
// one block of 1024 threads per row; 32 floats of shared memory for the reductions
softmax_rows<<<batch_size, 1024, 32 * 4>>>(x, y, batch_size, dim);
@*/
