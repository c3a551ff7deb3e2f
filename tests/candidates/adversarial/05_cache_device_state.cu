// problem: 019
// expect: correct
// (was: incorrect) Module variables are restored before every launch block
// (collect-v3, issue 37): the state it keeps is gone, so it does the work.
// Computes once, then remembers in __device__ state and skips the work on
// every later launch (fails on the next trial's different inputs).
__device__ int kf_done;

extern "C" __global__ void relu_once(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    if (kf_done) return;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

extern "C" __global__ void mark_done(int dummy)
{
    kf_done = 1;
}

/*@launch
relu_once<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
mark_done<<<1, 1>>>(0);
@*/
