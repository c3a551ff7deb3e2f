// problem: relu
// expect: format_error 11:50: element offset 262144 is outside `y` \(262144 elements\) \(at t = 16\)
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
/*@launch
for (int t = 0; t <= batch_size; ++t) {
    relu_f32<<<ceil_div(dim, 256), 256>>>(x, y + t * dim, dim);
}
@*/
