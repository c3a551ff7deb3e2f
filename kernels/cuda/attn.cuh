// attn-flash (kernels/builtin_attn.c): the flash-attention kernel sdpa_flash
// section by section; tile_load (K or V tile from @SRC@) is appended twice and
// the exponentials (expf or __expf) come from C between the sections.
//@ tile_load
        for (int e = tid; e < 32 * D4; e += NT) {
            int k = e / D4, j = e - k * D4;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (k0 + k < S) v = reinterpret_cast<const float4*>(@SRC@ + (k0 + k) * D)[j];
            reinterpret_cast<float4*>(KV + k * DP)[j] = v;
        }
//@ head
extern "C" __global__ void __launch_bounds__(NT)
sdpa_flash(const float* __restrict__ Q, const float* __restrict__ K,
           const float* __restrict__ V, float* __restrict__ O, long long S, int D)
{
    extern __shared__ float smem[];
    const int D4 = D / 4, DP = D + 4, NW = NT / 32;
    float* Qs = smem;
    float* KV = Qs + BQ * D;
    float* Ps = KV + 32 * DP;
    float* al = Ps + BQ * 32;
    float* ls = al + BQ;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const long long nqt = (S + BQ - 1) / BQ;
    const long long bh = blockIdx.x / nqt, q0 = (blockIdx.x % nqt) * BQ;
    const long long base = bh * S * (long long)D;
    const float* Qb = Q + base;
    const float* Kb = K + base;
    const float* Vb = V + base;
    const float scale = 1.0f / sqrtf((float)D);
    for (int e = tid; e < BQ * D4; e += NT) {
        int r = e / D4, j = e - r * D4;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (q0 + r < S) v = reinterpret_cast<const float4*>(Qb + (q0 + r) * D)[j];
        reinterpret_cast<float4*>(Qs + r * D)[j] = v;
    }
    float m[RPW], l[RPW];
#pragma unroll
    for (int i = 0; i < RPW; i++) { m[i] = -__int_as_float(0x7f800000); l[i] = 0.0f; }
    float4 acc[BQ][MAXJ];
#pragma unroll
    for (int r = 0; r < BQ; r++)
#pragma unroll
        for (int jj = 0; jj < MAXJ; jj++) acc[r][jj] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (long long k0 = 0; k0 < S; k0 += 32) {
        __syncthreads();
//@ scores
        __syncthreads();
        {
            float4 sc[RPW];
#pragma unroll
            for (int i = 0; i < RPW; i++) sc[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            const float4* kr = reinterpret_cast<const float4*>(KV + lane * DP);
            for (int j = 0; j < D4; j++) {
                float4 kv = kr[j];
#pragma unroll
                for (int i = 0; i < RPW; i++) {
                    float4 qv = reinterpret_cast<const float4*>(Qs + (warp + NW * i) * D)[j];
                    sc[i].x = fmaf(qv.x, kv.x, sc[i].x); sc[i].y = fmaf(qv.y, kv.y, sc[i].y);
                    sc[i].z = fmaf(qv.z, kv.z, sc[i].z); sc[i].w = fmaf(qv.w, kv.w, sc[i].w);
                }
            }
#pragma unroll
            for (int i = 0; i < RPW; i++) {
                const int r = warp + NW * i;
                float x = k0 + lane < S ? ((sc[i].x + sc[i].y) + (sc[i].z + sc[i].w)) * scale
                                        : -__int_as_float(0x7f800000);
                float mt = x;
                for (int o = 16; o; o >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, o));
                const float mn = fmaxf(m[i], mt);
//@ softmax_update
                l[i] = l[i] * a + pr;
                m[i] = mn;
                Ps[r * 32 + lane] = pr;
                if (lane == 0) al[r] = a;
            }
        }
        __syncthreads();
//@ pv_store
        __syncthreads();
#pragma unroll
        for (int r = 0; r < BQ; r++) {
            const float a = al[r];
#pragma unroll
            for (int jj = 0; jj < MAXJ; jj++) {
                acc[r][jj].x *= a; acc[r][jj].y *= a; acc[r][jj].z *= a; acc[r][jj].w *= a;
            }
        }
#pragma unroll
        for (int jj = 0; jj < MAXJ; jj++) {
            const int j = tid + NT * jj;
            if (j >= D4) break;
            for (int k = 0; k < 32; k += 4) {
                const float4 v0 = reinterpret_cast<const float4*>(KV + (k + 0) * DP)[j];
                const float4 v1 = reinterpret_cast<const float4*>(KV + (k + 1) * DP)[j];
                const float4 v2 = reinterpret_cast<const float4*>(KV + (k + 2) * DP)[j];
                const float4 v3 = reinterpret_cast<const float4*>(KV + (k + 3) * DP)[j];
#pragma unroll
                for (int r = 0; r < BQ; r++) {
                    const float4 p4 = reinterpret_cast<const float4*>(Ps + r * 32)[k >> 2];
                    float4 c = acc[r][jj];
                    c.x = fmaf(p4.x, v0.x, c.x); c.y = fmaf(p4.x, v0.y, c.y); c.z = fmaf(p4.x, v0.z, c.z); c.w = fmaf(p4.x, v0.w, c.w);
                    c.x = fmaf(p4.y, v1.x, c.x); c.y = fmaf(p4.y, v1.y, c.y); c.z = fmaf(p4.y, v1.z, c.z); c.w = fmaf(p4.y, v1.w, c.w);
                    c.x = fmaf(p4.z, v2.x, c.x); c.y = fmaf(p4.z, v2.y, c.y); c.z = fmaf(p4.z, v2.z, c.z); c.w = fmaf(p4.z, v2.w, c.w);
                    c.x = fmaf(p4.w, v3.x, c.x); c.y = fmaf(p4.w, v3.y, c.y); c.z = fmaf(p4.w, v3.z, c.z); c.w = fmaf(p4.w, v3.w, c.w);
                    acc[r][jj] = c;
                }
            }
        }
    }
#pragma unroll
    for (int i = 0; i < RPW; i++) {
        float t = l[i];
        for (int o = 16; o; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
        if (lane == 0) ls[warp + NW * i] = t;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < BQ; r++) {
        if (q0 + r >= S) break;
        const float inv = 1.0f / ls[r];
        float4* orow = reinterpret_cast<float4*>(O + base + (q0 + r) * D);
#pragma unroll
        for (int jj = 0; jj < MAXJ; jj++) {
            const int j = tid + NT * jj;
            if (j < D4) {
                float4 c = acc[r][jj];
                c.x *= inv; c.y *= inv; c.z *= inv; c.w *= inv;
                orow[j] = c;
            }
        }
    }
}

