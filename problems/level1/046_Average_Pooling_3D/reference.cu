// Reference: AvgPool3d, x (batch_size, channels, depth, height, width) -> out (batch_size, channels, out_depth, out_height, out_width).
// One thread per output element. Spatial axes are padded to three (size 1,
// kernel 1, stride 1, no padding on the missing ones) so one kernel serves
// 1D, 2D and 3D. Avg: count_include_pad=True, the divisor is the window clipped to the padded input.
#define NB 16
#define CI 32
#define CO 32
#define ID 128
#define IH 128
#define IW 256
#define OD 64
#define OH 64
#define OW 128
#define KD 3
#define KH 3
#define KW 3
#define SD 2
#define SH 2
#define SW 2
#define PD 1
#define PH 1
#define PW 1
#define DILD 1
#define DILH 1
#define DILW 1

extern "C" __global__ void pool_ref(const float* __restrict__ x, float* __restrict__ out)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)NB * CI * OD * OH * OW) return;
    long long t = idx;
    const int ow = (int)(t % OW); t /= OW;
    const int oh = (int)(t % OH); t /= OH;
    const int od = (int)(t % OD); t /= OD;
    const long long nc = t;   /* n * CI + c */
    const float* xp = x + nc * ((long long)ID * IH * IW);
    const int d0 = od * SD - PD, h0 = oh * SH - PH, w0 = ow * SW - PW;
    /* divisor: window clipped to the padded extent [-P, I + P) */
    const int d1 = min(d0 + KD, ID + PD), h1 = min(h0 + KH, IH + PH), w1 = min(w0 + KW, IW + PW);
    const double divisor = (double)(d1 - d0) * (h1 - h0) * (w1 - w0);
    double s = 0.0;
    for (int id = max(d0, 0); id < min(d1, ID); ++id)
        for (int ih = max(h0, 0); ih < min(h1, IH); ++ih)
            for (int iw = max(w0, 0); iw < min(w1, IW); ++iw)
                s += (double)xp[((long long)id * IH + ih) * IW + iw];
    out[idx] = (float)(s / divisor);
}

/*@launch
pool_ref<<<ceil_div(batch_size * channels * out_depth * out_height * out_width, 256), 256>>>(x, out);
@*/
