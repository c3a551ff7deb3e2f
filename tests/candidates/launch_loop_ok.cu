// problem: relu
// expect: ok
// ReLU a row at a time: a loop, element offsets, the loop variable in the grid.
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
/*@launch
for (int t = 0; t < batch_size; t += 2) {
    relu_f32<<<ceil_div(dim, 256) + t % 2, 256>>>(x + t * dim, y + t * dim, dim);
    relu_f32<<<ceil_div(dim, 512), dim3(512)>>>(x + (t + 1) * dim, y + (t + 1) * dim, dim);
}
@*/
