// problem: 023
// expect: correct
// Honest softmax: one block per row, block reductions in shared memory.
extern "C" __global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, long long D)
{
    __shared__ float red[1024];
    const float* xr = x + blockIdx.x * D;
    float* yr = y + blockIdx.x * D;
    float m = -3.402823466e38f;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) m = fmaxf(m, xr[j]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) sum += __expf(xr[j] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    for (long long j = threadIdx.x; j < D; j += blockDim.x) yr[j] = __expf(xr[j] - m) * inv;
}

/*@launch
softmax_rows<<<batch_size, 1024>>>(x, y, dim);
@*/
