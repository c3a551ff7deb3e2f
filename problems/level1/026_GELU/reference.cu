// Reference: y = 0.5 x (1 + erf(x / sqrt(2))), element by element, computed in double.
extern "C" __global__ void gelu_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = (double)x[i];
    y[i] = (float)(0.5 * v * (1.0 + erf(v * 0.70710678118654752440)));
}

/*@launch
gelu_ref<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
