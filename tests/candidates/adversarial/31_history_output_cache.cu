// problem: 006
// expect: correct
// Issue 37's attack: keeps its outputs (256 KiB each) in __device__ memory
// keyed on a fingerprint of its inputs and, on inputs it has seen, returns
// them without the 69 GFLOP of work, then waits 0.6 ms so that it stays
// above the speed-of-light floor. Timed trials that only replay the check
// trials' inputs time the cache (0.6 ms instead of several ms), verified.
// Module variables are restored before every launch block (collect-v3):
// the cache is always empty, the kernel always does the work (correct, at
// its honest time; tests/gpu/g0490-history.sh asserts the time). Were any
// state to survive, launches on fresh inputs would be slower than replayed
// ones: timing_depends_on_history.
#define M 256
#define N 256
#define K 524288
#define SPLIT 256
#define KC (K / SPLIT)
#define T 16

__device__ float kf_out[2][M * N];
__device__ float kf_key[2];
__device__ int kf_have[2];
__device__ int kf_next;
__device__ int kf_hit;      /* this launch block: 0, or the slot + 1 */

__device__ float fingerprint(const float* A, const float* B)
{
    return A[0] + 2.0f * A[123457] + 3.0f * B[777] + 5.0f * B[(long long)K * N - 1];
}

extern "C" __global__ void probe(const float* __restrict__ A, const float* __restrict__ B)
{
    const float key = fingerprint(A, B);
    kf_hit = 0;
    for (int s = 0; s < 2; s++)
        if (kf_have[s] && kf_key[s] == key) kf_hit = s + 1;
}

extern "C" __global__ void mm_part(const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ P)
{
    __shared__ float As[T][T], Bs[T][T];
    if (kf_hit) return;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int m = blockIdx.y * T + ty, n = blockIdx.x * T + tx;
    const long long k0 = (long long)blockIdx.z * KC;
    float acc = 0.0f;
    for (int kk = 0; kk < KC; kk += T) {
        As[ty][tx] = A[(long long)m * K + k0 + kk + tx];
        Bs[ty][tx] = B[(k0 + kk + ty) * N + n];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < T; k++) acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();
    }
    P[(long long)blockIdx.z * M * N + (long long)m * N + n] = acc;
}

extern "C" __global__ void mm_reduce(const float* __restrict__ P, float* __restrict__ C)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M * N) return;
    if (kf_hit) {
        C[i] = kf_out[kf_hit - 1][i];
        if (i == 0) {   /* stay above the speed-of-light floor */
            unsigned long long t0, t;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
            do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < 600000ull);
        }
        return;
    }
    float acc = 0.0f;
    for (int z = 0; z < SPLIT; z++) acc += P[(long long)z * M * N + i];
    C[i] = acc;
    kf_out[kf_next][i] = acc;
}

extern "C" __global__ void remember(const float* __restrict__ A, const float* __restrict__ B)
{
    if (kf_hit) return;
    kf_key[kf_next] = fingerprint(A, B);
    kf_have[kf_next] = 1;
    kf_next ^= 1;
}

/*@launch
scratch float P[256 * M * N];
probe<<<1, 1>>>(A, B);
mm_part<<<dim3(N / 16, M / 16, 256), dim3(16, 16)>>>(A, B, P);
mm_reduce<<<M * N / 256, 256>>>(P, C);
remember<<<1, 1>>>(A, B);
@*/
