// matmul_tc (kernels/builtin_mv.c): the 3xTF32 wmma GEMM mm_tc and the
// split-K sum tc_sum; operand layouts and fragment pointers come from C.
//@ head
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
//@ load_head
    auto load = [&](int stage, int t) {
        const long long k0 = kbeg + (long long)t * BK;
        float* As = smem + stage * (SA + SB);
        float* Bs = As + SA;
//@ ring
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
//@ frags
#pragma unroll
            for (int i = 0; i < FM; i++) {
                const int r = (wm * FM + i) * 16;
                wmma::load_matrix_sync(ah[i], @A_PTR@, @A_LD@);
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
                wmma::load_matrix_sync(bh[j], @B_PTR@, @B_LD@);
#pragma unroll
                for (int e = 0; e < bh[j].num_elements; e++) {
                    const float x = bh[j].x[e], h = wmma::__float_to_tf32(x);
                    bh[j].x[e] = h;
                    bl[j].x[e] = wmma::__float_to_tf32(x - h);
                }
            }
//@ store
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
//@ kernel_end
    }
}

//@ tc_sum
extern "C" __global__ void tc_sum(const float* __restrict__ part, float* __restrict__ C,
                                  long long total)
{
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    double v = 0.0;
#pragma unroll 8
    for (int z = 0; z < SPLIT; z++) v += (double)part[z * total + i];
    C[i] = (float)v;
}

