// conv_tc (kernels/builtin_convtc.c): the 3xTF32 implicit-GEMM
// convolution; its k-step comes from tf32x3.cuh, the tile loader from
// tc_cp_async.cuh, the gather's index arithmetic from C.
//@ pixels
    const int am = tid % BM, ak = tid / BM;
    bool aokv[PXT];
    int id0v[PXT], ih0v[PXT], iw0v[PXT];
#pragma unroll
    for (int r = 0; r < PXT; r++) {
        const long long ap = p0 + am + r * NT;
//@ gather_head
        aokv[r] = aok; id0v[r] = id0; ih0v[r] = ih0; iw0v[r] = iw0;
    }
    float ra[PXT][KQ];
    auto gather = [&](int kb) {
#pragma unroll
        for (int r = 0; r < PXT; r++) {
            const bool aok = aokv[r];
            const int id0 = id0v[r], ih0 = ih0v[r], iw0 = iw0v[r];
#pragma unroll
            for (int q = 0; q < KQ; q++) {
                const int kk = ak + q * KST;
//@ gather_tail
                ra[r][q] = v;
            }
        }
    };
    auto store_a = [&](float* As) {
#pragma unroll
        for (int r = 0; r < PXT; r++)
#pragma unroll
            for (int q = 0; q < KQ; q++) As[(ak + q * KST) * (BM + 8) + am + r * NT] = ra[r][q];
    };
    auto load_b = [&](float* Bs, int tile) {
        load_tile<BN, BK, 4>(Bs, w, K, CO, K, co0, (long long)tile * BK, vb);
    };
//@ kernel_head
#ifdef __CUDACC__
    extern __shared__ __align__(128) float smem[];
#else
    extern __shared__ float smem[];
#endif
    const long long P = OD * OH * OW, IS = ID * IH * IW;
    const int K = (int)CI * KT, ntiles = (K + BK - 1) / BK;
    const long long n = blockIdx.z, p0 = (long long)blockIdx.x * BM;
    const int co0 = blockIdx.y * BN, tid = threadIdx.x;
    const int warp = tid >> 5, wm = warp / WN, wn = warp % WN;
    const float* xn = x + n * CI * IS;
    const bool vb = (K & 3) == 0; // 16-byte weight rows
//@ main_loop
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    load_b(smem + SA, 0);
    cp_commit();
    gather(0);
    // Stage t & 1 holds tile t. Its As was last read at t - 2 and the
    // barrier of t - 1 separates that; the next Bs and the gather are
    // issued after this tile's barrier, when t - 1's reads are done.
    for (int t = 0; t < ntiles; t++) {
        float* As = smem + (t & 1) * (SA + SB);
        const float* Bs = As + SA;
        store_a(As);
        cp_wait<0>();
        __syncthreads();
        if (t + 1 < ntiles) {
            load_b(smem + ((t + 1) & 1) * (SA + SB) + SA, t + 1);
            gather((t + 1) * BK);
        }
        cp_commit();
//@ store
    }
    __syncthreads();
    // stage C as Cs[n][m], then store along output pixels
    float* Cs = smem;
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
            wmma::store_matrix_sync(Cs + (wn * FN + j) * 16 * (BM + 4) + (wm * FM + i) * 16,
                                    acc[i][j], BM + 4, wmma::mem_col_major);
    __syncthreads();
    for (int e = tid; e < BM * BN; e += NT) {
        const int j = e / BM, i = e % BM, co = co0 + j;
        const long long p = p0 + i;
        if (p < P && co < CO) y[(n * CO + co) * P + p] = Cs[j * (BM + 4) + i]@BIAS@;
    }
}

