// Reference: KL divergence sum(t (log t - log p)) / batch_size; block partial sums in double, then one block, then the mean.
extern "C" __global__ void loss_partial(const float* __restrict__ predictions, const float* __restrict__ targets, double* __restrict__ part, long long n)
{
    __shared__ double red[256];
    double s = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        double t = (double)targets[i];
        if (t > 0.0) s += t * (log(t) - log((double)predictions[i]));
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = red[0];
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
scratch double part[4096];
scratch double total[1];
loss_partial<<<4096, 256>>>(predictions, targets, part, batch_size * dim);
sum_parts<<<1, 256>>>(part, 4096, total);
finish_mean<<<1, 32>>>(total, loss, batch_size);
@*/
