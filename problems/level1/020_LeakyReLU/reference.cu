// Reference: y = leaky_relu(x, negative_slope), element by element, computed in double.
extern "C" __global__ void leaky_relu_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long n, float negative_slope)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = (double)x[i];
    y[i] = (float)(v > 0.0 ? v : v * (double)negative_slope);
}

/*@launch
leaky_relu_ref<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim, negative_slope);
@*/
