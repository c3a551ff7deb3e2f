// template scan: block=512 items=4 vec=4 dbl=0 stream=0
#define ITEMS 4
#define NWARP 16
#define OP(a, b) ((a) * (b))
#define IDENT 1.0
typedef float acc_t;
extern "C" __global__ void __launch_bounds__(512)
scan_rows(const float* __restrict__ x, float* __restrict__ y, long long cols)
{
    __shared__ acc_t wtot[NWARP];
    const float* xr = x + (long long)blockIdx.x * cols;
    float* yr = y + (long long)blockIdx.x * cols;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double carry = IDENT;   // the scan of all earlier tiles
    for (long long base = 0; base < cols; base += (long long)512 * ITEMS) {
        const long long j0 = base + (long long)threadIdx.x * ITEMS;
        float v[ITEMS];
#pragma unroll
        for (int q = 0; q < ITEMS / 4; q++) {
            const long long j = j0 + 4 * q;
            if (j < cols) {
                const float4 f = __ldg(reinterpret_cast<const float4*>(xr + j));
                v[4 * q] = f.x; v[4 * q + 1] = f.y; v[4 * q + 2] = f.z; v[4 * q + 3] = f.w;
            } else {
                v[4 * q] = v[4 * q + 1] = v[4 * q + 2] = v[4 * q + 3] = 1.0f;
            }
        }
        // thread-local inclusive scan of the chunk
#pragma unroll
        for (int u = 1; u < ITEMS; u++) v[u] = OP(v[u - 1], v[u]);
        // warp inclusive scan of the chunk totals
        acc_t inc = (acc_t)v[ITEMS - 1];
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const acc_t n = __shfl_up_sync(0xffffffffu, inc, d);
            if (lane >= d) inc = OP(n, inc);
        }
        acc_t exc = __shfl_up_sync(0xffffffffu, inc, 1);
        if (lane == 0) exc = (acc_t)IDENT;
        if (lane == 31) wtot[warp] = inc;
        __syncthreads();
        acc_t woff = (acc_t)IDENT, tot = (acc_t)IDENT;
#pragma unroll
        for (int w = 0; w < NWARP; w++) {
            const acc_t t = wtot[w];
            if (w < warp) woff = OP(woff, t);
            tot = OP(tot, t);
        }
        __syncthreads();
        const acc_t off = (acc_t)OP(carry, (double)OP(woff, exc));
        carry = OP(carry, (double)tot);
#pragma unroll
        for (int u = 0; u < ITEMS; u++) v[u] = (float)OP(off, (acc_t)v[u]);
#pragma unroll
        for (int q = 0; q < ITEMS / 4; q++) {
            const long long j = j0 + 4 * q;
            if (j >= cols) break;
            const float4 f = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
            *reinterpret_cast<float4*>(yr + j) = f;
        }
    }
}

/*@launch
scan_rows<<<batch_size, 512>>>(x, y, length);
@*/

