// problem: relu
// expect: format_error 11:5: the launch block makes over 1048576 launches with its loops \(at t = 64, j = 0\)
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
/*@launch
for (int t = 0; t < dim; ++t) { for (int j = 0; j < dim; j += 1) {
    relu_f32<<<1, 1>>>(x + j, y + j, 1);
} }
@*/
