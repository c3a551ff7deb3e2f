// The loss templates (kernels/builtin_loss.c): the final kernel, block sums,
// the per-block partial sums (mean losses) and the per-row losses.
//@ final
extern "C" __global__ void __launch_bounds__(256)
loss_final(const double* __restrict__ part, long long np, float* __restrict__ loss,
           long long count)
{
    __shared__ double ws[8];
    double v = 0.0;
    for (long long i = threadIdx.x; i < np; i += blockDim.x) v += part[i];
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int w = 0; w < (int)(blockDim.x >> 5); w++) t += ws[w];
        loss[0] = (float)(t / (double)count);
    }
}

//@ block_sum
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int w = 0; w < (int)(blockDim.x >> 5); w++) t += ws[w];
        part[blockIdx.x] = t;
    }
}

//@ part_head
extern "C" __global__ void __launch_bounds__(@BLOCK@)
loss_part(const float* __restrict__ a, const float* __restrict__ b,
          double* __restrict__ part, long long n, long long cols)
{
    __shared__ double ws[32];
    const long long nv = n / @VEC@;
    const @VT@* av = reinterpret_cast<const @VT@*>(a);
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    @ACC@ acc[@UNROLL@];
#pragma unroll
    for (int u = 0; u < @UNROLL@; u++) acc[u] = 0;
//@ part_cols
    const @VT@* bv = reinterpret_cast<const @VT@*>(b);
    const long long sm = (stride * @VEC@) % cols;
    long long col = (i * @VEC@) % cols;
    for (; i + @UNROLL_M1@ * stride < nv; i += @UNROLL@ * stride) {
        @VT@ x[@UNROLL@], y[@UNROLL@];
        long long cu = col;
#pragma unroll
        for (int u = 0; u < @UNROLL@; u++) {
            x[u] = av[i + u * stride]; y[u] = bv[cu / @VEC@];
            cu += sm; if (cu >= cols) cu -= cols;
        }
        col = cu;
#pragma unroll
        for (int u = 0; u < @UNROLL@; u++) acc[u] += loss4(x[u], y[u]);
    }
    for (; i < nv; i += stride) {
        acc[0] += loss4(av[i], bv[col / @VEC@]);
        col += sm; if (col >= cols) col -= cols;
    }
//@ part_flat
    const @VT@* bv = reinterpret_cast<const @VT@*>(b);
    for (; i + @UNROLL_M1@ * stride < nv; i += @UNROLL@ * stride) {
        @VT@ x[@UNROLL@], y[@UNROLL@];
#pragma unroll
        for (int u = 0; u < @UNROLL@; u++) { x[u] = av[i + u * stride]; y[u] = bv[i + u * stride]; }
#pragma unroll
        for (int u = 0; u < @UNROLL@; u++) acc[u] += loss4(x[u], y[u]);
    }
    for (; i < nv; i += stride) acc[0] += loss4(av[i], bv[i]);
//@ part_tail
    double v = 0.0;
#pragma unroll
    for (int u = 0; u < @UNROLL@; u++) v += (double)acc[u];
    long long e = nv * @VEC@ + blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e < n) v += (double)lossf(a[e], b[@B_INDEX@]);
//@ comb
__device__ __forceinline__ void comb(float& m, float& s, float m2, float s2) {
    float mm = fmaxf(m, m2);
    if (mm == -__int_as_float(0x7f800000)) return;
    s = s * @EXP@(m - mm) + s2 * @EXP@(m2 - mm);
    m = mm;
}
//@ upd4
__device__ __forceinline__ void upd4(float& m, float& s, float4 v) {
    float mx = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
    if (mx > m) { s = s * @EXP@(m - mx); m = mx; }
    s += @EXP@(v.x - m) + @EXP@(v.y - m) + @EXP@(v.z - m) + @EXP@(v.w - m);
}
//@ rows_head
extern "C" __global__ void __launch_bounds__(@BLOCK@)
loss_rows(const float* __restrict__ a, const float* __restrict__ pp,
          const float* __restrict__ nn, double* __restrict__ part, long long rows,
          long long cols, float margin)
{
//@ rows_setup
    __shared__ double ws[32];
    const int lane = threadIdx.x & 31, W = blockDim.x >> 5;
    const long long nv = cols / @VEC@;
    double v = 0.0;
    for (long long r = blockIdx.x * (long long)W + (threadIdx.x >> 5); r < rows;
         r += (long long)gridDim.x * W) {
        const @VT@* ar = reinterpret_cast<const @VT@*>(a + r * cols);
        long long j = lane;
//@ rows_lse
        float m = -__int_as_float(0x7f800000), s = 0.0f;
        for (; j + @UNROLL_M1@ * 32 < nv; j += @UNROLL@ * 32) {
            @VT@ x[@UNROLL@];
#pragma unroll
            for (int u = 0; u < @UNROLL@; u++) x[u] = ar[j + u * 32];
#pragma unroll
            for (int u = 0; u < @UNROLL@; u++) upd4(m, s, x[u]);
        }
        for (; j < nv; j += 32) upd4(m, s, ar[j]);
        for (long long k = nv * @VEC@ + lane; k < cols; k += 32) upd(m, s, a[r * cols + k]);
        for (int o = 16; o; o >>= 1) {
            float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
            comb(m, s, m2, s2);
        }
        if (lane == 0) {
            long long t = tg[r];
            float pt = t >= 0 && t < cols ? a[r * cols + t] : __int_as_float(0x7fc00000);
            v += (double)(m + @LOG@(s) - pt);
        }
    }
//@ rows_triplet
        const @VT@* pr = reinterpret_cast<const @VT@*>(pp + r * cols);
        const @VT@* nr = reinterpret_cast<const @VT@*>(nn + r * cols);
        float sp = 0.0f, sn = 0.0f;
        for (; j + @UNROLL_M1@ * 32 < nv; j += @UNROLL@ * 32) {
            @VT@ x[@UNROLL@], y[@UNROLL@], z[@UNROLL@];
#pragma unroll
            for (int u = 0; u < @UNROLL@; u++) { x[u] = ar[j + u * 32]; y[u] = pr[j + u * 32]; z[u] = nr[j + u * 32]; }
#pragma unroll
            for (int u = 0; u < @UNROLL@; u++) tri(sp, sn, x[u], y[u], z[u]);
        }
        for (; j < nv; j += 32) tri(sp, sn, ar[j], pr[j], nr[j]);
        for (long long k = nv * @VEC@ + lane; k < cols; k += 32)
            tri(sp, sn, a[r * cols + k], pp[r * cols + k], nn[r * cols + k]);
        for (int o = 16; o; o >>= 1) {
            sp += __shfl_xor_sync(0xffffffffu, sp, o);
            sn += __shfl_xor_sync(0xffffffffu, sn, o);
        }
        if (lane == 0) {
            float d = sqrtf(sp) - sqrtf(sn) + margin;
            v += (double)(d > 0.0f ? d : 0.0f);
        }
    }
