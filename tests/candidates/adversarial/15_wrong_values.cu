// problem: 019
// expect: incorrect output_mismatch
// Off by a little more than the fp32 tolerance.
extern "C" __global__ void relu_off(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f) * 1.001f + 0.001f;
}

/*@launch
relu_off<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
