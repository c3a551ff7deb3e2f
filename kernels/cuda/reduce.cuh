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
//@ slab
// A block streams a contiguous slab: @COLS@ columns per thread, @BLOCK@ apart, of one outer
// index, row after row, so consecutive loads of the block cover consecutive addresses.
extern "C" __global__ void __launch_bounds__(@BLOCK@)
reduce_slab(const float* __restrict__ x, @OUT_T@* __restrict__ y, long long outer,
            long long r, long long inner)
{
    long long nb = (inner + @BLOCK@ * @COLS@ - 1) / (@BLOCK@ * @COLS@);
    long long o = blockIdx.x / nb, c0 = (blockIdx.x - o * nb) * (long long)(@BLOCK@ * @COLS@) + threadIdx.x;
    if (o >= outer) return;
    const float* p = x + o * r * inner;
    float a[@COLS@]; long long ix[@COLS@];
#pragma unroll
    for (int u = 0; u < @COLS@; u++) { a[u] = @INIT@; ix[u] = 0; }
#pragma unroll @RUNROLL@
    for (long long k = 0; k < r; k++) {
        const float* row = p + k * inner;
        float vs[@COLS@];
#pragma unroll
        for (int u = 0; u < @COLS@; u++) { long long c = c0 + u * @BLOCK@; vs[u] = c < inner ? row[c] : 0.0f; }
#pragma unroll
        for (int u = 0; u < @COLS@; u++) { float v = vs[u]; const long long kk = k; (void)kk;
