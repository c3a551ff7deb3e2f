// problem: 019
// expect: correct
// (was: incorrect timed_output_mismatch) Module variables are restored before every launch block
// (collect-v3, issue 37): the state it keeps is gone, so it does the work.
// Counts its launches and stops working after the first few (when a
// harness would be timing it). Check and repeat runs pass; the verified
// timed trials catch it.
__device__ unsigned int kf_launches;

extern "C" __global__ void relu_lazy_later(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    if (kf_launches >= 8) return;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

extern "C" __global__ void count_launch(int dummy)
{
    kf_launches++;
}

/*@launch
relu_lazy_later<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
count_launch<<<1, 1>>>(0);
@*/
