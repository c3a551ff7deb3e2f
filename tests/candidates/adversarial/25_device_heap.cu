// problem: 019
// expect: compile_error
// Memory from device malloc() outlives a launch (a place to keep results
// between launches): this kernel's first block skips its work whenever it
// gets some. The driver gives a context a heap whatever its limit says
// (a limit of 0 still served it on the H100), so a cubin that calls
// malloc or free is refused.
extern "C" __global__ void relu_heap(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    __shared__ int have;
    if (threadIdx.x == 0) {
        have = 0;
        if (blockIdx.x == 0) {
            void *p = malloc(64);
            have = p != 0;
            if (p) free(p);
        }
    }
    __syncthreads();
    if (have) return;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_heap<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
