// Reference: y = x > 0 ? x : alpha (exp(x) - 1), element by element, computed in double.
extern "C" __global__ void elu_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long n, float alpha)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = (double)x[i];
    y[i] = (float)(v > 0.0 ? v : (double)alpha * (exp(v) - 1.0));
}

/*@launch
elu_ref<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim, alpha);
@*/
