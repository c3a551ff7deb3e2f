// Reference: y = max(x, 0), element by element, computed in double.
extern "C" __global__ void relu_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = (double)x[i];
    y[i] = (float)(v > 0.0 ? v : 0.0);
}

/*@launch
relu_ref<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
