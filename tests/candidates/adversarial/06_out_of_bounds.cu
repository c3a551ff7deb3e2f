// problem: 019
// expect: incorrect guard_overwritten
// Correct values, plus a write just past the end of the output.
extern "C" __global__ void relu_oob(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
    if (i < 64) y[n + i] = 1.0f;
}

/*@launch
relu_oob<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
