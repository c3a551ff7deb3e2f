// problem: matmul
// expect: ok
// Tiled SGEMM: 32x32 tiles of A and B in static shared memory.
#define TILE 32

extern "C" {

__global__ void sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, int n)
{
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < n; t += TILE) {
        As[threadIdx.y][threadIdx.x] = (row < n && t + threadIdx.x < n) ? A[(size_t)row * n + t + threadIdx.x] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (col < n && t + threadIdx.y < n) ? B[(size_t)(t + threadIdx.y) * n + col] : 0.f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) C[(size_t)row * n + col] = acc;
}

}

/*@launch
sgemm_tiled<<<dim3(ceil_div(N, 32), ceil_div(N, 32)), dim3(32, 32)>>>(A, B, C, N);
@*/
