// problem: relu
// expect: format_error 11:12: grid.x is 0
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_f32<<<dim - dim, 256>>>(x, y, batch_size * dim);
@*/
