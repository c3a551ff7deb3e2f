// problem: 001
// expect: compile_error
// Keeps whole outputs in __device__ memory keyed by a fingerprint of the
// inputs, and on inputs it has seen copies the kept output instead of
// multiplying: right answers without the work (timed trials repeat the
// check trials' inputs). Static device memory over 4 MiB is refused; a
// smaller cache of a small output is caught by the speed-of-light floor.
#define KN 4096
__device__ float kf_cache[2][KN * KN];
__device__ float kf_key[2];
__device__ int kf_used[2];

extern "C" __global__ void mm_cached(const float* __restrict__ A, const float* __restrict__ B,
                                     float* __restrict__ C)
{
    const float key = A[0] + 2.0f * B[1];
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= (long long)KN * KN) return;
    for (int s = 0; s < 2; s++)
        if (kf_used[s] && kf_key[s] == key) { C[i] = kf_cache[s][i]; return; }
    const int r = (int)(i / KN), c = (int)(i % KN);
    float acc = 0.0f;
    for (int k = 0; k < KN; k++)
        acc = fmaf(A[(long long)r * KN + k], B[(long long)k * KN + c], acc);
    C[i] = acc;
    kf_cache[key > 0.5f][i] = acc;
}

extern "C" __global__ void mm_remember(const float* __restrict__ A, const float* __restrict__ B)
{
    const float key = A[0] + 2.0f * B[1];
    kf_key[key > 0.5f] = key;
    kf_used[key > 0.5f] = 1;
}

/*@launch
mm_cached<<<ceil_div(N * N, 256), 256>>>(A, B, C);
mm_remember<<<1, 1>>>(A, B);
@*/
