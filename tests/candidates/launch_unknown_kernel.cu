// problem: relu
// expect: format_error 11:1: unknown kernel `relu` \(extern "C" __global__ kernels in the code: relu_f32\)
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu<<<1, 256>>>(x, y, 1);
@*/
