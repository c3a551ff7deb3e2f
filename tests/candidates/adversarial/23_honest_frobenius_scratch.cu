// problem: 037
// expect: correct
// Honest two-pass with a zeroed scratch accumulator: the Frobenius norm of
// the whole tensor, then x / norm.
extern "C" __global__ void sumsq(const float* __restrict__ x, double* acc, long long n)
{
    __shared__ double red[256];
    double s = 0.0;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        s += (double)x[i] * (double)x[i];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(acc, red[0]);
}

extern "C" __global__ void scale(const float* __restrict__ x, float* __restrict__ y,
                                 const double* acc, long long n)
{
    float inv = (float)(1.0 / sqrt(*acc));
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = x[i] * inv;
}

/*@launch
scratch zeroed double acc[1];
sumsq<<<132 * 8, 256>>>(x, acc, batch_size * features * dim1 * dim2);
scale<<<132 * 16, 256>>>(x, y, acc, batch_size * features * dim1 * dim2);
@*/
