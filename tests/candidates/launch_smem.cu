// problem: relu
// expect: format_error 11:20: 300000 bytes of dynamic shared memory is over the device limit of 232448
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_f32<<<1, 256, 300000>>>(x, y, batch_size * dim);
@*/
