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
