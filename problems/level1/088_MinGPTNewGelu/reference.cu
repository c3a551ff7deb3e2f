// Reference: y = MinGPT NewGELU (tanh approximation), element by element, computed in double.
extern "C" __global__ void new_gelu_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = (double)x[i];
    y[i] = (float)(0.5 * v * (1.0 + tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v))));
}

/*@launch
new_gelu_ref<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
