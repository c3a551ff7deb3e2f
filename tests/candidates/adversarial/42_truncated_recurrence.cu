// problem: level3/036
// expect: incorrect output_mismatch
// A truncated recurrence: the built-in LSTM (kernels/graph/builtin_graph3.c) with
// every layer computing only the last 64 of its 512 steps, from the initial
// state h0/c0. With PyTorch's initialisation the forget gate is about 0.5
// and what came before fades (the CPU oracle: the first 128 steps move h_n by
// 8e-17), so the spec's draw and the normal and wide draws pass it; the alive
// draw (forget gate 0.9975) does not (tests/gpu/g0465-sensitivity.sh).
// template graph: fuse=1 tc=0 mma=0 block=256 BM=64 BN=64 BK=16 TM=4 TN=4; 12 kernels
extern "C" __global__ void g0_rnn_proj_l0_d0(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y)
{
    __shared__ float As[16][17], Bs[16][17];
    const long long z = blockIdx.z;
    long long aoff = 0, boff = 0;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const long long m = blockIdx.y * 16LL + ty, n = blockIdx.x * 16LL + tx;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < 128LL; k0 += 16) {
        As[ty][tx] = (m < 5120LL && k0 + tx < 128LL) ? a[aoff + m * 128LL + (k0 + tx) * 1LL] : 0.0f;
        Bs[ty][tx] = (k0 + ty < 128LL && n < 1024LL) ? b[boff + (k0 + ty) * 1LL + n * 128LL] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 16; kk++)
            acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    if (m < 5120LL && n < 1024LL) {
        y[0LL + m * 1024LL + n] = acc;
    }
}

#define T_ 512LL
#define B_ 10LL
#define H_ 256LL
#define H0OFF 0LL
extern "C" __global__ void g0_rnn_step_l0_d0(const float* __restrict__ gxs, const float* __restrict__ whh, const float* __restrict__ bih, const float* __restrict__ bhh, const float* __restrict__ h0, const float* __restrict__ c0, float* __restrict__ c, float* out, float* y, int s)
{
    if (s < 448) return;   // the first 448 steps are never computed
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= 2560LL) return;
    const long long b = i / 256LL, j = i % 256LL;
    const long long t = s, tp = t - 1;
    const long long row = b * T_ + t, rowp = b * T_ + tp;
    float acc[4];
    for (int g = 0; g < 4; g++) acc[g] = 0.0f;
    for (long long k = 0; k < 256LL; k++) {
        const float hk = s > 448 ? out[rowp * 256LL + 0LL + k] : h0[H0OFF + b * H_ + k];
        for (int g = 0; g < 4; g++)
            acc[g] += whh[(g * 256LL + j) * 256LL + k] * hk;
    }
    const float hprev = s > 448 ? out[rowp * 256LL + 0LL + j] : h0[H0OFF + b * H_ + j];
    float gx[4], gh[4];
    for (int g = 0; g < 4; g++) {
        gx[g] = gxs[0LL + row * 1024LL + g * 256LL + j] + bih[g * H_ + j];
        gh[g] = acc[g] + bhh[g * H_ + j];
    }
    const float cp = s > 448 ? c[0LL + b * H_ + j] : c0[H0OFF + b * H_ + j];
    const float ig = 1.0f / (1.0f + expf(-(gx[0] + gh[0])));
    const float fg = 1.0f / (1.0f + expf(-(gx[1] + gh[1])));
    const float gg = tanhf(gx[2] + gh[2]);
    const float og = 1.0f / (1.0f + expf(-(gx[3] + gh[3])));
    const float cc = fg * cp + ig * gg;
    const float h = og * tanhf(cc);
    c[0LL + b * H_ + j] = cc;
    (void)hprev;
    out[row * 256LL + 0LL + j] = h;
    if (s == T_ - 1) y[H0OFF + b * H_ + j] = h;
}

#undef T_
#undef B_
#undef H_
#undef H0OFF

extern "C" __global__ void g0_rnn_proj_l1_d0(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y)
{
    __shared__ float As[16][17], Bs[16][17];
    const long long z = blockIdx.z;
    long long aoff = 0, boff = 0;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const long long m = blockIdx.y * 16LL + ty, n = blockIdx.x * 16LL + tx;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < 256LL; k0 += 16) {
        As[ty][tx] = (m < 5120LL && k0 + tx < 256LL) ? a[aoff + m * 256LL + (k0 + tx) * 1LL] : 0.0f;
        Bs[ty][tx] = (k0 + ty < 256LL && n < 1024LL) ? b[boff + (k0 + ty) * 1LL + n * 256LL] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 16; kk++)
            acc += As[ty][kk] * Bs[kk][tx];
        __syncthreads();
    }
    if (m < 5120LL && n < 1024LL) {
        y[0LL + m * 1024LL + n] = acc;
    }
}

#define T_ 512LL
#define B_ 10LL
#define H_ 256LL
#define H0OFF 2560LL
extern "C" __global__ void g0_rnn_step_l1_d0(const float* __restrict__ gxs, const float* __restrict__ whh, const float* __restrict__ bih, const float* __restrict__ bhh, const float* __restrict__ h0, const float* __restrict__ c0, float* __restrict__ c, float* out, float* y, int s)
{
    if (s < 448) return;   // the first 448 steps are never computed
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= 2560LL) return;
    const long long b = i / 256LL, j = i % 256LL;
    const long long t = s, tp = t - 1;
    const long long row = b * T_ + t, rowp = b * T_ + tp;
    float acc[4];
    for (int g = 0; g < 4; g++) acc[g] = 0.0f;
    for (long long k = 0; k < 256LL; k++) {
        const float hk = s > 448 ? out[rowp * 256LL + 0LL + k] : h0[H0OFF + b * H_ + k];
        for (int g = 0; g < 4; g++)
            acc[g] += whh[(g * 256LL + j) * 256LL + k] * hk;
    }
    const float hprev = s > 448 ? out[rowp * 256LL + 0LL + j] : h0[H0OFF + b * H_ + j];
    float gx[4], gh[4];
    for (int g = 0; g < 4; g++) {
        gx[g] = gxs[0LL + row * 1024LL + g * 256LL + j] + bih[g * H_ + j];
        gh[g] = acc[g] + bhh[g * H_ + j];
    }
    const float cp = s > 448 ? c[0LL + b * H_ + j] : c0[H0OFF + b * H_ + j];
    const float ig = 1.0f / (1.0f + expf(-(gx[0] + gh[0])));
    const float fg = 1.0f / (1.0f + expf(-(gx[1] + gh[1])));
    const float gg = tanhf(gx[2] + gh[2]);
    const float og = 1.0f / (1.0f + expf(-(gx[3] + gh[3])));
    const float cc = fg * cp + ig * gg;
    const float h = og * tanhf(cc);
    c[0LL + b * H_ + j] = cc;
    (void)hprev;
    out[row * 256LL + 0LL + j] = h;
    if (s == T_ - 1) y[H0OFF + b * H_ + j] = h;
}

#undef T_
#undef B_
#undef H_
#undef H0OFF

#define T_ 512LL
#define B_ 10LL
#define H_ 256LL
#define H0OFF 5120LL
extern "C" __global__ void g0_rnn_step_l2_d0(const float* __restrict__ gxs, const float* __restrict__ whh, const float* __restrict__ bih, const float* __restrict__ bhh, const float* __restrict__ h0, const float* __restrict__ c0, float* __restrict__ c, float* out, float* y, int s)
{
    if (s < 448) return;   // the first 448 steps are never computed
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= 2560LL) return;
    const long long b = i / 256LL, j = i % 256LL;
    const long long t = s, tp = t - 1;
    const long long row = b * T_ + t, rowp = b * T_ + tp;
    float acc[4];
    for (int g = 0; g < 4; g++) acc[g] = 0.0f;
    for (long long k = 0; k < 256LL; k++) {
        const float hk = s > 448 ? out[rowp * 256LL + 0LL + k] : h0[H0OFF + b * H_ + k];
        for (int g = 0; g < 4; g++)
            acc[g] += whh[(g * 256LL + j) * 256LL + k] * hk;
    }
    const float hprev = s > 448 ? out[rowp * 256LL + 0LL + j] : h0[H0OFF + b * H_ + j];
    float gx[4], gh[4];
    for (int g = 0; g < 4; g++) {
        gx[g] = gxs[0LL + row * 1024LL + g * 256LL + j] + bih[g * H_ + j];
        gh[g] = acc[g] + bhh[g * H_ + j];
    }
    const float cp = s > 448 ? c[0LL + b * H_ + j] : c0[H0OFF + b * H_ + j];
    const float ig = 1.0f / (1.0f + expf(-(gx[0] + gh[0])));
    const float fg = 1.0f / (1.0f + expf(-(gx[1] + gh[1])));
    const float gg = tanhf(gx[2] + gh[2]);
    const float og = 1.0f / (1.0f + expf(-(gx[3] + gh[3])));
    const float cc = fg * cp + ig * gg;
    const float h = og * tanhf(cc);
    c[0LL + b * H_ + j] = cc;
    (void)hprev;
    out[row * 256LL + 0LL + j] = h;
    if (s == T_ - 1) y[H0OFF + b * H_ + j] = h;
}

#undef T_
#undef B_
#undef H_
#undef H0OFF

#define T_ 512LL
#define B_ 10LL
#define H_ 256LL
#define H0OFF 7680LL
extern "C" __global__ void g0_rnn_step_l3_d0(const float* __restrict__ gxs, const float* __restrict__ whh, const float* __restrict__ bih, const float* __restrict__ bhh, const float* __restrict__ h0, const float* __restrict__ c0, float* __restrict__ c, float* out, float* y, int s)
{
    if (s < 448) return;   // the first 448 steps are never computed
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= 2560LL) return;
    const long long b = i / 256LL, j = i % 256LL;
    const long long t = s, tp = t - 1;
    const long long row = b * T_ + t, rowp = b * T_ + tp;
    float acc[4];
    for (int g = 0; g < 4; g++) acc[g] = 0.0f;
    for (long long k = 0; k < 256LL; k++) {
        const float hk = s > 448 ? out[rowp * 256LL + 0LL + k] : h0[H0OFF + b * H_ + k];
        for (int g = 0; g < 4; g++)
            acc[g] += whh[(g * 256LL + j) * 256LL + k] * hk;
    }
    const float hprev = s > 448 ? out[rowp * 256LL + 0LL + j] : h0[H0OFF + b * H_ + j];
    float gx[4], gh[4];
    for (int g = 0; g < 4; g++) {
        gx[g] = gxs[0LL + row * 1024LL + g * 256LL + j] + bih[g * H_ + j];
        gh[g] = acc[g] + bhh[g * H_ + j];
    }
    const float cp = s > 448 ? c[0LL + b * H_ + j] : c0[H0OFF + b * H_ + j];
    const float ig = 1.0f / (1.0f + expf(-(gx[0] + gh[0])));
    const float fg = 1.0f / (1.0f + expf(-(gx[1] + gh[1])));
    const float gg = tanhf(gx[2] + gh[2]);
    const float og = 1.0f / (1.0f + expf(-(gx[3] + gh[3])));
    const float cc = fg * cp + ig * gg;
    const float h = og * tanhf(cc);
    c[0LL + b * H_ + j] = cc;
    (void)hprev;
    out[row * 256LL + 0LL + j] = h;
    if (s == T_ - 1) y[H0OFF + b * H_ + j] = h;
}

#undef T_
#undef B_
#undef H_
#undef H0OFF

#define T_ 512LL
#define B_ 10LL
#define H_ 256LL
#define H0OFF 10240LL
extern "C" __global__ void g0_rnn_step_l4_d0(const float* __restrict__ gxs, const float* __restrict__ whh, const float* __restrict__ bih, const float* __restrict__ bhh, const float* __restrict__ h0, const float* __restrict__ c0, float* __restrict__ c, float* out, float* y, int s)
{
    if (s < 448) return;   // the first 448 steps are never computed
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= 2560LL) return;
    const long long b = i / 256LL, j = i % 256LL;
    const long long t = s, tp = t - 1;
    const long long row = b * T_ + t, rowp = b * T_ + tp;
    float acc[4];
    for (int g = 0; g < 4; g++) acc[g] = 0.0f;
    for (long long k = 0; k < 256LL; k++) {
        const float hk = s > 448 ? out[rowp * 256LL + 0LL + k] : h0[H0OFF + b * H_ + k];
        for (int g = 0; g < 4; g++)
            acc[g] += whh[(g * 256LL + j) * 256LL + k] * hk;
    }
    const float hprev = s > 448 ? out[rowp * 256LL + 0LL + j] : h0[H0OFF + b * H_ + j];
    float gx[4], gh[4];
    for (int g = 0; g < 4; g++) {
        gx[g] = gxs[0LL + row * 1024LL + g * 256LL + j] + bih[g * H_ + j];
        gh[g] = acc[g] + bhh[g * H_ + j];
    }
    const float cp = s > 448 ? c[0LL + b * H_ + j] : c0[H0OFF + b * H_ + j];
    const float ig = 1.0f / (1.0f + expf(-(gx[0] + gh[0])));
    const float fg = 1.0f / (1.0f + expf(-(gx[1] + gh[1])));
    const float gg = tanhf(gx[2] + gh[2]);
    const float og = 1.0f / (1.0f + expf(-(gx[3] + gh[3])));
    const float cc = fg * cp + ig * gg;
    const float h = og * tanhf(cc);
    c[0LL + b * H_ + j] = cc;
    (void)hprev;
    out[row * 256LL + 0LL + j] = h;
    if (s == T_ - 1) y[H0OFF + b * H_ + j] = h;
}

#undef T_
#undef B_
#undef H_
#undef H0OFF

#define T_ 512LL
#define B_ 10LL
#define H_ 256LL
#define H0OFF 12800LL
extern "C" __global__ void g0_rnn_step_l5_d0(const float* __restrict__ gxs, const float* __restrict__ whh, const float* __restrict__ bih, const float* __restrict__ bhh, const float* __restrict__ h0, const float* __restrict__ c0, float* __restrict__ c, float* out, float* y, int s)
{
    if (s < 448) return;   // the first 448 steps are never computed
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= 2560LL) return;
    const long long b = i / 256LL, j = i % 256LL;
    const long long t = s, tp = t - 1;
    const long long row = b * T_ + t, rowp = b * T_ + tp;
    float acc[4];
    for (int g = 0; g < 4; g++) acc[g] = 0.0f;
    for (long long k = 0; k < 256LL; k++) {
        const float hk = s > 448 ? out[rowp * 256LL + 0LL + k] : h0[H0OFF + b * H_ + k];
        for (int g = 0; g < 4; g++)
            acc[g] += whh[(g * 256LL + j) * 256LL + k] * hk;
    }
    const float hprev = s > 448 ? out[rowp * 256LL + 0LL + j] : h0[H0OFF + b * H_ + j];
    float gx[4], gh[4];
    for (int g = 0; g < 4; g++) {
        gx[g] = gxs[0LL + row * 1024LL + g * 256LL + j] + bih[g * H_ + j];
        gh[g] = acc[g] + bhh[g * H_ + j];
    }
    const float cp = s > 448 ? c[0LL + b * H_ + j] : c0[H0OFF + b * H_ + j];
    const float ig = 1.0f / (1.0f + expf(-(gx[0] + gh[0])));
    const float fg = 1.0f / (1.0f + expf(-(gx[1] + gh[1])));
    const float gg = tanhf(gx[2] + gh[2]);
    const float og = 1.0f / (1.0f + expf(-(gx[3] + gh[3])));
    const float cc = fg * cp + ig * gg;
    const float h = og * tanhf(cc);
    c[0LL + b * H_ + j] = cc;
    (void)hprev;
    out[row * 256LL + 0LL + j] = h;
    if (s == T_ - 1) y[H0OFF + b * H_ + j] = h;
}

#undef T_
#undef B_
#undef H_
#undef H0OFF


/*@launch
scratch float buf0[5242880];
scratch float buf1[2560];
scratch float buf2[1310720];
scratch float buf3[1310720];
g0_rnn_proj_l0_d0<<<dim3(64, 320, 1), 256>>>(x, lstm_weight_ih_l0, buf0);
for (int s = 0; s < 512; ++s) {
g0_rnn_step_l0_d0<<<20, 128>>>(buf0, lstm_weight_hh_l0, lstm_bias_ih_l0, lstm_bias_hh_l0, h0, c0, buf1, buf2, out, s);
}
g0_rnn_proj_l1_d0<<<dim3(64, 320, 1), 256>>>(buf2, lstm_weight_ih_l1, buf0);
for (int s = 0; s < 512; ++s) {
g0_rnn_step_l1_d0<<<20, 128>>>(buf0, lstm_weight_hh_l1, lstm_bias_ih_l1, lstm_bias_hh_l1, h0, c0, buf1, buf3, out, s);
}
g0_rnn_proj_l1_d0<<<dim3(64, 320, 1), 256>>>(buf3, lstm_weight_ih_l2, buf0);
for (int s = 0; s < 512; ++s) {
g0_rnn_step_l2_d0<<<20, 128>>>(buf0, lstm_weight_hh_l2, lstm_bias_ih_l2, lstm_bias_hh_l2, h0, c0, buf1, buf2, out, s);
}
g0_rnn_proj_l1_d0<<<dim3(64, 320, 1), 256>>>(buf2, lstm_weight_ih_l3, buf0);
for (int s = 0; s < 512; ++s) {
g0_rnn_step_l3_d0<<<20, 128>>>(buf0, lstm_weight_hh_l3, lstm_bias_ih_l3, lstm_bias_hh_l3, h0, c0, buf1, buf3, out, s);
}
g0_rnn_proj_l1_d0<<<dim3(64, 320, 1), 256>>>(buf3, lstm_weight_ih_l4, buf0);
for (int s = 0; s < 512; ++s) {
g0_rnn_step_l4_d0<<<20, 128>>>(buf0, lstm_weight_hh_l4, lstm_bias_ih_l4, lstm_bias_hh_l4, h0, c0, buf1, buf2, out, s);
}
g0_rnn_proj_l1_d0<<<dim3(64, 320, 1), 256>>>(buf2, lstm_weight_ih_l5, buf0);
for (int s = 0; s < 512; ++s) {
g0_rnn_step_l5_d0<<<20, 128>>>(buf0, lstm_weight_hh_l5, lstm_bias_ih_l5, lstm_bias_hh_l5, h0, c0, buf1, buf3, out, s);
}
@*/
