// diagmm (kernels/builtin_mv.c): diag(A) B, rows scaled in float4 or scalars.
//@ head
extern "C" __global__ void __launch_bounds__(NT)
diagmm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
       long long R, long long W)
{
    for (long long r = blockIdx.y; r < R; r += gridDim.y) {
        const float d = __ldg(A + r);
        const float* br = B + r * W;
        float* cr = C + r * W;
//@ vec4
        if ((W & 3) == 0) {
            const long long w4 = W >> 2;
            const long long j0 = (long long)blockIdx.x * (NT * ILP) + threadIdx.x;
            float4 v[ILP];
#pragma unroll
            for (int u = 0; u < ILP; u++)
                if (j0 + u * NT < w4) v[u] = __ldg(reinterpret_cast<const float4*>(br) + j0 + u * NT);
#pragma unroll
            for (int u = 0; u < ILP; u++)
                if (j0 + u * NT < w4)
                    __stcs(reinterpret_cast<float4*>(cr) + j0 + u * NT,
                           make_float4(d * v[u].x, d * v[u].y, d * v[u].z, d * v[u].w));
            continue;
        }
        // unaligned rows: the same span of 4 * NT * ILP elements, one at a time
        for (long long j = (long long)blockIdx.x * (4 * NT * ILP) + threadIdx.x;
             j < min(W, (long long)(blockIdx.x + 1) * (4 * NT * ILP)); j += NT)
            cr[j] = d * br[j];
//@ scalar
        const long long j0 = (long long)blockIdx.x * (NT * ILP) + threadIdx.x;
        float v[ILP];
#pragma unroll
        for (int u = 0; u < ILP; u++)
            if (j0 + u * NT < W) v[u] = __ldg(br + j0 + u * NT);
#pragma unroll
        for (int u = 0; u < ILP; u++)
            if (j0 + u * NT < W) __stcs(cr + j0 + u * NT, d * v[u]);
