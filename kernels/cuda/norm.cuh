// norm_stats, norm_rms, norm_row (kernels/builtin_norm.c): block sums, the
// statistics kernels and the row normalizations.
//@ block_sum2
__device__ __forceinline__ void block_sum2(double& a, double& b)
{
    __shared__ double ra[32], rb[32];
    for (int o = 16; o; o >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
    }
    if ((threadIdx.x & 31) == 0) { ra[threadIdx.x >> 5] = a; rb[threadIdx.x >> 5] = b; }
    __syncthreads();
    a = 0.0; b = 0.0;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++) { a += ra[w]; b += rb[w]; }
}

//@ part_head
extern "C" __global__ void __launch_bounds__(@BLOCK@)
norm_part(const float* __restrict__ x, double* __restrict__ part, long long L)
{
    const long long row = blockIdx.y;
    double a, b;
//@ stats_part_vec4
    if ((L & 3) == 0) {
        const long long nv = L >> 2;
        const long long per = (nv + gridDim.x - 1) / gridDim.x;
        const long long lo = blockIdx.x * per;
        const long long hi = min(lo + per, nv);
        const float4* xv = reinterpret_cast<const float4*>(x + row * L);
        float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f, q0 = 0.f, q1 = 0.f, q2 = 0.f, q3 = 0.f;
        for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) {
            float4 v = __ldg(xv + i);
            s0 += v.x; s1 += v.y; s2 += v.z; s3 += v.w;
            q0 = fmaf(v.x, v.x, q0); q1 = fmaf(v.y, v.y, q1);
            q2 = fmaf(v.z, v.z, q2); q3 = fmaf(v.w, v.w, q3);
        }
        a = ((double)s0 + (double)s1) + ((double)s2 + (double)s3);
        b = ((double)q0 + (double)q1) + ((double)q2 + (double)q3);
    } else
//@ stats_part_scalar
    {
        const long long per = (L + gridDim.x - 1) / gridDim.x;
        const long long lo = blockIdx.x * per;
        const long long hi = min(lo + per, L);
        const float* xr = x + row * L;
        float s0 = 0.f, s1 = 0.f, q0 = 0.f, q1 = 0.f;
        long long i = lo + threadIdx.x;
        for (; i + blockDim.x < hi; i += 2 * blockDim.x) {
            float v = __ldg(xr + i), w = __ldg(xr + i + blockDim.x);
            s0 += v; s1 += w; q0 = fmaf(v, v, q0); q1 = fmaf(w, w, q1);
        }
        if (i < hi) { float v = __ldg(xr + i); s0 += v; q0 = fmaf(v, v, q0); }
        a = (double)s0 + (double)s1;
        b = (double)q0 + (double)q1;
    }
    block_sum2(a, b);
    if (threadIdx.x == 0) {
        const long long k = row * gridDim.x + blockIdx.x;
        part[2 * k] = a;
        part[2 * k + 1] = b;
    }
}

//@ stats_final_head
// Block t reduces statistic t's parts into stats[2t] = mean,
// stats[2t+1] = 1/sqrt(var + eps) (biased variance, in double).
extern "C" __global__ void __launch_bounds__(256)
norm_final(const double* __restrict__ part, float* __restrict__ stats, long long np,
           long long C, long long chunks, long long count, double eps)
{
    const long long t = blockIdx.x;
    double a = 0.0, b = 0.0;
    for (long long k = threadIdx.x; k < np; k += blockDim.x) {
//@ stats_final_sum
        a += part[2 * j];
        b += part[2 * j + 1];
    }
    block_sum2(a, b);
    if (threadIdx.x == 0) {
//@ stats_final_out
        const double mean = a / (double)count;
        double var = b / (double)count - mean * mean;
        if (var < 0.0) var = 0.0;
        stats[2 * t] = (float)mean;
        stats[2 * t + 1] = (float)(1.0 / sqrt(var + eps));
//@ stats_final_end
    }
}

//@ apply_head
extern "C" __global__ void __launch_bounds__(@ABLOCK@)
norm_apply(const float* __restrict__ x, const float* __restrict__ stats,
           const float* __restrict__ weight, const float* __restrict__ bias,
           float* __restrict__ y, long long L, long long C, long long rps)
{
    const long long row = blockIdx.y;
//@ stats_apply_vec4
    if ((L & 3) == 0) {
        const long long nv = L >> 2;
        const float4* xv = reinterpret_cast<const float4*>(xr);
        float4* yv = reinterpret_cast<float4*>(yr);
        const long long base = (long long)blockIdx.x * @SPAN@ + threadIdx.x;
        float4 v[@APT@];
#pragma unroll
        for (int k = 0; k < @APT@; k++) {
            const long long i = base + (long long)k * @ABLOCK@;
            if (i < nv) v[k] = __ldg(xv + i);
        }
#pragma unroll
        for (int k = 0; k < @APT@; k++) {
            const long long i = base + (long long)k * @ABLOCK@;
            if (i >= nv) break;
            float4 u = v[k];
//@ rms_regs
        @VT@ r[C_];
#pragma unroll
        for (int c = 0; c < C_; c++) {
            if (c >= C) break;
            const @VT@ v = __ldg(xp + (long long)c * nq);
            r[c] = v;
//@ rms_tail
            __stcs(yp + (long long)c * nq, v);
        }
        return;
    }
    for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < HW;
         q += (long long)gridDim.x * blockDim.x) {
        float s0 = 0.0f;
        for (long long c = 0; c < C; c++) {
            const float v = x[off + c * HW + q];
            s0 = fmaf(v, v, s0);
        }
        const float f0 = 1.0f / sqrtf(s0 / (float)C + eps);
        for (long long c = 0; c < C; c++)
            y[off + c * HW + q] = x[off + c * HW + q] * f0;
    }
}

//@ row_head
    __shared__ float red[32];
    const float* xr = x + (long long)blockIdx.x * len;
    float* yr = y + (long long)blockIdx.x * len;
    long long h = ((16 - ((unsigned long long)xr & 15)) & 15) >> 2;
    if (h > len || ((((unsigned long long)xr ^ (unsigned long long)yr) & 15) != 0))
        h = len;	// x and y misaligned differently: all scalar
    const long long nb = (len - h) >> 2;
    const long long t0 = h + 4 * nb;
    const float4* xv = reinterpret_cast<const float4*>(xr + h);
    float4* yv = reinterpret_cast<float4*>(yr + h);
    const int tid = threadIdx.x;
    float s = 0.0f;
    for (long long i = tid; i < h; i += NT) s += ACC(xr[i]);
    for (long long i = t0 + tid; i < len; i += NT) s += ACC(xr[i]);
//@ row_regs
    float4 r[KREG];
#pragma unroll
    for (int k = 0; k < KREG; k++) {
        const long long i = (long long)k * NT + tid;
        if (i < nb) { r[k] = __ldg(xv + i); s += ACC4(r[k]); }
    }
//@ row_rest
#pragma unroll 4
    for (long long i = (long long)KREG * NT + tid; i < nb; i += NT) {
        const float4 v = __ldg(xv + i);
//@ row_sum
        s += ACC4(v);
    }
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((tid & 31) == 0) red[tid >> 5] = s;
    __syncthreads();
    s = 0.0f;
    for (int w = 0; w < NT / 32; w++) s += red[w];
//@ row_apply_regs
#pragma unroll
    for (int k = 0; k < KREG; k++) {
        const long long i = (long long)k * NT + tid;
        if (i < nb) {
            float4 v = r[k];
            v.x *= f; v.y *= f; v.z *= f; v.w *= f;
            __stcs(yv + i, v);
        }
    }
//@ row_apply_end
        v.x *= f; v.y *= f; v.z *= f; v.w *= f;
        __stcs(yv + i, v);
    }
}

