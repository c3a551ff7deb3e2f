// gemv (kernels/builtin_mv.c): the kernel that adds the split partials.
//@ gemv_sum
extern "C" __global__ void gemv_sum(const double* __restrict__ part,
                                    float* __restrict__ C, long long M)
{
    const long long m = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (m >= M) return;
    double v = 0.0;
    for (int i = 0; i < SPLIT; i++) v += part[m * SPLIT + i];
    C[m] = (float)v;
}

