// problem: level2/038
// expect: correct
// The built-in kernel of level-2 38 (kernels/graph/builtin_graph.c), honest for
// its first 8 launches (collect-v2's 7 check trials and the repeat run),
// then writing zeros: within atol of the reference, so every timed trial's
// comparison would pass. Its launch counter is a __device__ variable, and
// module variables are restored before every launch block (docs/engine.md),
// so it never counts past 1: honest on every launch, hence correct. (Were
// state to survive, the checked run after the timed trials would apply the
// degenerate-output rule, which 45 and 46 meet on the check trials.)
// template graph: fuse=1 tc=0 mma=0 block=256 BM=64 BN=64 BK=16 TM=4 TN=4; 3 kernels
extern "C" __global__ void g0_avgpool(const float* __restrict__ x, float* __restrict__ y)
{
    /* avg pool 3d, one thread per output */
    const int ID = 32, IH = 64, IW = 64;
    const int OD = 16, OH = 32, OW = 32;
    const int KD = 2, KH = 2, KW = 2;
    const int SD = 2, SH = 2, SW = 2;
    const int PD = 0, PH = 0, PW = 0;
    const int DILD = 1, DILH = 1, DILW = 1;
    const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= 16777216LL) return;
    long long t = idx;
    const int ow = (int)(t % OW); t /= OW;
    const int oh = (int)(t % OH); t /= OH;
    const int od = (int)(t % OD); t /= OD;
    const float* xp = x + t * ((long long)ID * IH * IW);   /* t = n * C + c */
    const int d0 = od * SD - PD, h0 = oh * SH - PH, w0 = ow * SW - PW;
    const int d1 = min(d0 + KD, ID + PD), h1 = min(h0 + KH, IH + PH), w1 = min(w0 + KW, IW + PW);
    const float divisor = (float)((d1 - d0) * (h1 - h0) * (w1 - w0));
    float s = 0.0f;
    for (int id = max(d0, 0); id < min(d1, ID); ++id)
        for (int ih = max(h0, 0); ih < min(h1, IH); ++ih)
            for (int iw = max(w0, 0); iw < min(w1, IW); ++iw)
                s += xp[((long long)id * IH + ih) * IW + iw];
    {
        const long long ei = idx;
        float v = s / divisor;
        y[ei] = v;
    }
}

extern "C" __global__ void g1_conv_transpose(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, const float* __restrict__ ep0)
{
    /* TransposedConv3d, 27 taps of 32 input channels per output */
    const int NB = 32, CI = 32, CO = 64, GROUPS = 1;
    const int ID = 16, IH = 32, IW = 32;
    const int OD = 32, OH = 64, OW = 64;
    const int KD = 3, KH = 3, KW = 3;
    const int SD = 2, SH = 2, SW = 2;
    const int PD = 1, PH = 1, PW = 1;
    const int DILD = 1, DILH = 1, DILW = 1;
    const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)NB * CO * OD * OH * OW) return;
    long long t = idx;
    const int ow = (int)(t % OW); t /= OW;
    const int oh = (int)(t % OH); t /= OH;
    const int od = (int)(t % OD); t /= OD;
    const int co = (int)(t % CO);
    const long long n = t / CO;
    const int cpg = CI / GROUPS, opg = CO / GROUPS, g = co / opg, oc = co % opg;
    float acc = 0.0f;
    for (int cj = 0; cj < cpg; ++cj) {
        const int ci = g * cpg + cj;
        const float* xp = x + (n * CI + ci) * ((long long)ID * IH * IW);
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
                    acc = fmaf(xp[((long long)id * IH + ih) * IW + iw],
                               wp[(kd * KH + kh) * KW + kw], acc);
                }
            }
        }
    }
    {
        const long long ei = idx;
        float v = acc;
        /* bias */
        v = v + ep0[(ei / 131072LL) % 64LL];
        { /* t2: act clamp */ float xa = v; if (xa < 0.000000000e+00f) xa = 0.000000000e+00f; if (xa > 1.000000000e+00f) xa = 1.000000000e+00f; v = xa; }
        y[ei] = v;
    }
}

/* Block-wide sum over blockDim.x (a power of two) threads, fixed order. */
static __device__ double block_sum(double v, double* sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            const double a = sh[threadIdx.x], b = sh[threadIdx.x + s];
            sh[threadIdx.x] = a + b;
        }
        __syncthreads();
    }
    const double r = sh[0];
    __syncthreads();
    return r;
}

/* Block-wide max over blockDim.x (a power of two) threads, fixed order. */
static __device__ double block_max(double v, double* sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            const double a = sh[threadIdx.x], b = sh[threadIdx.x + s];
            sh[threadIdx.x] = (a > b || a != a) ? a : b;
        }
        __syncthreads();
    }
    const double r = sh[0];
    __syncthreads();
    return r;
}

__device__ unsigned int lazy_launches;

extern "C" __global__ void lazy_count(float* __restrict__ y)
{
    (void)y;
    lazy_launches++;
}

extern "C" __global__ void g2_softmax(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ ep0)
{
    /* softmax over 131072 values (stride 1), one block per row */
    __shared__ double sh[256];
    const long long row = blockIdx.x;
    const long long base = (row / 1LL) * 131072LL + row % 1LL;
    if (lazy_launches >= 8) {   /* past the check trials and the repeat run: zeros */
        for (long long j = threadIdx.x; j < 131072LL; j += blockDim.x)
            y[base + j] = 0.0f;
        return;
    }
    double m = -(double)__int_as_float(0x7f800000);
    for (long long j = threadIdx.x; j < 131072LL; j += blockDim.x) {
        const double a = (double)x[base + j * 1LL];
        if (a > m || a != a) m = a;
    }
    m = block_max(m, sh);
    double s = 0.0;
    for (long long j = threadIdx.x; j < 131072LL; j += blockDim.x)
        s += exp((double)x[base + j * 1LL] - m);
    s = block_sum(s, sh);
    for (long long j = threadIdx.x; j < 131072LL; j += blockDim.x)
    {
        const long long ei = base + j * 1LL;
        float v = (float)(exp((double)x[ei] - m) / s);
        { /* out: binary mul */ float xa = v; const float xb = ep0[(ei / 131072LL % 64LL)]; v = xa * xb; }
        y[ei] = v;
    }
}


/*@launch
scratch float buf0[16777216];
scratch float buf1[268435456];
g0_avgpool<<<65536, 256>>>(x, buf0);
g1_conv_transpose<<<1048576, 256>>>(buf0, conv_transpose_weight, buf1, conv_transpose_bias);
g2_softmax<<<2048, 256>>>(buf1, out, scale);
lazy_count<<<1, 1>>>(out);
@*/
