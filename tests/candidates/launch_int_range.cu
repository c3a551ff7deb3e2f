// problem: relu
// expect: format_error 11:28: value 262144000000 does not fit parameter `n` of `relu_f32` \(`int n`\)
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    int n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_f32<<<1, 256>>>(x, y, batch_size * dim * 1000000);
@*/
