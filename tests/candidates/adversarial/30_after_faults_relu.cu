// problem: 019
// expect: correct
// Plain ReLU, evaluated right after the hanging and faulting candidates:
// the restarted worker must run it normally.
extern "C" __global__ void relu_plain(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/*@launch
relu_plain<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
