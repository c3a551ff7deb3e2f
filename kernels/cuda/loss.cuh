// loss templates (kernels/builtin_loss.c): the block sum and the final
// kernel that turns the per-block partial sums into the loss.
//@ final
extern "C" __global__ void __launch_bounds__(256)
loss_final(const double* __restrict__ part, long long np, float* __restrict__ loss,
           long long count)
{
    __shared__ double ws[8];
    double v = 0.0;
    for (long long i = threadIdx.x; i < np; i += blockDim.x) v += part[i];
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int w = 0; w < (int)(blockDim.x >> 5); w++) t += ws[w];
        loss[0] = (float)(t / (double)count);
    }
}

//@ block_sum
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int w = 0; w < (int)(blockDim.x >> 5); w++) t += ws[w];
        part[blockIdx.x] = t;
    }
}

