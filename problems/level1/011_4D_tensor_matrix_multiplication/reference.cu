// Reference: C[b][m][n] = sum_k A[..] * B[..] with A (M, K), B (K, N); one thread per
// output element, double accumulation over the whole K.
extern "C" __global__ void matmul_ref(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, long long batch, long long M,
                                       long long N, long long K)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= batch * M * N) return;
    const long long n = idx % N;
    const long long m = (idx / N) % M;
    const long long b = idx / (M * N);
    (void)b;
    double acc = 0.0;
    for (long long k = 0; k < K; ++k)
        acc += (double)A[m * K + k] * (double)B[k * N + n];
    C[idx] = (float)acc;
}

/*@launch
matmul_ref<<<ceil_div((b * i * j) * k, 256), 256>>>(A, B, C, 1, b * i * j, k, l);
@*/
