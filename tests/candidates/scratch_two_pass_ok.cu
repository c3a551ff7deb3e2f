// problem: relu
// expect: ok
// Two launches and a zeroed scratch buffer: row sums, then scale.
extern "C" __global__ void row_sum(const float* x, float* sums, long long cols)
{
    const float* xr = x + blockIdx.x * cols;
    for (long long i = threadIdx.x; i < cols; i += blockDim.x) atomicAdd(&sums[blockIdx.x], xr[i]);
}

extern "C" __global__ void scale_rows(const float* x, const float* sums, float* y, long long cols,
                                      float eps)
{
    const float* xr = x + blockIdx.x * cols;
    for (long long i = threadIdx.x; i < cols; i += blockDim.x)
        y[blockIdx.x * cols + i] = xr[i] / (sums[blockIdx.x] + eps);
}

/*@launch
scratch zeroed float sums[batch_size];
row_sum<<<batch_size, 256>>>(x, sums, dim);
scale_rows<<<batch_size, 256>>>(x, sums, y, dim, 1e-5f);
@*/
