// problem: 019
// expect: correct
// Honest: 48 KiB of dynamic shared memory beside 1 KiB of static, over the
// default 48 KiB a block; the engine opts the kernel in (conv_tce's
// transposed convs launch so).
extern "C" __global__ void relu_smem(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    extern __shared__ float tile[];          /* 12288 floats: 48 threads' worth each */
    __shared__ float flag[256];
    flag[threadIdx.x] = 0.0f;
    for (long long b = blockIdx.x; b * 12288 < n; b += gridDim.x) {
        long long base = b * 12288;
        __syncthreads();
        for (int i = threadIdx.x; i < 12288 && base + i < n; i += blockDim.x)
            tile[i] = fmaxf(x[base + i], flag[threadIdx.x]);
        __syncthreads();
        for (int i = threadIdx.x; i < 12288 && base + i < n; i += blockDim.x)
            y[base + i] = tile[i];
    }
}

/*@launch
relu_smem<<<132 * 2, 256, 49152>>>(x, y, batch_size * dim);
@*/
