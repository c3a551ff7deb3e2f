// Reference: y = 1 / (1 + exp(-x)), element by element, computed in double.
extern "C" __global__ void sigmoid_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = (double)x[i];
    y[i] = (float)(1.0 / (1.0 + exp(-v)));
}

/*@launch
sigmoid_ref<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
