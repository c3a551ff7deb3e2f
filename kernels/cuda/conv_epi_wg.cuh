// The conv epilogue kernels on wgmma (kernels/emit/builtin_conv_epi_wg.c):
// input transforms, row set-up, loader and main loop.
//@ xform_head
// x to [N][D][H][W][G][C_in/G padded to 4]@PS_NOTE@
extern "C" __global__ void @NAME@_xform(const float* __restrict__ x, float* __restrict__ xt,
    long long NB, long long CI, long long ID, long long IH, long long IW)
{
    constexpr int G = @GROUPS@, PS = @PS@;
    const long long IS = ID * IH * IW;
    const int cpg = (int)(CI / G), cpg4 = (cpg + 3) & ~3, CX = G * cpg4;
    const long long XS = NB * IS * CX;   // PS: x - trunc(x) at xt + XS
//@ xform_flat
    // block 256: a thread per (image, position, float4 of channels), positions fastest
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= NB * IS * (CX / 4)) return;
    const long long sp = i % IS, q = i / IS, nb = q / (CX / 4);
    const int ch = (int)(q % (CX / 4)) * 4, c = ch % cpg4;
    const float* p = x + (nb * CI + (long long)(ch / cpg4) * cpg + c) * IS + sp;
    const float4 v = make_float4(p[0], c + 1 < cpg ? p[IS] : 0.0f,
        c + 2 < cpg ? p[2 * IS] : 0.0f, c + 3 < cpg ? p[3 * IS] : 0.0f);
    const long long o = (nb * IS + sp) * CX + ch;
    *(float4*)(xt + o) = v;
    if (PS)
        *(float4*)(xt + XS + o) = make_float4(v.x - kfg_trunc(v.x), v.y - kfg_trunc(v.y),
            v.z - kfg_trunc(v.z), v.w - kfg_trunc(v.w));
}

//@ xform_transpose
    // block (32, 8), grid (positions / 32, CX / 32, N)
    __shared__ float tile[32][33];
    const long long s0 = (long long)blockIdx.x * 32, nb = blockIdx.z;
    const int ch0 = blockIdx.y * 32, tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int ch = ch0 + ty + 8 * i, c = ch % cpg4;
        const long long sp = s0 + tx;
        float v = 0.0f;
        if (ch < CX && c < cpg && sp < IS) v = x[(nb * CI + (long long)(ch / cpg4) * cpg + c) * IS + sp];
        tile[ty + 8 * i][tx] = v;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const long long sp = s0 + ty + 8 * i;
        if (sp < IS && ch0 + tx < CX) {
            const long long o = (nb * IS + sp) * CX + ch0 + tx;
            const float v = tile[tx][ty + 8 * i];
            xt[o] = v;
            if (PS) xt[XS + o] = v - kfg_trunc(v);
        }
    }
}

//@ rows
    constexpr int CPR = BM / 128, LPR = 8 / CPR, RPP = NT / LPR, RX = BM / RPP;
    const int cpg4 = (cpg + 3) & ~3, aq = tid % LPR, ar = tid / LPR;
    const long long CX = (long long)G * cpg4;   // floats per input position
    const bool q32 = M + BM <= 0x7fffffffLL;   // rows split in 32 bits
    int bd[RX], bh[RX], bw[RX];
    long long xo[RX];
#pragma unroll
    for (int e = 0; e < RX; e++) {
        const int r = ar + RPP * e;
        const long long q = m0 + r;
        long long jw, jh, jd, nb;   // in 32 bits where they fit
        if (q32) { const unsigned u = (unsigned)q / (unsigned)QW, v = u / (unsigned)QH, w = v / (unsigned)QD;
                   jw = (unsigned)q - u * (unsigned)QW; jh = u - v * (unsigned)QH; jd = v - w * (unsigned)QD; nb = w; }
        else { const long long u = q / QW, v = u / QH; jw = q - u * QW; jh = u - v * QH; nb = v / QD; jd = v - nb * QD; }
        const long long od = fd + jd * FD, oh = fh + jh * FH, ow = fw + jw * FW;
        const bool ok = q < M && od < OD && oh < OH && ow < OW;
        bd[e] = ok ? (int)(TR ? jd : od * SD) : -0x3fffffff;
        bh[e] = (int)(TR ? jh : oh * SH); bw[e] = (int)(TR ? jw : ow * SW);
        xo[e] = ok ? (((nb * ID + bd[e]) * IH + bh[e]) * IW + bw[e]) * CX + (long long)grp * cpg4 : 0;
        if (aq == 0) {
            pix_n[r] = ok ? (int)nb : -1;
            pix_s[r] = (od * OH + oh) * OW + ow;
        }
    }
    __syncthreads();
//@ loader
    const bool vb = (opg & 3) == 0; // 16-byte weight rows
    const float* xsm = x + (PS ? NB * IS * CX : 0);   // the copy's small parts (PS)
    auto load = [&](int stage, int tile) {
        const int tg = tile / cch, c0 = (tile - tg * cch) * CB;
        const unsigned sa = sbase + stage * STAGE_BYTES, sb = sa + SB_OFF;
#pragma unroll
        for (int u = 0; u < CPR; u++) {
            const int qc = aq + LPR * u, ti = tg * TPT + 4 * qc / CB, c = c0 + 4 * qc % CB;
            const int dd = tab_d[ti], dh = tab_h[ti], dw = tab_w[ti];
            const long long off = (long long)tab_o[ti] * CX + c;
            const unsigned col = (unsigned)((qc ^ (ar & 7)) << 4);
#pragma unroll
            for (int e = 0; e < RX; e++) {
                const bool in = c < cpg4 && (unsigned)(bd[e] + dd) < (unsigned)ID &&
                                (unsigned)(bh[e] + dh) < (unsigned)IH && (unsigned)(bw[e] + dw) < (unsigned)IW;
                kfg_cp16(sa + (ar + RPP * e) * 128 + col, in ? x + xo[e] + off : x, in);
                if (PS) kfg_cp16(sa + SA_BYTES + (ar + RPP * e) * 128 + col, in ? xsm + xo[e] + off : x, in);
            }
        }
//@ main_head
    auto load_tile = [&](int kt) { load(kt % STAGES, kt); };
    {
    const int ktiles = ntiles, wg = warp >> 2, ww = warp & 3, g = lane >> 2, t = lane & 3;
    // this warpgroup's weight rows: operand rows 16ww+g, 16ww+g+8 are channels 2g, 2g+1
    const int nn = (MW == 1 ? 64 * wg : 0) + 16 * ww + 2 * g, mb = MW == 2 ? 128 * wg : 0;
    auto load_b = [&](float2 (&nb)[4][2], int kt) { kfg_load_b_kn<BSTR>(nb, stage_a(kt) + SB_OFF + nn * 4, t); };
//@ main_tail
    kfg_wait<0>();
    __syncthreads();
    // acc[4j + h]: position mb + 2t + 8j + h, channel nn; acc[4j + 2 + h]: channel nn + 1
    float* Cs = smem;
#pragma unroll
    for (int j = 0; j < 16; j++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = mb + 2 * t + 8 * j + h;
            Cs[nn * CS + m] = acc[4 * j + h];
            Cs[(nn + 1) * CS + m] = acc[4 * j + 2 + h];
        }
    }
    __syncthreads();
