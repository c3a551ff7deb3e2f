// problem: 019
// expect: incorrect partial_write
// Writes only the first half of the output.
extern "C" __global__ void relu_half(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n / 2) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_half<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
