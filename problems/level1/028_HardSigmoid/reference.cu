// Reference: y = clamp(x / 6 + 1/2, 0, 1), element by element, computed in double.
extern "C" __global__ void hardsigmoid_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = (double)x[i];
    y[i] = (float)(fmin(fmax(v / 6.0 + 0.5, 0.0), 1.0));
}

/*@launch
hardsigmoid_ref<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
