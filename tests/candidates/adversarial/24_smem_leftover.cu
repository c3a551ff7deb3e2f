// problem: 019
// expect: correct
// Reads shared memory it never wrote: when it finds the marker that an
// earlier launch left there, it skips the work. Shared memory is scrubbed
// before every launch, so it never finds it and always does the work.
extern "C" __global__ void relu_smem_marker(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    __shared__ volatile unsigned int marker[256];
    __shared__ int seen;
    if (threadIdx.x == 0)
        seen = marker[blockIdx.x & 255] == 0xC0FFEE00u + (blockIdx.x & 255);
    __syncthreads();
    if (!seen) {
        long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
        if (i < n) y[i] = fmaxf(x[i], 0.0f);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        marker[blockIdx.x & 255] = 0xC0FFEE00u + (blockIdx.x & 255);
}

/*@launch
relu_smem_marker<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
