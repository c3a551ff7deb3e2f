// The level-3 graph kernels (kernels/graph/builtin_graph3.c): the batched
// matmul body, the LSTM and GRU cell updates and the attention head.
//@ mm_body
    __shared__ float As[16][17], Bs[16][17];
    const long long z = blockIdx.z;
    long long aoff = 0, boff = 0;
@BOFFS@    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const long long m = blockIdx.y * 16LL + ty, n = blockIdx.x * 16LL + tx;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < @K@LL; k0 += 16) {
        As[ty][tx] = (m < @M@LL && k0 + tx < @K@LL) ? a[aoff + m * @SAM@LL + (k0 + tx) * @SAK@LL] : 0.0f;
        Bs[ty][tx] = (k0 + ty < @K@LL && n < @N@LL) ? b[boff + (k0 + ty) * @SBK@LL + n * @SBN@LL] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 16; kk++)
            acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    if (m < @M@LL && n < @N@LL) {
@STORE@    }
//@ rnn_step
    __shared__ float hs[@NB@][H_];
    const int d = blockIdx.z, lane = threadIdx.x & 31;
    const long long t = d ? T_ - 1 - s : s, tp = d ? t + 1 : t - 1;
    const long long b0 = blockIdx.y * @NB@LL, coff = d * B_ * H_, h0off = LOFF + coff;
    const float* __restrict__ gxs = d ? gxs1 : gxs0;
    const float* __restrict__ whh = d ? whh1 : whh0;
    const float* __restrict__ bhh = d ? bhh1 : bhh0;
    (void)bhh;
    for (int q = threadIdx.x; q < @NB@ * H_; q += blockDim.x) {
        const long long b = b0 + q / H_, k = q % H_;
        hs[q / H_][k] = b >= B_ ? 0.0f : s > 0 ? out[ROW(b, tp) * DH_ + d * H_ + k] : @H0K@;
    }
    __syncthreads();
    const long long j = blockIdx.x * (long long)(blockDim.x / 32) + threadIdx.x / 32;
    if (j >= H_) return;
    const long long b = b0 + lane;
    const bool mine = lane < @NB@ && b < B_;
    const long long row = ROW(b, t);
    float gx[@G@], gh[@G@], acc[@G@][@NB@];
#pragma unroll
    for (int g = 0; g < @G@; g++) {
        gx[g] = mine ? gxs[row * GH_ + g * H_ + j] : 0.0f;
        gh[g] = 0.0f;
#pragma unroll
        for (int q = 0; q < @NB@; q++) acc[g][q] = 0.0f;
    }
    for (long long k = lane; k < H_; k += 32) {
        float w[@G@];
#pragma unroll
        for (int g = 0; g < @G@; g++) w[g] = whh[(g * H_ + j) * H_ + k];
#pragma unroll
        for (int q = 0; q < @NB@; q++) {
            const float hk = hs[q][k];
#pragma unroll
            for (int g = 0; g < @G@; g++) acc[g][q] += w[g] * hk;
        }
    }
#pragma unroll
    for (int g = 0; g < @G@; g++)
#pragma unroll
        for (int q = 0; q < @NB@; q++) {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) acc[g][q] += __shfl_xor_sync(0xffffffffu, acc[g][q], o);
            if (lane == q) gh[g] = acc[g][q]@BHH@;
        }
    if (!mine) return;
    const float hprev = hs[lane][j];
//@ lstm_cell
    const float cp = s > 0 ? c[coff + b * H_ + j] : @C0@;
    const float ig = 1.0f / (1.0f + expf(-(gx[0] + gh[0])));
    const float fg = 1.0f / (1.0f + expf(-(gx[1] + gh[1])));
    const float gg = tanhf(gx[2] + gh[2]);
    const float og = 1.0f / (1.0f + expf(-(gx[3] + gh[3])));
    const float cc = fg * cp + ig * gg;
    const float h = og * tanhf(cc);
    c[coff + b * H_ + j] = cc;
//@ gru_update
    const float rg = 1.0f / (1.0f + expf(-(gx[0] + gh[0])));
    const float zg = 1.0f / (1.0f + expf(-(gx[1] + gh[1])));
    const float ng = tanhf(gx[2] + rg * gh[2]);
    const float h = (1.0f - zg) * ng + zg * hprev;
//@ attn_head
    __shared__ float qs[@D@];
    __shared__ double sh[128];
    const long long row = blockIdx.x, z = row / @M@LL, i = row % @M@LL;
    const float* kp = kt + z * @DS@LL;
    const float* vp = v + z * @SDV@LL;
    for (int d = threadIdx.x; d < @D@; d += 128) qs[d] = q[row * @D@LL + d];
    __syncthreads();
    (void)i;
    float m = __int_as_float(-8388608), acc[@DV@];
    double l = 0.0;
#pragma unroll
    for (int c = 0; c < @DV@; c++) acc[c] = 0.0f;
    for (long long j = threadIdx.x; j < @S@LL; j += 128) {
        float sc = 0.0f;
        for (int d = 0; d < @D@; d++) sc += qs[d] * kp[d * @S@LL + j];
//@ attn_scores
        if (sc == __int_as_float(-8388608)) continue;
        if (sc > m) {
            const float f = expf(m - sc);
            l *= f;
#pragma unroll
            for (int c = 0; c < @DV@; c++) acc[c] *= f;
            m = sc;
        }
        const float pr = expf(sc - m);
        l += pr;
#pragma unroll
        for (int c = 0; c < @DV@; c++) acc[c] += pr * vp[j * @DV@LL + c];
    }
    const double mx = block_max((double)m, sh);
    const float f = m == __int_as_float(-8388608) ? 0.0f : expf((float)((double)m - mx));
    const double tot = block_sum(l * f, sh);
#pragma unroll
    for (int c = 0; c < @DV@; c++) {
        const double a = block_sum((double)(acc[c] * f), sh);
        if (threadIdx.x == 0) {
//@ attn_tile_head
    extern __shared__ float4 kf_attn_sm4[];
    float* const Qs = (float*)kf_attn_sm4;
    float* const Ks = Qs + @D@ * 68;
    float* const Vs = Ks + @D@ * 64;
    float* const Ps = Vs + 64 * @DV@;
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const long long z = blockIdx.y, i0 = blockIdx.x * 64LL;
    const float* qp = q + z * @MD@LL;
    const float* kp = kt + z * @DS@LL;
    const float* vp = v + z * @SDV@LL;
    for (int e = tid; e < 64 * @D@; e += 256) {
        const int qi = e / @D@, d = e % @D@;
        Qs[d * 68 + qi] = i0 + qi < @M@LL ? qp[(i0 + qi) * @D@LL + d] : 0.0f;
    }
    float m[4], o[4][@CV@];
    double l[4];
#pragma unroll
    for (int r = 0; r < 4; r++) {
        m[r] = __int_as_float(-8388608);
        l[r] = 0.0;
#pragma unroll
        for (int c = 0; c < @CV@; c++) o[r][c] = 0.0f;
    }
    for (long long j0 = 0; j0 < @S@LL; j0 += 64) {
        if (@SKIP@) continue;
        __syncthreads();
        for (int e = tid; e < 64 * @D@; e += 256) {
            const int d = e / 64, kj = e % 64;
            Ks[e] = j0 + kj < @S@LL ? kp[d * @S@LL + j0 + kj] : 0.0f;
        }
        for (int e = tid; e < 64 * @DV@; e += 256)
            Vs[e] = j0 + e / @DV@ < @S@LL ? vp[j0 * @DV@LL + e] : 0.0f;
        __syncthreads();
        float s4[4][4], mt[4];
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) s4[r][c] = 0.0f;
#pragma unroll 8
        for (int d = 0; d < @D@; d++) {
            const float4 a = *(const float4*)&Qs[d * 68 + ty * 4];
            const float4 b = *(const float4*)&Ks[d * 64 + tx * 4];
            const float qa[4] = { a.x, a.y, a.z, a.w }, kb[4] = { b.x, b.y, b.z, b.w };
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int c = 0; c < 4; c++) s4[r][c] += qa[r] * kb[c];
        }
#pragma unroll
        for (int r = 0; r < 4; r++) {
            mt[r] = __int_as_float(-8388608);
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const long long i = i0 + ty * 4 + r, j = j0 + tx * 4 + c;
                float sc = s4[r][c];
                (void)i;
//@ attn_tile_soft
                if (j >= @S@LL) sc = __int_as_float(-8388608);
                s4[r][c] = sc;
                mt[r] = fmaxf(mt[r], sc);
            }
        }
#pragma unroll
        for (int r = 0; r < 4; r++) {
#pragma unroll
            for (int w = 1; w < 16; w <<= 1) mt[r] = fmaxf(mt[r], __shfl_xor_sync(0xffffffffu, mt[r], w));
            const float mn = fmaxf(m[r], mt[r]);
            const float al = mn == __int_as_float(-8388608) ? 1.0f : expf(m[r] - mn);
            float ps = 0.0f;
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const float pr = s4[r][c] == __int_as_float(-8388608) ? 0.0f : expf(s4[r][c] - mn);
                Ps[(tx * 4 + c) * 68 + ty * 4 + r] = pr;
                ps += pr;
            }
#pragma unroll
            for (int w = 1; w < 16; w <<= 1) ps += __shfl_xor_sync(0xffffffffu, ps, w);
            l[r] = l[r] * al + ps;
            m[r] = mn;
#pragma unroll
            for (int c = 0; c < @CV@; c++) o[r][c] *= al;
        }
        __syncthreads();
#pragma unroll 4
        for (int kj = 0; kj < 64; kj++) {
            const float4 pa = *(const float4*)&Ps[kj * 68 + ty * 4];
            const float pv[4] = { pa.x, pa.y, pa.z, pa.w };
#pragma unroll
            for (int c = 0; c < @CV@; c++) {
                const float vv = tx + 16 * c < @DV@ ? Vs[kj * @DV@ + tx + 16 * c] : 0.0f;
#pragma unroll
                for (int r = 0; r < 4; r++) o[r][c] += pv[r] * vv;
            }
        }
    }
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const long long i = i0 + ty * 4 + r, row = z * @M@LL + i;
        if (i >= @M@LL) continue;
#pragma unroll
        for (int c = 0; c < @CV@; c++) {
            const long long col = tx + 16 * c;
            if (col >= @DV@) continue;
