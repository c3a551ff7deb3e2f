// Reference: C[m] = sum_k A[m][k] * B[k]; one block per row, each thread sums a
// strided part in double, then a tree reduction in shared memory (double).
extern "C" __global__ void matvec_ref(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, long long M, long long K)
{
    __shared__ double part[256];
    const long long m = blockIdx.x;
    double acc = 0.0;
    for (long long k = threadIdx.x; k < K; k += blockDim.x)
        acc += (double)A[m * K + k] * (double)B[k];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) C[m] = (float)part[0];
}

/*@launch
matvec_ref<<<M, 256>>>(A, B, C, M, K);
@*/
