// Reference: C[i][j] = A[i] * B[i][j] (diag(A) @ B), one thread per output.
extern "C" __global__ void diag_matmul_ref(const float* __restrict__ A, const float* __restrict__ B,
                                            float* __restrict__ C, long long M, long long N)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= M * N) return;
    long long m = idx / N;
    C[idx] = (float)((double)A[m] * (double)B[idx]);
}

/*@launch
diag_matmul_ref<<<ceil_div(N * M, 256), 256>>>(A, B, C, N, M);
@*/
