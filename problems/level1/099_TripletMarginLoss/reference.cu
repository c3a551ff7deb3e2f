// Reference: one block per row: d(a, p) and d(a, n) with pairwise_distance's
// eps (||a - b + 1e-6||_2) in double; loss = mean(max(d_ap - d_an + margin, 0)).
extern "C" __global__ void triplet_rows(const float* __restrict__ anchor,
                                        const float* __restrict__ positive,
                                        const float* __restrict__ negative,
                                        double* __restrict__ rowloss, long long rows,
                                        long long cols, float margin)
{
    __shared__ double red[512];
    long long r = blockIdx.x;
    if (r >= rows) return;
    double sp = 0.0, sn = 0.0;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        double a = (double)anchor[r * cols + j];
        double dp = a - (double)positive[r * cols + j] + 1e-6;
        double dn = a - (double)negative[r * cols + j] + 1e-6;
        sp += dp * dp;
        sn += dn * dn;
    }
    red[threadIdx.x] = sp;
    red[256 + threadIdx.x] = sn;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) {
            red[threadIdx.x] += red[threadIdx.x + k];
            red[256 + threadIdx.x] += red[256 + threadIdx.x + k];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        double v = sqrt(red[0]) - sqrt(red[256]) + (double)margin;
        rowloss[r] = v > 0.0 ? v : 0.0;
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
triplet_rows<<<batch_size, 256>>>(anchor, positive, negative, rowloss, batch_size, dim, margin);
sum_parts<<<1, 256>>>(rowloss, batch_size, total);
finish_mean<<<1, 32>>>(total, loss, batch_size);
@*/
