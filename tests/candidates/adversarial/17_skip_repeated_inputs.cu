// problem: 019
// expect: correct
// (was: incorrect nondeterministic) Module variables are restored before every launch block
// (collect-v3, issue 37): the state it keeps is gone, so it does the work.
// Remembers fingerprints of the last two inputs and skips the work when it
// sees one again (less work on repeated inputs): the repeat run on the
// last check trial's inputs catches it.
__device__ float kf_seen_v[2];
__device__ int kf_seen_n;

extern "C" __global__ void relu_memo(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    float f = x[0];
    if (kf_seen_n > 1 && (kf_seen_v[0] == f || kf_seen_v[1] == f)) return;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

extern "C" __global__ void remember(const float* __restrict__ x)
{
    kf_seen_v[kf_seen_n & 1] = x[0];
    kf_seen_n++;
}

/*@launch
relu_memo<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
remember<<<1, 1>>>(x);
@*/
