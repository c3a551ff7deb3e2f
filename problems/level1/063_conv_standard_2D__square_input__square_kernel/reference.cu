// Reference: Conv2d, x (batch_size, in_channels, height, width) -> out (batch_size, out_channels, out_height, out_width).
// One thread per output element, double accumulation. Spatial axes are padded
// to three (size 1, kernel 1, stride 1, no padding on the missing ones), so one
// kernel serves 1D, 2D and 3D.
// weight (128, 16, 3, 3).
#define NB 16
#define CI 16
#define CO 128
#define GROUPS 1
#define ID 1
#define IH 1024
#define IW 1024
#define OD 1
#define OH 1022
#define OW 1022
#define KD 1
#define KH 3
#define KW 3
#define SD 1
#define SH 1
#define SW 1
#define PD 0
#define PH 0
#define PW 0
#define DILD 1
#define DILH 1
#define DILW 1

extern "C" __global__ void conv_ref(const float* __restrict__ x, const float* __restrict__ weight,
                                     float* __restrict__ out)
{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)NB * CO * OD * OH * OW) return;
    long long t = idx;
    const int ow = (int)(t % OW); t /= OW;
    const int oh = (int)(t % OH); t /= OH;
    const int od = (int)(t % OD); t /= OD;
    const int co = (int)(t % CO);
    const long long n = t / CO;
    const int cpg = CI / GROUPS;          /* input channels per group */
    const int g = co / (CO / GROUPS);
    double acc = 0.0;
    for (int cj = 0; cj < cpg; ++cj) {
        const int ci = g * cpg + cj;
        for (int kd = 0; kd < KD; ++kd) {
            const int id = od * SD - PD + kd * DILD;
            if (id < 0 || id >= ID) continue;
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = oh * SH - PH + kh * DILH;
                if (ih < 0 || ih >= IH) continue;
                for (int kw = 0; kw < KW; ++kw) {
                    const int iw = ow * SW - PW + kw * DILW;
                    if (iw < 0 || iw >= IW) continue;
                    acc += (double)x[(((n * CI + ci) * ID + id) * IH + ih) * IW + iw]
                         * (double)weight[(((long long)(co * cpg + cj) * KD + kd) * KH + kh) * KW + kw];
                }
            }
        }
    }
    out[idx] = (float)acc;
}

/*@launch
conv_ref<<<ceil_div(batch_size * out_channels * out_height * out_width, 256), 256>>>(x, weight, out);
@*/
