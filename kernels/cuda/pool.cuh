// pool, pool_tile (kernels/builtin_pool.c): max/avg pooling over a window.
//@ defines
#define NEG_INF (-__int_as_float(0x7f800000))
// max as PyTorch: a NaN wins and stays
#define MAXNAN(m, v) (((v) > (m) || (v) != (v)) ? (v) : (m))
//@ divisor_pad
    // count_include_pad: the window clipped to the padded extent
    const float div = (float)((min(d0 + KD, ID + PD) - d0) * (min(h0 + KH, IH + PH) - h0) *
                              (min(w0 + KW, IW + PW) - w0));
//@ one_head
__device__ __forceinline__ float pool_one(const float* __restrict__ xp, int od, int oh, int ow)
{
    const int d0 = od * SD - PD, h0 = oh * SH - PH, w0 = ow * SW - PW;
//@ one_max
    float m = NEG_INF;
    for (int kd = 0; kd < KD; ++kd) {
        const int id = d0 + kd * DILD;
        if (id < 0 || id >= ID) continue;
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = h0 + kh * DILH;
            if (ih < 0 || ih >= IH) continue;
            const float* rp = xp + ((long long)id * IH + ih) * IW;
#pragma unroll
            for (int kw = 0; kw < KW; ++kw) {
                const int iw = w0 + kw * DILW;
                if (iw < 0 || iw >= IW) continue;
                const float v = __ldg(rp + iw);
                m = MAXNAN(m, v);
            }
        }
    }
    return m;
}
//@ one_avg
    float acc = 0.0f;
    const int d1 = min(d0 + KD, ID), h1 = min(h0 + KH, IH), w1 = min(w0 + KW, IW);
    for (int id = max(d0, 0); id < d1; ++id)
        for (int ih = max(h0, 0); ih < h1; ++ih) {
            const float* rp = xp + ((long long)id * IH + ih) * IW;
            for (int iw = max(w0, 0); iw < w1; ++iw) acc += __ldg(rp + iw);
        }
    return acc / div;
}
//@ tile_store
        out[orow * OW + ow] = a;
    }
}
//@ tile_store_avg
        out[orow * OW + ow] = a / div;
    }
    }
}
