// gemv (kernels/builtin_mv.c): the matrix-vector kernel and the kernel that
// adds its split partials.
//@ gemv
extern "C" __global__ void __launch_bounds__(NT)
gemv(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
     double* __restrict__ part, long long M, long long K)
{
    __shared__ double red[NT / 32][ROWS];
    const long long r0 = (long long)blockIdx.x * ROWS;
    const float* Ar[ROWS];
#pragma unroll
    for (int j = 0; j < ROWS; j++) Ar[j] = A + min(r0 + j, M - 1) * K; // clamped: duplicate rows are not stored
    // this block's K slice, a multiple of 4 long so float4s stay aligned
    const long long chunk = (K + 4LL * SPLIT - 1) / (4LL * SPLIT) * 4;
    const long long k0 = blockIdx.y * chunk, k1 = min(K, k0 + chunk);
    float acc[ROWS][4];
#pragma unroll
    for (int j = 0; j < ROWS; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
    double dacc[ROWS];
#pragma unroll
    for (int j = 0; j < ROWS; j++) dacc[j] = 0.0;
    if ((K & 3) == 0) {
        const float4* B4 = reinterpret_cast<const float4*>(B + k0);
        const long long n4 = k0 < k1 ? (k1 - k0) >> 2 : 0;
        // fp32 partials flushed to double every 1024 float4s per thread
        for (long long base = 0; base < n4; base += (long long)NT * 1024) {
            const long long e = min(n4, base + (long long)NT * 1024);
#pragma unroll @UNROLL@
            for (long long i = base + threadIdx.x; i < e; i += NT) {
                const float4 bv = __ldg(B4 + i);
#pragma unroll
                for (int j = 0; j < ROWS; j++) {
                    const float4 av = reinterpret_cast<const float4*>(Ar[j] + k0)[i];
                    acc[j][0] = fmaf(av.x, bv.x, acc[j][0]);
                    acc[j][1] = fmaf(av.y, bv.y, acc[j][1]);
                    acc[j][2] = fmaf(av.z, bv.z, acc[j][2]);
                    acc[j][3] = fmaf(av.w, bv.w, acc[j][3]);
                }
            }
#pragma unroll
            for (int j = 0; j < ROWS; j++) {
                dacc[j] += ((double)acc[j][0] + (double)acc[j][1]) + ((double)acc[j][2] + (double)acc[j][3]);
                acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.0f;
            }
        }
    } else {
        for (long long k = k0 + threadIdx.x; k < k1; k += NT) {
            const double bv = (double)B[k];
#pragma unroll
            for (int j = 0; j < ROWS; j++) dacc[j] += (double)Ar[j][k] * bv;
        }
    }
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
#pragma unroll
    for (int j = 0; j < ROWS; j++) {
        double v = dacc[j];
        for (int o = 16; o; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0) red[w][j] = v;
    }
    __syncthreads();
    if (threadIdx.x < ROWS && r0 + threadIdx.x < M) {
        double v = 0.0;
        for (int i = 0; i < NT / 32; i++) v += red[i][threadIdx.x];
        if (SPLIT == 1) C[r0 + threadIdx.x] = (float)v;
        else part[(r0 + threadIdx.x) * SPLIT + blockIdx.y] = v;
    }
}

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

