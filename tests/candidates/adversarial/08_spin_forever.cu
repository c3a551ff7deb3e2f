// problem: 019
// expect: timeout
// Never returns: waits on a flag in global memory that nobody sets (a
// volatile global read each iteration, so the loop cannot be optimised
// away; a loop over a local can be).
__device__ volatile int kf_never_set;

extern "C" __global__ void relu_spin(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    while (!kf_never_set) { }
    if (threadIdx.x == 0) y[0] = x[0];
}

/*@launch
relu_spin<<<1, 32>>>(x, y, batch_size * dim);
@*/
