// The graph template's op kernels (kernels/graph/builtin_graph_ops.c): block
// reductions, linear, conv, pooling, softmax and adaptive pooling bodies.
//@ block_reduce
/* Block-wide @OP@ over blockDim.x (a power of two) threads, fixed order. */
static __device__ double block_@OP@(double v, double* sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            const double a = sh[threadIdx.x], b = sh[threadIdx.x + s];
//@ helpers_end
        }
        __syncthreads();
    }
    const double r = sh[0];
    __syncthreads();
    return r;
}

//@ linear_head
    /* tiled SGEMM, y = x [@M@ x @K@] @ w^T, BM=@BM@ BN=@BN@ BK=@BK@ TM=@TM@ TN=@TN@ */
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN + 4];
    const long long M = @M@LL, N = @N@LL, K = @K@LL;
    const long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    const int tid = threadIdx.x, tr = tid / (BN / TN), tc = tid % (BN / TN);
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
    for (long long k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < BM * BK; i += NT) {
            const int r = i / BK, kk = i % BK;
            const long long gr = row0 + r, gk = k0 + kk;
            As[kk][r] = (gr < M && gk < K) ? x[gr * K + gk] : 0.0f;
        }
        for (int i = tid; i < BN * BK; i += NT) {
            const int cc = i / BK, kk = i % BK;
            const long long gc = col0 + cc, gk = k0 + kk;
            Bs[kk][cc] = (gc < N && gk < K) ? w[gc * K + gk] : 0.0f;
        }
        __syncthreads();
//@ linear_store
        __syncthreads();
    }
    for (int ti = 0; ti < TM; ti++) {
        const long long r = row0 + tr * TM + ti;
        if (r >= M) break;
        for (int tj = 0; tj < TN; tj++) {
            const long long cc = col0 + tc * TN + tj;
            if (cc >= N) break;
//@ conv_head
    const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)NB * CO * OD * OH * OW) return;
    long long t = idx;
    const int ow = (int)(t % OW); t /= OW;
    const int oh = (int)(t % OH); t /= OH;
    const int od = (int)(t % OD); t /= OD;
    const int co = (int)(t % CO);
    const long long n = t / CO;
    const int cpg = CI / GROUPS, opg = CO / GROUPS, g = co / opg, oc = co % opg;
    @ACC_DECL@;
    for (int cj = 0; cj < cpg; ++cj) {
        const int ci = g * cpg + cj;
        const float* xp = x + (n * CI + ci) * ((long long)ID * IH * IW);
//@ conv_taps
        const float* wp = w + (long long)(co * cpg + cj) * (KD * KH * KW);
        for (int kd = 0; kd < KD; ++kd) {
            const int id = od * SD - PD + kd * DILD;
            if (id < 0 || id >= ID) continue;
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = oh * SH - PH + kh * DILH;
                if (ih < 0 || ih >= IH) continue;
                for (int kw = 0; kw < KW; ++kw) {
                    const int iw = ow * SW - PW + kw * DILW;
                    if (iw < 0 || iw >= IW) continue;
//@ convt_taps
        const float* wp = w + (long long)(ci * opg + oc) * (KD * KH * KW);
        for (int kd = 0; kd < KD; ++kd) {
            const int nd = od + PD - kd * DILD;
            if (nd < 0 || nd % SD != 0 || nd / SD >= ID) continue;
            const int id = nd / SD;
            for (int kh = 0; kh < KH; ++kh) {
                const int nh = oh + PH - kh * DILH;
                if (nh < 0 || nh % SH != 0 || nh / SH >= IH) continue;
                const int ih = nh / SH;
                for (int kw = 0; kw < KW; ++kw) {
                    const int nw = ow + PW - kw * DILW;
                    if (nw < 0 || nw % SW != 0 || nw / SW >= IW) continue;
                    const int iw = nw / SW;
//@ conv_end
                }
            }
        }
    }
//@ pool_head
    const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= @NUMEL@LL) return;
    long long t = idx;
    const int ow = (int)(t % OW); t /= OW;
    const int oh = (int)(t % OH); t /= OH;
    const int od = (int)(t % OD); t /= OD;
    const float* xp = x + t * ((long long)ID * IH * IW);   /* t = n * C + c */
    const int d0 = od * SD - PD, h0 = oh * SH - PH, w0 = ow * SW - PW;
//@ pool_max
    float m = __int_as_float((int)0xff800000);
    for (int kd = 0; kd < KD; ++kd) {
        const int id = d0 + kd * DILD;
        if (id < 0 || id >= ID) continue;
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = h0 + kh * DILH;
            if (ih < 0 || ih >= IH) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const int iw = w0 + kw * DILW;
                if (iw < 0 || iw >= IW) continue;
                const float a = xp[((long long)id * IH + ih) * IW + iw];
                if (a > m || a != a) m = a;   /* NaN propagates */
            }
        }
    }
//@ pool_avg
    const int d1 = min(d0 + KD, ID + PD), h1 = min(h0 + KH, IH + PH), w1 = min(w0 + KW, IW + PW);
    const float divisor = (float)((d1 - d0) * (h1 - h0) * (w1 - w0));
    float s = 0.0f;
    for (int id = max(d0, 0); id < min(d1, ID); ++id)
        for (int ih = max(h0, 0); ih < min(h1, IH); ++ih)
            for (int iw = max(w0, 0); iw < min(w1, IW); ++iw)
                s += xp[((long long)id * IH + ih) * IW + iw];
//@ softmax_head
    const long long base = (row / @INNER@LL) * @D_INNER@LL + row % @INNER@LL;
    double m = -(double)__int_as_float(0x7f800000);
    for (long long j = @J0@; j < @D@LL; @JSTEP@) {
        const double a = (double)x[base + j * @INNER@LL];
        if (a > m || a != a) m = a;
    }
@BLOCK_MAX@    double s = 0.0;
    for (long long j = @J0@; j < @D@LL; @JSTEP@)
        s += exp((double)x[base + j * @INNER@LL] - m);
@BLOCK_SUM@    for (long long j = @J0@; j < @D@LL; @JSTEP@)
//@ adaptive_sum
;
    double s = 0.0;
    for (long long r = threadIdx.x; r < count; r += blockDim.x) {
        long long q = r, off = base;
//@ adaptive_end
        s += (double)x[off];
    }
    s = block_sum(s, sh);
    if (threadIdx.x == 0)
//@ linear_skinny
    /* y = x [@M@ x @K@] @ w^T for few rows: a warp per @CPW@ output columns, lanes split k */
    const int lane = threadIdx.x & 31;
    const long long n0 = ((long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * @CPW@;
    if (n0 >= @N@LL) return;
    float acc[@CPW@][@M@];
#pragma unroll
    for (int c = 0; c < @CPW@; c++)
#pragma unroll
        for (int r = 0; r < @M@; r++) acc[c][r] = 0.0f;
    for (long long k = lane; k < @K@LL; k += 32) {
        float xv[@M@];
#pragma unroll
        for (int r = 0; r < @M@; r++) xv[r] = x[r * @K@LL + k];
#pragma unroll
        for (int c = 0; c < @CPW@; c++) {
            const float wv = n0 + c < @N@LL ? w[(n0 + c) * @K@LL + k] : 0.0f;
#pragma unroll
            for (int r = 0; r < @M@; r++) acc[c][r] += xv[r] * wv;
        }
    }
#pragma unroll
    for (int c = 0; c < @CPW@; c++)
#pragma unroll
        for (int r = 0; r < @M@; r++) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) acc[c][r] += __shfl_xor_sync(0xffffffffu, acc[c][r], o);
            if (lane == (c * @M@ + r) % 32 && n0 + c < @N@LL)
