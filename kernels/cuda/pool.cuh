// pool, pool_tile (kernels/builtin_pool.c): max/avg pooling over a window,
// one output per thread or a tile of rows per block.
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
//@ kernel
extern "C" __global__ void __launch_bounds__(@BLOCK@)
pool_fwd(const float* __restrict__ x, float* __restrict__ out, long long total)
{
    const long long base = (long long)blockIdx.x * @SPAN@ + threadIdx.x;
#pragma unroll
    for (int u = 0; u < @OPT@; u++) {
        const long long idx = base + (long long)u * @BLOCK@;
        if (idx >= total) break;
        long long t = idx;
        const int ow = (int)(t % OW); t /= OW;
        const int oh = (int)(t % OH); t /= OH;
        const int od = (int)(t % OD); t /= OD;
        out[idx] = pool_one(x + t * ((long long)ID * IH * IW), od, oh, ow);
    }
}
//@ tile_head
extern "C" __global__ void __launch_bounds__(@BLOCK@)
pool_rows(const float* __restrict__ x, float* __restrict__ out)
{
    __shared__ float4 colv[SEGW / 4];
    float* col = reinterpret_cast<float*>(colv);
    const long long orow = blockIdx.x / NSEG;   // (n, c, od, oh)
    const int ow0 = (int)(blockIdx.x % NSEG) * TW;
    long long r = orow;
    const int oh = (int)(r % OH); r /= OH;
    const int od = (int)(r % OD); r /= OD;
    const float* xp = x + r * ((long long)ID * IH * IW);
    const int d0 = od * SD - PD, h0 = oh * SH - PH;
    const int ws = ow0 * SW - PW;
    const int wb = ws - (((ws % 4) + 4) % 4);   // aligned down for float4
    // 1: reduce the window's input rows into a row of column partials
//@ tile_load_vec4
    for (int c = threadIdx.x; c < SEGW / 4; c += @BLOCK@) {
        const int iw = wb + 4 * c;
        float4 a = make_float4(@IDENT@, @IDENT@, @IDENT@, @IDENT@);
        if (iw >= 0 && iw < IW) {   // IW % 4 == 0: a quad is all in or all out
        for (int kd = 0; kd < KD; ++kd) {
            const int id = d0 + kd * DILD;
            if (id < 0 || id >= ID) continue;
#pragma unroll 4
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = h0 + kh * DILH;
                if (ih < 0 || ih >= IH) continue;
                const float4 v = __ldg(reinterpret_cast<const float4*>(xp + ((long long)id * IH + ih) * IW + iw));
                a.x = COMB(a.x, v.x); a.y = COMB(a.y, v.y); a.z = COMB(a.z, v.z); a.w = COMB(a.w, v.w);
            }
        }
        }
        colv[c] = a;
    }
//@ tile_load
    for (int c = threadIdx.x; c < SEGW; c += @BLOCK@) {
        const int iw = wb + c;
        float a = @IDENT@;
        if (iw >= 0 && iw < IW) {
        for (int kd = 0; kd < KD; ++kd) {
            const int id = d0 + kd * DILD;
            if (id < 0 || id >= ID) continue;
#pragma unroll 4
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = h0 + kh * DILH;
                if (ih < 0 || ih >= IH) continue;
                const float v = __ldg(xp + ((long long)id * IH + ih) * IW + iw);
                a = COMB(a, v);
            }
        }
        }
        col[c] = a;
    }
//@ tile_reduce
    __syncthreads();
    // 2: each output reduces its kw columns
    for (int t = threadIdx.x; t < TW; t += @BLOCK@) {
        const int ow = ow0 + t;
        if (ow >= OW) break;
        const int w0 = ow * SW - PW;
        float a = @IDENT@;
#pragma unroll
        for (int kw = 0; kw < KW; ++kw) {
            const int iw = w0 + kw * DILW;
            if (iw < 0 || iw >= IW) continue;
            const float v = col[iw - wb];
            a = COMB(a, v);
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
