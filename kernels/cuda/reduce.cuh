// reduce (kernels/builtin_reduce.c): the reduction kernel and its tail loop.
//@ kernel
extern "C" __global__ void __launch_bounds__(@BLOCK@)
reduce_dim(const float* __restrict__ x, @OUT_T@* __restrict__ y, long long outer,
           long long r, long long inner)
{
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= outer * inner) return;
    long long o = t / inner, i = t - o * inner;
    const float* p = x + o * r * inner + i;
    float a[@UNROLL@]; long long ix[@UNROLL@];
#pragma unroll
    for (int u = 0; u < @UNROLL@; u++) { a[u] = @INIT@; ix[u] = 0; }
    long long k = 0;
    for (; k + @UNROLL@ <= r; k += @UNROLL@) {
        float vs[@UNROLL@];
#pragma unroll
        for (int u = 0; u < @UNROLL@; u++) vs[u] = p[(k + u) * inner];
#pragma unroll
        for (int u = 0; u < @UNROLL@; u++) { float v = vs[u];
//@ tail
        }
    }
    for (; k < r; k++) { float v = p[k * inner]; const int u = 0; const long long kk = k; (void)kk;
