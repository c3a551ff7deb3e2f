// Reference: log-softmax over each row of x (batch_size, dim); one block per row,
// max, then the sum of exp(x - max) in double, then the output.
extern "C" __global__ void log_softmax_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long rows, long long cols)
{
    __shared__ double red[256];
    long long r = blockIdx.x;
    if (r >= rows) return;
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double m = -1.0e300;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        m = fmax(m, (double)xr[j]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    double sum = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        sum += exp((double)xr[j] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    sum = red[0];
    for (long long j = threadIdx.x; j < cols; j += blockDim.x)
        yr[j] = (float)((double)xr[j] - m - log(sum));
}

/*@launch
log_softmax_ref<<<batch_size, 256>>>(x, y, batch_size, dim);
@*/
