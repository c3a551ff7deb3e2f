// matmul_splitk (kernels/builtin_mv.c): the split-K SGEMM and its
// summing kernel.
//@ kernels
extern "C" __global__ void __launch_bounds__(NT)
splitk(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ part,
       long long M, long long N, long long K)
{
    __align__(16) __shared__ float As[BK][BM + 4];
    __align__(16) __shared__ float Bs[BK][BN + 4];
    const long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    const long long chunk = (K + (long long)SPLIT * BK - 1) / ((long long)SPLIT * BK) * BK;
    const long long kbeg = blockIdx.z * chunk, kend = min(K, kbeg + chunk);
    const int tid = threadIdx.x, tr = tid / (BN / 8), tc = tid % (BN / 8);
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = 0.0f;
    for (long long k0 = kbeg; k0 < kend; k0 += BK) {
        for (int i = tid; i < BM * BK; i += NT) {
            const int r = i / BK, kk = i % BK;
            const long long gr = row0 + r, gk = k0 + kk;
            As[kk][r] = (gr < M && gk < kend) ? A[gr * K + gk] : 0.0f;
        }
        for (int i = tid; i < BN * BK; i += NT) {
            const int cc = i % BN, kk = i / BN;
            const long long gc = col0 + cc, gk = k0 + kk;
            Bs[kk][cc] = (gc < N && gk < kend) ? B[gk * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++) {
            // rows tr*4.. and BM/2+tr*4.., columns tc*4.. and BN/2+tc*4..
            const float4 a0 = *reinterpret_cast<const float4*>(&As[kk][tr * 4]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[kk][BM / 2 + tr * 4]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[kk][tc * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[kk][BN / 2 + tc * 4]);
            const float av[8] = { a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w };
            const float bv[8] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };
#pragma unroll
            for (int i = 0; i < 8; i++)
#pragma unroll
                for (int j = 0; j < 8; j++) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();
    }
    float* P = part + blockIdx.z * M * N;
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const long long r = row0 + (i < 4 ? tr * 4 + i : BM / 2 + tr * 4 + i - 4);
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const long long cc = col0 + (j < 4 ? tc * 4 + j : BN / 2 + tc * 4 + j - 4);
            if (cc < N) P[r * N + cc] = acc[i][j];
        }
    }
}

extern "C" __global__ void splitk_sum(const float* __restrict__ part, float* __restrict__ C,
                                      long long MN)
{
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= MN) return;
    double v = 0.0;
#pragma unroll 8
    for (int z = 0; z < SPLIT; z++) v += (double)part[z * MN + i];
    C[i] = (float)v;
}

