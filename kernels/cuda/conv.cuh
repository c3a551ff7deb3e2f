// conv, conv_dw, conv_igemm (kernels/builtin_conv.c): the direct convolution
// kernel, its shared-memory tile load and store, the implicit-GEMM head and
// store, the depthwise kernel; tile sizes and the bias term are placeholders.
//@ direct_kernel
    const int COB = @COB@, PX = @PX@, NT = @NT@, CCH = @CCH@;
    __shared__ float ws[COB * CCH * KT];
    const long long P = OD * OH * OW, IS = ID * IH * IW;
    const int cpg = (int)(CI / G), copg = (int)(CO / G);
    const long long n = blockIdx.z;
    const int co0 = blockIdx.y * COB;
    const long long pb = (long long)blockIdx.x * (NT * PX) + threadIdx.x;
    float acc[COB][PX];
    int od[PX], oh[PX], ow[PX];
#pragma unroll
    for (int q = 0; q < PX; q++) {
        long long p = pb + (long long)q * NT;
        if (p >= P) p = P - 1; /* computed, never stored */
        ow[q] = (int)(p % OW); oh[q] = (int)((p / OW) % OH); od[q] = (int)(p / (OW * OH));
#pragma unroll
        for (int j = 0; j < COB; j++) acc[j][q] = 0.0f;
    }
    for (int c0 = 0; c0 < cpg; c0 += CCH) {
        const int cn = min(CCH, cpg - c0);
        __syncthreads();
        for (int i = threadIdx.x; i < COB * CCH * KT; i += NT) {
            const int j = i / (CCH * KT), c = (i / KT) % CCH, t = i % KT;
            const int co = co0 + j;
            ws[i] = (co < CO && c < cn) ? w[((long long)co * cpg + c0 + c) * KT + t] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < COB; j++) {
            const int co = co0 + j;
            if (co >= CO) break;
            const int ci0 = (co / copg) * cpg + c0;
            for (int c = 0; c < cn; c++) {
                const float* xp = x + (n * CI + ci0 + c) * IS;
                const float* wp = ws + (j * CCH + c) * KT;
#pragma unroll
                for (int q = 0; q < PX; q++) {
                    float a = acc[j][q];
                    for (int kd = 0; kd < KD; kd++) {
                        const int id = od[q] * SD - PD + kd * DD;
                        if (id < 0 || id >= ID) continue;
                        for (int kh = 0; kh < KH; kh++) {
                            const int ih = oh[q] * SH - PH + kh * DH;
                            if (ih < 0 || ih >= IH) continue;
                            const float* row = xp + ((long long)id * IH + ih) * IW;
                            const float* wr = wp + (kd * KH + kh) * KW;
#pragma unroll
                            for (int kw = 0; kw < KW; kw++) {
                                const int iw = ow[q] * SW - PW + kw * DW;
                                if (iw >= 0 && iw < IW) a = fmaf(__ldg(row + iw), wr[kw], a);
                            }
                        }
                    }
                    acc[j][q] = a;
                }
            }
        }
    }
#pragma unroll
    for (int j = 0; j < COB; j++) {
        const int co = co0 + j;
        if (co >= CO) break;
        const float b = @BIAS@;
#pragma unroll
        for (int q = 0; q < PX; q++) {
            const long long p = pb + (long long)q * NT;
            if (p < P) y[(n * CO + co) * P + p] = acc[j][q] + b;
        }
    }
}

//@ tile_load_tail
                ra[q] = v;
            }
#pragma unroll
            for (int q = 0; q < LB; q++) {
                const int i = tid + q * NT, kk = i % BK, nn = i / BK, co = co0 + nn, k = kb + kk;
                rb[q] = (i < BN * BK && co < CO && k < K) ? __ldg(w + (long long)co * K + k) : 0.0f;
            }
        }
//@ tile_store
#pragma unroll
        for (int q = 0; q < LA; q++) {
            const int i = tid + q * NT;
            if (i < BM * BK) As[i / BM][i % BM] = ra[q];
        }
#pragma unroll
        for (int q = 0; q < LB; q++) {
            const int i = tid + q * NT;
            if (i < BN * BK) Bs[i % BK][i / BK] = rb[q];
        }
        __syncthreads();
//@ igemm_head
    const int BM = @BM@, BN = @BN@, BK = @BK@, TM = @TM@, TN = @TN@, NT = @NT@;
    const int LA = (BM * BK + NT - 1) / NT, LB = (BN * BK + NT - 1) / NT;
    __shared__ float As[BK][BM];
    __shared__ float Bs[BK][BN + 1];
    const long long P = OD * OH * OW, IS = ID * IH * IW;
    const int K = (int)CI@KT_MUL@;
    const long long n = blockIdx.z, p0 = (long long)blockIdx.x * BM;
    const int co0 = blockIdx.y * BN, tid = threadIdx.x;
    const int tr = tid % (BM / TM), tc = tid / (BM / TM);
    const float* xn = x + n * CI * IS;
    float acc[TM][TN], ra[LA], rb[LB];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
//@ igemm_store
        __syncthreads();
    }
#pragma unroll
    for (int j = 0; j < TN; j++) {
        const int co = co0 + tc * TN + j;
        if (co >= CO) break;
        const float b = @BIAS@;
        float* yr = y + (n * CO + co) * P;
#pragma unroll
        for (int i = 0; i < TM; i++) {
            const long long p = p0 + tr + i * (BM / TM);
            if (p < P) yr[p] = acc[i][j] + b;
        }
    }
}

//@ dw_kernel
    const int TW = @TW@, TH = @TH@, RPT = @RPT@, ITH = @ITH@, ITW = @ITW@, NT = @NT@;
    __shared__ float tile[ITH][ITW + 1];
    __shared__ float wk[KT];
    const long long plane = blockIdx.z;
    const int c = (int)(plane % CI);
    const float* xp = x + plane * IH * IW;
    const int oy0 = blockIdx.y * TH, ox0 = blockIdx.x * TW;
    const int ih0 = oy0 * SH - PH, iw0 = ox0 * SW - PW;
    const int tid = threadIdx.y * TW + threadIdx.x;
    for (int i = tid; i < ITH * ITW; i += NT) {
        const int r = i / ITW, q = i % ITW, ih = ih0 + r, iw = iw0 + q;
        tile[r][q] = (ih >= 0 && ih < IH && iw >= 0 && iw < IW) ?
            __ldg(xp + (long long)ih * IW + iw) : 0.0f;
    }
    for (int i = tid; i < KT; i += NT) wk[i] = w[(long long)c * KT + i];
    __syncthreads();
    const int ox = ox0 + threadIdx.x;
    if (ox >= OW) return;
    float* yp = y + plane * OH * OW;
#pragma unroll
    for (int r = 0; r < RPT; r++) {
        const int ly = threadIdx.y * RPT + r, oy = oy0 + ly;
        if (oy >= OH) break;
        float a = @BIAS@;
#pragma unroll
        for (int kh = 0; kh < KH; kh++)
#pragma unroll
            for (int kw = 0; kw < KW; kw++)
                a = fmaf(tile[ly * SH + kh * DH][threadIdx.x * SW + kw * DW], wk[kh * KW + kw], a);
        yp[(long long)oy * OW + ox] = a;
    }
}

