// Reference: AvgPool1d, x (batch_size, in_channels, input_length) -> out (batch_size, in_channels, out_input_length).
// One thread per output element. Spatial axes are padded to three (size 1,
// kernel 1, stride 1, no padding on the missing ones) so one kernel serves
// 1D, 2D and 3D. Avg: count_include_pad=True, the divisor is the window clipped to the padded input.
#define NB 64
#define CI 128
#define CO 128
#define ID 1
#define IH 1
#define IW 65536
#define OD 1
#define OH 1
#define OW 65537
#define KD 1
#define KH 1
#define KW 8
#define SD 1
#define SH 1
#define SW 1
#define PD 0
#define PH 0
#define PW 4
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
pool_ref<<<ceil_div(batch_size * in_channels * out_input_length, 256), 256>>>(x, out);
@*/
