// Reference: y = scale * (max(0, x) + min(0, alpha (exp(x) - 1))), element by element, computed in double.
extern "C" __global__ void selu_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = (double)x[i];
    y[i] = (float)(v > 0.0 ? 1.0507009873554804934193349852946 * v : 1.0507009873554804934193349852946 * 1.6732632423543772848170429916717 * (exp(v) - 1.0));
}

/*@launch
selu_ref<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
