// matmul (kernels/builtin_mm.c): the register-blocked SGEMM kernel; its tile
// loads index A and B by layout (placeholders).
//@ head
extern "C" __global__ void __launch_bounds__(NT)
sgemm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
      long long M, long long N, long long K)
{
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    const long long bz = blockIdx.z;
    A += bz * M * K; B += bz * K * N; C += bz * M * N;
    const long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    const int tid = threadIdx.x, tr = tid / (BN / TN), tc = tid % (BN / TN);
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
    long long kbeg = 0, kend = K;
//@ tile_loads
    for (long long k0 = kbeg; k0 < kend; k0 += BK) {
        for (int i = tid; i < BM * BK; i += NT) {
            int r = @A_R@, kk = @A_KK@;
            long long gr = row0 + r, gk = k0 + kk;
            As[kk][r] = (gr < M && gk < K) ? A[@A_IDX@] : 0.0f;
        }
        for (int i = tid; i < BN * BK; i += NT) {
            int cc = @B_CC@, kk = @B_KK@;
            long long gc = col0 + cc, gk = k0 + kk;
            Bs[kk][cc] = (gc < N && gk < K) ? B[@B_IDX@] : 0.0f;
        }
        __syncthreads();
//@ store
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        long long r = row0 + tr * TM + i;
        if (r >= M) break;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            long long cc = col0 + tc * TN + j;
            if (cc >= N) break;
