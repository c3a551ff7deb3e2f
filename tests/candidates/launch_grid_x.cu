// problem: relu
// expect: format_error 11:12: grid.x = 4294967296 is over the device limit 2147483647
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_f32<<<4294967296, 256>>>(x, y, batch_size * dim);
@*/
