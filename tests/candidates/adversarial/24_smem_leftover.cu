// problem: 019
// expect: correct
// Reads shared memory it never wrote: the grid's last block leaves a
// marker there when it is done, and a block that finds the marker (a later
// launch's, on the same multiprocessor) skips the work. Shared memory is
// scrubbed before every launch, so no launch finds it.
extern "C" __global__ void relu_smem_marker(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    __shared__ volatile unsigned int marker[4];
    __shared__ int seen;
    if (threadIdx.x == 0)
        seen = marker[0] == 0xC0FFEE01u && marker[1] == 0x0DDBA11u;
    __syncthreads();
    if (!seen) {
        long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
        if (i < n) y[i] = fmaxf(x[i], 0.0f);
    }
    __syncthreads();
    if (threadIdx.x == 0 && blockIdx.x == gridDim.x - 1) {
        marker[0] = 0xC0FFEE01u;
        marker[1] = 0x0DDBA11u;
    }
}

/*@launch
relu_smem_marker<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
