// The conv epilogue kernels on mma.sync (kernels/emit/builtin_conv_epi_mma.c):
// weight repack, block set-up, loaders, main loop and stores.
//@ repack
// weights to [G][tap][C_in/G][C_out/G]
extern "C" __global__ void @NAME@_wrepack(const float* __restrict__ w, float* __restrict__ wp,
    long long CI, long long CO)
{
    constexpr int T = @TAPS@, G = @GROUPS@, TR = @TRANSPOSED@;
    const long long cpg = CI / G, opg = CO / G;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= G * T * opg * cpg) return;
    const long long oc = i % opg, c = (i / opg) % cpg, t = (i / (opg * cpg)) % T;
    const long long gi = i / (opg * cpg * T);
    wp[i] = TR ? w[((gi * cpg + c) * opg + oc) * T + t] : w[((gi * opg + oc) * cpg + c) * T + t];
}

//@ block_head
#ifdef __CUDACC__
    extern __shared__ __align__(128) float smem[];
#else
    extern __shared__ float smem[];
#endif
    __shared__ int tab_t[TT], tab_d[TT], tab_h[TT], tab_w[TT], tab_o[TT];
    __shared__ long long pix_s[BM];
    __shared__ int pix_n[BM];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
//@ block_phase
    const int fw = TR ? ph % SW : 0, fh = TR ? ph / SW % SH : 0, fd = TR ? ph / (SW * SH) : 0;
    const long long QD = (OD + FD - 1) / FD, QH = (OH + FH - 1) / FH, QW = (OW + FW - 1) / FW;
    const long long P = OD * OH * OW, IS = ID * IH * IW, M = NB * QD * QH * QW;
    const int cpg = (int)(CI / G), opg = (int)(CO / G), nbt = (opg + BN - 1) / BN;
    const int grp = blockIdx.y / nbt, co0 = blockIdx.y % nbt * BN;
//@ setup
    // gather rows r = (lane & 7) + 8 (warp + NW p), k = 4 j + kq: per copy a warp
    // writes 8 rows x 4 k; r & 7 = lane & 7 gives the row's A swizzle
    const int kq = lane >> 3, aswz = ((lane & 1) << 2) | ((lane >> 1) & 3);
    bool aok[PX];
    int bd[PX], bh[PX], bw[PX];
    long long xo[PX];
    unsigned arow[PX];
#pragma unroll
    for (int p = 0; p < PX; p++) {
        const int r = (lane & 7) + 8 * (warp + NW * p);
        const long long q = m0 + r;
        const long long jw = q % QW, q1 = q / QW, jh = q1 % QH, q2 = q1 / QH, jd = q2 % QD, nb = q2 / QD;
        const long long od = fd + jd * FD, oh = fh + jh * FH, ow = fw + jw * FW;
        aok[p] = q < M && od < OD && oh < OH && ow < OW;
        bd[p] = (int)(TR ? jd : od * SD); bh[p] = (int)(TR ? jh : oh * SH); bw[p] = (int)(TR ? jw : ow * SW);
        xo[p] = aok[p] ? (nb * CI + (long long)grp * cpg) * IS + ((long long)bd[p] * IH + bh[p]) * IW + bw[p] : 0;
        arow[p] = (unsigned)r * BK * 4;
        if (kq == 0) {
            pix_n[r] = aok[p] ? (int)nb : -1;
            pix_s[r] = (od * OH + oh) * OW + ow;
        }
    }
    __syncthreads();
//@ load_b
        if (vb) {
#pragma unroll
            for (int e = 0; e < BK * (BN / 4) / NT; e++) {
                const int bi = tid + e * NT, r = bi / (BN / 4), q = bi % (BN / 4);
                const int tp = tab_t[tg * TPT + r / CB], c = c0 + r % CB, oc = co0 + q * 4;
                const bool in = tp >= 0 && c < cpg && oc < opg;
                kfg_cp16(sb + (@B_VEC@) * 4,
                         in ? wp + ((((@IX@)grp * T + tp) * cpg + c) * opg + oc) : wp, in);
            }
        } else {
#pragma unroll 2
            for (int e = 0; e < BK * BN / NT; e++) {
                const int bi = tid + e * NT, r = bi / BN, cc = bi % BN;
                const int tp = tab_t[tg * TPT + r / CB], c = c0 + r % CB, oc = co0 + cc;
                const bool in = tp >= 0 && c < cpg && oc < opg;
                kfg_cp4(sb + (@B_ONE@) * 4,
                        in ? wp + ((((@IX@)grp * T + tp) * cpg + c) * opg + oc) : wp, in);
            }
        }
//@ loader
    const bool vb = (opg & 3) == 0; // 16-byte weight rows
    auto load = [&](int stage, int tile) {
        const int tg = tile / cch, c0 = (tile - tg * cch) * CB;
        const unsigned sa = sbase + stage * (SA + SB) * 4, sb = sa + SA * 4;
#pragma unroll
        for (int j = 0; j < BK / 4; j++) {
            const int kk = 4 * j + kq, ti = tg * TPT + kk / CB, c = c0 + kk % CB;
            const int dd = tab_d[ti], dh = tab_h[ti], dw = tab_w[ti];
            const long long off = (long long)c * IS + tab_o[ti];
            const unsigned col = ((unsigned)((j ^ aswz) << 2) + kq) * 4;
#pragma unroll
            for (int p = 0; p < PX; p++) {
                const int id = bd[p] + dd, ih = bh[p] + dh, iw = bw[p] + dw;
                const bool in = aok[p] && c < cpg && id >= 0 && id < ID && ih >= 0 && ih < IH && iw >= 0 && iw < IW;
                kfg_cp4(sa + arow[p] + col, in ? x + xo[p] + off : x, in);
            }
        }
//@ main_head
    {
    float acc[MT][NQ * 4][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NQ * 4; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
#pragma unroll
    for (int st = 0; st < STAGES - 1; st++) {
        if (st < ntiles) load(st, st);
        kfg_commit();
    }
    const int g = lane >> 2, t = lane & 3;
    const int wm0 = (warp / WN) * (BM / WM), wn0 = (warp % WN) * (BN / WN);
    unsigned a_off[MT], b_off[NQ];   // fragment addresses (bytes, within a stage)
#pragma unroll
    for (int i = 0; i < MT; i++) a_off[i] = (wm0 + 16 * i + g) * BK * 4;
#pragma unroll
    for (int q = 0; q < NQ; q++) b_off[q] = (4 * t * BN + ((((wn0 >> 2) + 8 * q + g) ^ (t << 1)) << 2)) * 4;
    for (int kt = 0; kt < ntiles; kt++) {
        kfg_wait<STAGES - 2>();
        __syncthreads();
        if (kt + STAGES - 1 < ntiles) load((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
        kfg_commit();
        const unsigned sa = sbase + (kt % STAGES) * (SA + SB) * 4, sb = sa + SA * 4;
//@ main_tail
    }
    kfg_wait<0>();
    __syncthreads();
    // thread (g, t): rows g, g + 8 of each m16 tile; columns 8t + jj (acc[..][2rr])
    // and 8t + 4 + jj (acc[..][2rr + 1]) of each 32-wide group (gemm_epi_mma's store)
    float* Cs = smem;
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int rr = 0; rr < 2; rr++)
#pragma unroll
            for (int qq = 0; qq < NQ; qq++)
#pragma unroll
                for (int jj = 0; jj < 4; jj++) {
                    const int m = wm0 + 16 * i + g + 8 * rr, n = wn0 + 32 * qq + 8 * t + jj;
                    Cs[n * CS + m] = acc[i][4 * qq + jj][2 * rr];
                    Cs[(n + 4) * CS + m] = acc[i][4 * qq + jj][2 * rr + 1];
                }
    }
    __syncthreads();
//@ store_fixed
    {
    const int ii = tid % BM;
    if (pix_n[ii] >= 0) {
        const long long n = pix_n[ii], s = pix_s[ii];
        float* const yp = y + n * CO * P + s;
#pragma unroll 4
        for (int jj = tid / BM; jj < BN; jj += NT / BM) {
            const int oc = co0 + jj;
            if (oc >= opg) break;
            const long long c = (long long)grp * opg + oc;
            float v = smem[jj * CS + ii];
            {
@CODE@@NL@            }
            yp[c * P] = v;
        }
    }
    }
}

//@ store
    for (int q = tid; q < BM * BN; q += NT) {
        const int jj = q / BM, ii = q % BM, oc = co0 + jj;
        if (pix_n[ii] < 0 || oc >= opg) continue;
        const long long n = pix_n[ii], c = (long long)grp * opg + oc, s = pix_s[ii];
        float v = smem[jj * CS + ii];
        {
@CODE@@NL@        }
        y[(n * CO + c) * P + s] = v;
    }
}

