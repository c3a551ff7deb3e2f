// convt, convt_igemm (kernels/builtin_convt.c): the direct transposed
// convolution convt_direct and the implicit GEMM convt_igemm with its weight
// repack; tile geometry and gathers come from C between the sections.
//@ direct_head
extern "C" __global__ void __launch_bounds__(BLOCK)
convt_direct(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
             int CI, int CO, int ID, int IH, int IW, int OD, int OH, int OW)
{
    extern __shared__ float ws[];   /* [cpg][T][COT] */
    const int cpg = CI / G, opg = CO / G;
    const int co0 = blockIdx.y * COT, g = co0 / opg, oc0 = co0 % opg;
    const long long n = blockIdx.z;
    for (int i = threadIdx.x; i < cpg * T * COT; i += BLOCK) {
        const int c = i % COT, t = (i / COT) % T, cj = i / (COT * T);
        ws[i] = w[((long long)(g * cpg + cj) * opg + oc0 + c) * T + t];
    }
    __syncthreads();
    const long long osp = (long long)OD * OH * OW, isp = (long long)ID * IH * IW;
//@ direct_tiled_pixel
    const int QW = BLOCK / SW, TW = QW * SW, ntw = (OW + TW - 1) / TW;
    const int tile = blockIdx.x % ntw, row = blockIdx.x / ntw;
    const int oh = row % OH, od = row / OH;
    const int ow = tile * TW + (threadIdx.x % QW) * SW + threadIdx.x / QW;
    if (threadIdx.x >= TW || ow >= OW) return;
    const long long pix = ((long long)od * OH + oh) * OW + ow;
//@ direct_flat_pixel
    const long long pix = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (pix >= osp) return;
    const int ow = (int)(pix % OW), oh = (int)((pix / OW) % OH), od = (int)(pix / ((long long)OW * OH));
//@ direct_body
    const float* xb = x + (n * CI + (long long)g * cpg) * isp;
    float acc[COT];
#pragma unroll
    for (int c = 0; c < COT; c++) acc[c] = 0.0f;
#pragma unroll
    for (int kd = 0; kd < KD; kd++) {
        const int nd = od + PD - kd * DD;   /* = id * SD when input id reaches od */
        if (nd < 0 || nd % SD != 0 || nd / SD >= ID) continue;
#pragma unroll
        for (int kh = 0; kh < KH; kh++) {
            const int nh = oh + PH - kh * DH;
            if (nh < 0 || nh % SH != 0 || nh / SH >= IH) continue;
#pragma unroll
            for (int kw = 0; kw < KW; kw++) {
                const int nw = ow + PW - kw * DW;
                if (nw < 0 || nw % SW != 0 || nw / SW >= IW) continue;
                const float* xp = xb + ((long long)(nd / SD) * IH + nh / SH) * IW + nw / SW;
                const float* wp = ws + ((kd * KH + kh) * KW + kw) * COT;
#pragma unroll 4
                for (int cj = 0; cj < cpg; cj++) {
                    const float v = __ldg(xp + cj * isp);
#pragma unroll
                    for (int c = 0; c < COT; c++) acc[c] = fmaf(v, wp[cj * T * COT + c], acc[c]);
                }
            }
        }
    }
    float* yp = y + (n * CO + co0) * osp + pix;
#pragma unroll
    for (int c = 0; c < COT; c++) yp[c * osp] = acc[c];
}

//@ igemm_aload
            {
                const int kidx = k0 + kk;
                float a = 0.0f;
                if (mvalid && kidx < K) {
                    const int cj = kidx / T, t = kidx % T;
                    const int id = od + PD - (t / (KH * KW)) * DD;
                    const int ih = oh + PH - ((t / KW) % KH) * DH;
                    const int iw = ow + PW - (t % KW) * DW;
                    if ((unsigned)id < (unsigned)ID && (unsigned)ih < (unsigned)IH && (unsigned)iw < (unsigned)IW)
                        a = __ldg(xrow + cj * isp + ((long long)id * IH + ih) * IW + iw);
                }
                @DST@ = a;
            }
//@ igemm_repack_head
extern "C" __global__ void convt_repack(const float* __restrict__ w, float* __restrict__ wp,
                                     int CI, int CO)
{
    const int cpg = CI / G, opg = CO / G, K = cpg * T;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)G * K * opg) return;
    const int oc = (int)(i % opg), kidx = (int)((i / opg) % K), g = (int)(i / ((long long)opg * K));
    wp[i] = w[((long long)(g * cpg + kidx / T) * opg + oc) * T + kidx % T];
}

extern "C" __global__ void __launch_bounds__(NT)
convt_igemm(const float* __restrict__ x, const float* __restrict__ wp, float* __restrict__ y,
            int NB, int CI, int CO, int ID, int IH, int IW, int OD, int OH, int OW)
{
    __shared__ float As[BK][BM];
    __shared__ float Bs[BK][BN];
    const int cpg = CI / G, opg = CO / G, K = cpg * T, g = blockIdx.z;
    const long long osp = (long long)OD * OH * OW, isp = (long long)ID * IH * IW;
    const long long M = (long long)NB * osp, m0 = (long long)blockIdx.x * BM;
    const int n0 = blockIdx.y * BN, tid = threadIdx.x;
    const int tr = tid % (BM / TM), tc = tid / (BM / TM);
    /* this thread's A row: decoded once */
    const int ar = tid % BM, ak = tid / BM;
    const long long am = m0 + ar;
    const bool mvalid = am < M;
    const long long an = mvalid ? am / osp : 0, asp = mvalid ? am % osp : 0;
    const int ow = (int)(asp % OW), oh = (int)((asp / OW) % OH), od = (int)(asp / ((long long)OW * OH));
    const float* xrow = x + (an * CI + (long long)g * cpg) * isp;
    const float* wg = wp + (long long)g * K * opg;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
//@ igemm_prefetch
    float ra[NA], rb[NBL];
    int k0 = 0;
#pragma unroll
    for (int q = 0; q < NA; q++) {
        const int kk = ak + q * ASTEP;
//@ igemm_prefetch_b
    }
#pragma unroll
    for (int q = 0; q < NBL; q++) {
        const int i = tid + q * NT;
//@ igemm_loop
    }
    for (; k0 < K; ) {
#pragma unroll
        for (int q = 0; q < NA; q++)
            if (ak + q * ASTEP < BK) As[ak + q * ASTEP][ar] = ra[q];
#pragma unroll
        for (int q = 0; q < NBL; q++)
            if (tid + q * NT < BK * BN) Bs[(tid + q * NT) / BN][(tid + q * NT) % BN] = rb[q];
        __syncthreads();
        k0 += BK;
        if (k0 < K) {
#pragma unroll
        for (int q = 0; q < NA; q++) {
            const int kk = ak + q * ASTEP;
//@ igemm_loop_b
        }
#pragma unroll
        for (int q = 0; q < NBL; q++) {
            const int i = tid + q * NT;
//@ igemm_simple_loop
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int kk = ak; kk < BK; kk += ASTEP)
//@ igemm_store
        __syncthreads();
    }
    /* rows interleaved over threads: a warp stores consecutive pixels */
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const long long mm = m0 + tr + i * (BM / TM);
        if (mm >= M) break;
        const long long nn = mm / osp, sp = mm % osp;
        float* yp = y + (nn * CO + (long long)g * opg) * osp + sp;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            const int oc = n0 + tc * TN + j;
            if (oc < opg) yp[(long long)oc * osp] = acc[i][j];
        }
    }
}

