// problem: 006
// expect: incorrect guard_overwritten
// 31's output cache, kept where no variable is: in the slack of a scratch
// allocation, past its 4 KiB trailing guard (a 1 MiB buffer took 1 MiB +
// 8 KiB of a 2 MiB page; the rest was mapped, never filled nor counted).
// Buffers now take whole 2 MiB pages and their trailing guard runs to the
// end: the cache is in the guard, counted after every checked launch.
#define M 256
#define N 256
#define K 524288
#define SPLIT 256
#define KC (K / SPLIT)
#define T 16

/* The slack: past the buffer's data (1 MiB), its guard (4 KiB) and 256 B. */
struct cache { float key[2]; int have[2]; int next, hit; float out[2][M * N]; };
__device__ struct cache* slack(float* S) { return (struct cache*)(S + (1 << 18) + 1024 + 64); }
#define kf_out (c->out)
#define kf_key (c->key)
#define kf_have (c->have)
#define kf_next (c->next & 1) /* memory it never wrote may hold anything */
#define kf_next_raw (c->next)
#define kf_hit (c->hit)

__device__ float fingerprint(const float* A, const float* B)
{
    return A[0] + 2.0f * A[123457] + 3.0f * B[777] + 5.0f * B[(long long)K * N - 1];
}

extern "C" __global__ void probe(const float* __restrict__ A, const float* __restrict__ B, float* S)
{
    struct cache* c = slack(S);
    const float key = fingerprint(A, B);
    kf_hit = 0;
    for (int s = 0; s < 2; s++)
        if (kf_have[s] == 1 && kf_key[s] == key) kf_hit = s + 1;
}

extern "C" __global__ void mm_part(const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ P, float* S)
{
    struct cache* c = slack(S);
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

extern "C" __global__ void mm_reduce(const float* __restrict__ P, float* __restrict__ C, float* S)
{
    struct cache* c = slack(S);
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

extern "C" __global__ void remember(const float* __restrict__ A, const float* __restrict__ B, float* S)
{
    struct cache* c = slack(S);
    if (kf_hit) return;
    kf_key[kf_next] = fingerprint(A, B);
    kf_have[kf_next] = 1;
    kf_next_raw = kf_next ^ 1;
}

/*@launch
scratch float P[256 * M * N];
scratch float S[262144];
probe<<<1, 1>>>(A, B, S);
mm_part<<<dim3(N / 16, M / 16, 256), dim3(16, 16)>>>(A, B, P, S);
mm_reduce<<<M * N / 256, 256>>>(P, C, S);
remember<<<1, 1>>>(A, B, S);
@*/
