// Reference: the sum of x^2 over the whole tensor in double (block partials,
// then one block), then x / sqrt(sum).
extern "C" __global__ void sumsq_partial(const float* __restrict__ x, double* __restrict__ part,
                                         long long n)
{
    __shared__ double red[256];
    double s = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        double v = (double)x[i];
        s += v * v;
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = red[0];
}

extern "C" __global__ void sum_parts(const double* __restrict__ part, long long n,
                                     double* __restrict__ total)
{
    __shared__ double red[256];
    double s = 0.0;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) s += part[i];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) total[0] = red[0];
}

extern "C" __global__ void div_norm(const float* __restrict__ x, const double* __restrict__ total,
                                    float* __restrict__ y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = (float)((double)x[i] / sqrt(total[0]));
}

/*@launch
scratch double part[4096];
scratch double total[1];
sumsq_partial<<<4096, 256>>>(x, part, batch_size * features * dim1 * dim2);
sum_parts<<<1, 256>>>(part, 4096, total);
div_norm<<<ceil_div(batch_size * features * dim1 * dim2, 256), 256>>>(x, total, y, batch_size * features * dim1 * dim2);
@*/
