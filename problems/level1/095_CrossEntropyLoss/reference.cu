// Reference: one block per row: logsumexp(row) - row[target] in double; then the mean.
extern "C" __global__ void ce_rows(const float* __restrict__ predictions,
                                   const long long* __restrict__ targets, double* __restrict__ rowloss,
                                   long long rows, long long cols)
{
    __shared__ double red[256];
    long long r = blockIdx.x;
    if (r >= rows) return;
    const float* p = predictions + r * cols;
    double m = -1.0e300;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) m = fmax(m, (double)p[j]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + k]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    double s = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) s += exp((double)p[j] - m);
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        long long t = targets[r];
        rowloss[r] = m + log(red[0]) - (double)p[t];
    }
}

// One block: total[0] = sum of part[0..n).
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

extern "C" __global__ void finish_mean(const double* __restrict__ total, float* __restrict__ loss,
                                       long long count)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) loss[0] = (float)(total[0] / (double)count);
}

/*@launch
scratch double rowloss[batch_size];
scratch double total[1];
ce_rows<<<batch_size, 256>>>(predictions, targets, rowloss, batch_size, num_classes);
sum_parts<<<1, 256>>>(rowloss, batch_size, total);
finish_mean<<<1, 32>>>(total, loss, batch_size);
@*/
