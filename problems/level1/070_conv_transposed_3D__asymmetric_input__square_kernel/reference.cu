// Reference: ConvTranspose3d, x (batch_size, in_channels, depth, height, width) -> out (batch_size, out_channels, out_depth, out_height, out_width).
// One thread per output element, double accumulation. Spatial axes are padded
// to three (size 1, kernel 1, stride 1, no padding on the missing ones), so one
// kernel serves 1D, 2D and 3D. Transposed: out[od] gathers x[id] where od = id*S - P + k*DIL.
// weight (48, 24, 3, 3, 3).
#define NB 8
#define CI 48
#define CO 24
#define GROUPS 1
#define ID 96
#define IH 96
#define IW 96
#define OD 98
#define OH 98
#define OW 98
#define KD 3
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
    const int opg = CO / GROUPS;          /* output channels per group */
    const int g = co / opg, oc = co % opg;
    double acc = 0.0;
    for (int cj = 0; cj < cpg; ++cj) {
        const int ci = g * cpg + cj;
        for (int kd = 0; kd < KD; ++kd) {
            const int nd = od + PD - kd * DILD;   /* = id * SD when input id reaches od */
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
                    acc += (double)x[(((n * CI + ci) * ID + id) * IH + ih) * IW + iw]
                         * (double)weight[(((long long)(ci * opg + oc) * KD + kd) * KH + kh) * KW + kw];
                }
            }
        }
    }
    out[idx] = (float)acc;
}

/*@launch
conv_ref<<<ceil_div(batch_size * out_channels * out_depth * out_height * out_width, 256), 256>>>(x, weight, out);
@*/
