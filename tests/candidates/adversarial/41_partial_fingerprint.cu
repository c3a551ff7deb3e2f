// problem: 004
// expect: correct
// Keeps its last output and returns it when the inputs look the same, by a
// fingerprint of A alone (B is never looked at). Every check trial has its
// own seed and the timed trials alternate two, so A always changes and the
// kernel computes; the repeat runs are identical inputs (the kept output is
// right). A sensitivity trial runs it on a base draw, then with B alone
// redrawn: it would return the base output. But its module variables are
// restored before every launch block (docs/engine.md): the kept output never
// survives to the next launch, so it always computes, and is correct (H100:
// g0465, the verifier's protocol). Were the restore gone, the sensitivity
// trial would fail it (insensitive_to_input).
#define M_ 2048
__device__ float kf_keep[M_];
__device__ float kf_fp[2];
__device__ int kf_have;

extern "C" __global__ void mv_memo(const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ C, long long K)
{
    __shared__ float part[256];
    const int row = blockIdx.x;
    const bool same = kf_have && kf_fp[0] == A[0] && kf_fp[1] == A[1];
    if (same) {
        if (threadIdx.x == 0)
            C[row] = kf_keep[row];
        return;
    }
    const float* a = A + (long long)row * K;
    float s = 0.0f;
    for (long long k = threadIdx.x; k < K; k += 256)
        s += a[k] * B[k];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int o = 128; o > 0; o >>= 1) {
        if (threadIdx.x < o)
            part[threadIdx.x] += part[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        C[row] = part[0];
        kf_keep[row] = part[0];
    }
}

extern "C" __global__ void remember(const float* __restrict__ A)
{
    kf_fp[0] = A[0];
    kf_fp[1] = A[1];
    kf_have = 1;
}

/*@launch
mv_memo<<<M, 256>>>(A, B, C, K);
remember<<<1, 1>>>(A);
@*/
