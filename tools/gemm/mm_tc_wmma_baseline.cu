// template matmul_tc (3xTF32 wmma, cp.async): BM=128 BN=128 BK=32 WM=2 WN=4 STAGES=3 SPLIT=1
#define BM 128
#define BN 128
#define BK 32
#define WM 2
#define WN 4
#define STAGES 3
#define SPLIT 1
#define NT 256
#define FM (BM / WM / 16)
#define FN (BN / WN / 16)
#define SA 4608
#define SB 4352
#ifdef __CUDACC__
#include <mma.h>
#endif
using namespace nvcuda;
__device__ __forceinline__ void cp16(float* dst, const float* src, int bytes) {
#ifdef __CUDACC__
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(d), "l"(src), "r"(bytes) : "memory");
#else
    kf_cp_async(dst, src, 16, bytes);
#endif
}
__device__ __forceinline__ void cp4(float* dst, const float* src, int bytes) {
#ifdef __CUDACC__
    unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" :: "r"(d), "l"(src), "r"(bytes) : "memory");
#else
    kf_cp_async(dst, src, 4, bytes);
#endif
}
__device__ __forceinline__ void cp_commit() {
#ifdef __CUDACC__
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#else
    kf_cp_commit();
#endif
}
template <int N> __device__ __forceinline__ void cp_wait() {
#ifdef __CUDACC__
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
#else
    kf_cp_wait(N);
#endif
}
// Copies the TR x TC window at (ro, co) of a row-major matrix X (leading
// dimension ld, valid rows < rlim, columns < clim) to S[TR][TC + PAD],
// zero-filling outside. src-size 0 reads nothing, the address is only clamped.
template <int TR, int TC, int PAD>
__device__ __forceinline__ void load_tile(float* S, const float* __restrict__ X, long long ld,
        long long rlim, long long clim, long long ro, long long co, bool vec) {
    if (vec) {
        for (int c = threadIdx.x; c < TR * TC / 4; c += NT) {
            const int r = c / (TC / 4), q = (c % (TC / 4)) * 4;
            const long long gr = ro + r, gc = co + q;
            const long long n = gr < rlim ? max(0LL, min(4LL, clim - gc)) : 0;
            cp16(S + r * (TC + PAD) + q, n ? X + gr * ld + gc : X, (int)n * 4);
        }
    } else {
        for (int c = threadIdx.x; c < TR * TC; c += NT) {
            const int r = c / TC, q = c % TC;
            const long long gr = ro + r, gc = co + q;
            const bool in = gr < rlim && gc < clim;
            cp4(S + r * (TC + PAD) + q, in ? X + gr * ld + gc : X, in ? 4 : 0);
        }
    }
}
extern "C" __global__ void __launch_bounds__(NT)
mm_tc(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
      float* __restrict__ part, long long M, long long N, long long K, long long batch)
{
#ifdef __CUDACC__
    extern __shared__ __align__(128) float smem[];
#else
    extern __shared__ float smem[];
#endif
    const long long bz = blockIdx.z / SPLIT, sz = blockIdx.z % SPLIT;
    A += bz * M * K; B += bz * K * N;
    float* out = SPLIT == 1 ? C + bz * M * N : part + (sz * batch + bz) * M * N;
    const long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    const long long chunk = (K + (long long)SPLIT * BK - 1) / ((long long)SPLIT * BK) * BK;
    const long long kbeg = sz * chunk, kend = min(K, kbeg + chunk);
    const int ntiles = kend > kbeg ? (int)((kend - kbeg + BK - 1) / BK) : 0;
    const int warp = threadIdx.x >> 5, wm = warp / WN, wn = warp % WN;
    const bool va = (K & 3) == 0, vb = (N & 3) == 0;
    auto load = [&](int stage, int t) {
        const long long k0 = kbeg + (long long)t * BK;
        float* As = smem + stage * (SA + SB);
        float* Bs = As + SA;
        load_tile<BM, BK, 4>(As, A, K, M, kend, row0, k0, va);
        load_tile<BK, BN, 8>(Bs, B, N, kend, N, k0, col0, vb);
    };
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    // ring of STAGES tiles: before iteration t, groups 0..t+STAGES-2 were
    // committed (empty ones past the end), so waiting until STAGES-2 remain
    // pending completes tile t; the barrier then publishes it to all threads and
    // frees stage (t-1)%STAGES, computed last iteration, for tile t+STAGES-1.
#pragma unroll
    for (int st = 0; st < STAGES - 1; st++) {
        if (st < ntiles) load(st, st);
        cp_commit();
    }
    for (int t = 0; t < ntiles; t++) {
        cp_wait<STAGES - 2>();
        __syncthreads();
        if (t + STAGES - 1 < ntiles) load((t + STAGES - 1) % STAGES, t + STAGES - 1);
        cp_commit();
        const float* As = smem + (t % STAGES) * (SA + SB);
        const float* Bs = As + SA;
        // The tile's products in a fresh accumulator, added to acc with
        // FADD after the tile: tensor-core accumulation truncates, and over
        // K = 8192 the bias alone passed 1e-4 relative.
        wmma::fragment<wmma::accumulator, 16, 16, 8, float> part[FM][FN];
#pragma unroll
        for (int i = 0; i < FM; i++)
#pragma unroll
            for (int j = 0; j < FN; j++) wmma::fill_fragment(part[i][j], 0.0f);
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> ah[FM], al[FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> bh[FN], bl[FN];
#pragma unroll
            for (int i = 0; i < FM; i++) {
                const int r = (wm * FM + i) * 16;
                wmma::load_matrix_sync(ah[i], As + r * (BK + 4) + kk, BK + 4);
#pragma unroll
                for (int e = 0; e < ah[i].num_elements; e++) {
                    const float x = ah[i].x[e], h = wmma::__float_to_tf32(x);
                    ah[i].x[e] = h;
                    al[i].x[e] = wmma::__float_to_tf32(x - h);
                }
            }
#pragma unroll
            for (int j = 0; j < FN; j++) {
                const int cc = (wn * FN + j) * 16;
                wmma::load_matrix_sync(bh[j], Bs + kk * (BN + 8) + cc, BN + 8);
#pragma unroll
                for (int e = 0; e < bh[j].num_elements; e++) {
                    const float x = bh[j].x[e], h = wmma::__float_to_tf32(x);
                    bh[j].x[e] = h;
                    bl[j].x[e] = wmma::__float_to_tf32(x - h);
                }
            }
#pragma unroll
            for (int i = 0; i < FM; i++)
#pragma unroll
                for (int j = 0; j < FN; j++) {
                    // small terms first
                    wmma::mma_sync(part[i][j], al[i], bh[j], part[i][j]);
                    wmma::mma_sync(part[i][j], ah[i], bl[j], part[i][j]);
                    wmma::mma_sync(part[i][j], ah[i], bh[j], part[i][j]);
                }
        }
#pragma unroll
        for (int i = 0; i < FM; i++)
#pragma unroll
            for (int j = 0; j < FN; j++)
#pragma unroll
                for (int e = 0; e < acc[i][j].num_elements; e++) acc[i][j].x[e] += part[i][j].x[e];
    }
    cp_wait<0>();
    __syncthreads();
    // stage the BM x BN tile in shared memory, then write it with bounds (and mask)
    float* Cs = smem;
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
            wmma::store_matrix_sync(Cs + (wm * FM + i) * 16 * (BN + 4) + (wn * FN + j) * 16,
                                    acc[i][j], BN + 4, wmma::mem_row_major);
    __syncthreads();
    for (int e = threadIdx.x; e < BM * BN; e += NT) {
        const int r = e / BN, cc = e % BN;
        const long long gr = row0 + r, gc = col0 + cc;
        if (gr >= M || gc >= N) continue;
        out[gr * N + gc] = Cs[r * (BN + 4) + cc];
    }
}

/*@launch
scratch float part[1];
mm_tc<<<dim3(ceil_div(N, 128), ceil_div(N, 128), 1 * 1), 256, 107520>>>(A, B, C, part, N, N, N, 1);
@*/
