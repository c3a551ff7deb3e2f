// problem: relu
// expect: format_error 11:12: grid.y = 70000 is over the device limit 65535
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_f32<<<dim3(1, 70000), 256>>>(x, y, batch_size * dim);
@*/
