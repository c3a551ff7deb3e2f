// Reference: MaxPool1d, x (batch_size, features, sequence_length) -> out (batch_size, features, out_sequence_length).
// One thread per output element. Spatial axes are padded to three (size 1,
// kernel 1, stride 1, no padding on the missing ones) so one kernel serves
// 1D, 2D and 3D. Max: padded positions never win (PyTorch pads with -inf).
#define NB 64
#define CI 192
#define CO 192
#define ID 1
#define IH 1
#define IW 65536
#define OD 1
#define OH 1
#define OW 65523
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
#define DILW 3

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
    float m = __int_as_float((int)0xff800000);   /* -inf */
    for (int kd = 0; kd < KD; ++kd) {
        const int id = d0 + kd * DILD;
        if (id < 0 || id >= ID) continue;
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = h0 + kh * DILH;
            if (ih < 0 || ih >= IH) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const int iw = w0 + kw * DILW;
                if (iw < 0 || iw >= IW) continue;
                const float v = xp[((long long)id * IH + ih) * IW + iw];
                if (v > m) m = v;
            }
        }
    }
    out[idx] = m;
}

/*@launch
pool_ref<<<ceil_div(batch_size * features * out_sequence_length, 256), 256>>>(x, out);
@*/
