// problem: relu
// expect: format_error 11:52: tensor `x` is float32, but parameter `x` of `relu_f32` is `const int\* __restrict__ x` \(expected float\* or void\*\)
extern "C" __global__ void relu_f32(const int* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_f32<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
