// The conv epilogue kernels (kernels/emit/builtin_conv_epi.c): helpers (their
// cp.async wrappers are tc_cp_async.cuh's cp_async), the
// weight repack, valid taps, set-up, gathers, main loop and the store with
// the epilogue's @CODE@; the 3xTF32 k-step comes from tf32x3.cuh.
//@ helpers
#ifndef KF_CEPI_HELPERS
#define KF_CEPI_HELPERS
//@ helpers_end
__device__ __forceinline__ void cepi_wait_all() {
#ifdef __CUDACC__
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#else
    kf_cp_wait(0);
#endif
}
#endif
//@ repack
// weights to [G][tap][C_out/G][C_in/G]
extern "C" __global__ void @NAME@_wrepack(const float* __restrict__ w, float* __restrict__ wp,
    long long CI, long long CO)
{
    constexpr int T = @TAPS@, G = @GROUPS@, TR = @TRANSPOSED@;
    const long long cpg = CI / G, opg = CO / G;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= G * T * opg * cpg) return;
    const long long c = i % cpg, oc = (i / cpg) % opg, t = (i / (cpg * opg)) % T;
    const long long gi = i / (cpg * opg * T);
    wp[i] = TR ? w[((gi * cpg + c) * opg + oc) * T + t] : w[((gi * opg + oc) * cpg + c) * T + t];
}

//@ taps
    // valid taps per axis: all (forward), or those whose input index is whole
    int nvd = 0, nvh = 0, nvw = 0;
    for (int k = 0; k < KD; k++) nvd += !TR || (fd + PD - k * DD) % SD == 0;
    for (int k = 0; k < KH; k++) nvh += !TR || (fh + PH - k * DH) % SH == 0;
    for (int k = 0; k < KW; k++) nvw += !TR || (fw + PW - k * DW) % SW == 0;
    const int ntv = nvd * nvh * nvw;
    for (int i = tid; i < TT; i += NT) {
        int t = -1, dd = -0x3fffffff, dh = 0, dw = 0;
        if (i < ntv) {
            int jd = i / (nvh * nvw), jh = i / nvw % nvh, jw = i % nvw, kd = 0, kh = 0, kw = 0;
            for (int k = 0; k < KD; k++) if (!TR || (fd + PD - k * DD) % SD == 0) { if (jd-- == 0) kd = k; }
            for (int k = 0; k < KH; k++) if (!TR || (fh + PH - k * DH) % SH == 0) { if (jh-- == 0) kh = k; }
            for (int k = 0; k < KW; k++) if (!TR || (fw + PW - k * DW) % SW == 0) { if (jw-- == 0) kw = k; }
            t = (kd * KH + kh) * KW + kw;
            dd = TR ? (fd + PD - kd * DD) / SD : kd * DD - PD;
            dh = TR ? (fh + PH - kh * DH) / SH : kh * DH - PH;
            dw = TR ? (fw + PW - kw * DW) / SW : kw * DW - PW;
        }
        tab_t[i] = t; tab_d[i] = dd; tab_h[i] = dh; tab_w[i] = dw;
        tab_o[i] = i < ntv ? (int)(((long long)dd * IH + dh) * IW + dw) : 0;
    }
    const int cch = (cpg + CB - 1) / CB, ntiles = (ntv + TPT - 1) / TPT * cch;
//@ setup_head
#ifdef __CUDACC__
    extern __shared__ __align__(128) float smem[];
#else
    extern __shared__ float smem[];
#endif
    __shared__ int tab_t[TT], tab_d[TT], tab_h[TT], tab_w[TT], tab_o[TT];
    __shared__ long long pix_s[BM];
    __shared__ int pix_n[BM];
    const int tid = threadIdx.x, warp = tid >> 5, wm = warp / WN, wn = warp % WN;
    const int ph = blockIdx.z;
    const int fw = TR ? ph % SW : 0, fh = TR ? ph / SW % SH : 0, fd = TR ? ph / (SW * SH) : 0;
    const long long QD = (OD + FD - 1) / FD, QH = (OH + FH - 1) / FH, QW = (OW + FW - 1) / FW;
    const long long P = OD * OH * OW, IS = ID * IH * IW, M = NB * QD * QH * QW;
    const int cpg = (int)(CI / G), opg = (int)(CO / G), nbt = (opg + BN - 1) / BN;
    const int g = blockIdx.y / nbt, co0 = blockIdx.y % nbt * BN;
    const long long m0 = (long long)blockIdx.x * BM;
//@ setup_pixels
    // this thread's pixels: input base per axis (forward o * S, transposed j)
    const int am = tid % BM, ak = tid / BM;
    bool aok[PXT];
    int bd[PXT], bh[PXT], bw[PXT];
    long long xo[PXT];
#pragma unroll
    for (int r = 0; r < PXT; r++) {
        const long long p = m0 + am + r * NT;
        const long long jw = p % QW, q1 = p / QW, jh = q1 % QH, q2 = q1 / QH, jd = q2 % QD, nb = q2 / QD;
        const long long od = fd + jd * FD, oh = fh + jh * FH, ow = fw + jw * FW;
        aok[r] = p < M && od < OD && oh < OH && ow < OW;
        bd[r] = (int)(TR ? jd : od * SD); bh[r] = (int)(TR ? jh : oh * SH); bw[r] = (int)(TR ? jw : ow * SW);
        xo[r] = aok[r] ? (nb * CI + (long long)g * cpg) * IS + ((long long)bd[r] * IH + bh[r]) * IW + bw[r] : 0;
        if (ak == 0) {
            pix_n[am + r * NT] = aok[r] ? (int)nb : -1;
            pix_s[am + r * NT] = (od * OH + oh) * OW + ow;
        }
    }
    __syncthreads();
//@ loaders
    float ra[PXT][KQ];
    auto gather = [&](int tile) {
        const int tg = tile / cch, c0 = (tile - tg * cch) * CB;
#pragma unroll
        for (int q = 0; q < KQ; q++) {
            const int kk = ak + q * KST, ti = tg * TPT + kk / CB, c = c0 + kk % CB;
            const int dd = tab_d[ti], dh = tab_h[ti], dw = tab_w[ti];
            const long long off = (long long)c * IS + tab_o[ti];
#pragma unroll
            for (int r = 0; r < PXT; r++) {
                const int id = bd[r] + dd, ih = bh[r] + dh, iw = bw[r] + dw;
                float v = 0.0f;
                if (aok[r] && c < cpg && id >= 0 && id < ID && ih >= 0 && ih < IH && iw >= 0 && iw < IW)
                    v = __ldg(x + xo[r] + off);
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
    const bool vb = (cpg & 3) == 0; // 16-byte weight rows
    auto load_b = [&](float* Bs, int tile) {
        const int tg = tile / cch, c0 = (tile - tg * cch) * CB;
        const int step = vb ? 4 : 1;
        for (int e = tid * step; e < BN * BK; e += NT * step) {
            const int nn = e / BK, kk = e % BK, t = tab_t[tg * TPT + kk / CB], c = c0 + kk % CB;
            const int oc = co0 + nn;
            const int cnt = t >= 0 && oc < opg ? max(0, min(step, cpg - c)) : 0;
            const float* src = cnt ? wp + (((long long)g * T + t) * opg + oc) * cpg + c : wp;
            if (vb) cepi_cp16(Bs + nn * (BK + 4) + kk, src, cnt * 4);
            else cepi_cp4(Bs + nn * (BK + 4) + kk, src, cnt * 4);
        }
    };
//@ main_loop
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) wmma::fill_fragment(acc[i][j], 0.0f);
    if (ntiles > 0) {
        load_b(smem + SA, 0);
        gather(0);
    }
    cepi_commit();
    // Stage t & 1 holds tile t. Its As was last read at t - 2 and the
    // barrier of t - 1 separates that; the next Bs and the gather are
    // issued after this tile's barrier, when t - 1's reads are done.
    for (int t = 0; t < ntiles; t++) {
        float* As = smem + (t & 1) * (SA + SB);
        const float* Bs = As + SA;
        store_a(As);
        cepi_wait_all();
        __syncthreads();
        if (t + 1 < ntiles) {
            load_b(smem + ((t + 1) & 1) * (SA + SB) + SA, t + 1);
            gather(t + 1);
        }
        cepi_commit();
//@ store
    }
    __syncthreads();
    // stage C as Cs[n][m], then store along output positions
    float* Cs = smem;
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
            wmma::store_matrix_sync(Cs + (wn * FN + j) * 16 * (BM + 4) + (wm * FM + i) * 16,
                                    acc[i][j], BM + 4, wmma::mem_col_major);
    __syncthreads();
    for (int q = tid; q < BM * BN; q += NT) {
        const int jj = q / BM, ii = q % BM, oc = co0 + jj;
        if (pix_n[ii] < 0 || oc >= opg) continue;
        const long long n = pix_n[ii], c = (long long)g * opg + oc, s = pix_s[ii];
        float v = Cs[jj * (BM + 4) + ii];
        {
@CODE@@NL@        }
        y[(n * CO + c) * P + s] = v;
    }
}

