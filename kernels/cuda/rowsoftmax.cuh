// rowsoftmax (kernels/builtin_row.c): the online-softmax row kernel.
//@ defines
#define NEG_INF (-__int_as_float(0x7f800000))
__device__ __forceinline__ void comb(float& m, float& s, float m2, float s2) {
    float mm = fmaxf(m, m2);
    if (mm == NEG_INF) return;
//@ kernel_head
extern "C" __global__ void __launch_bounds__(@BLOCK@)
row_softmax(const float* __restrict__ x, float* __restrict__ y, long long cols)
{
    __shared__ float sm[32], ss[32];
    const float* xr = x + blockIdx.x * cols;
    float* yr = y + blockIdx.x * cols;
    const long long nv = cols / @VEC@;
    const @VT@* xv = reinterpret_cast<const @VT@*>(xr);
    float m = NEG_INF, s = 0.0f;
//@ max_reduce
    }
    for (int o = 16; o; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0) sm[threadIdx.x >> 5] = m;
    __syncthreads();
    m = NEG_INF;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++) m = fmaxf(m, sm[w]);
    __syncthreads();
    for (long long i = threadIdx.x; i < nv; i += blockDim.x) {
//@ comb_reduce
    for (int o = 16; o; o >>= 1) {
        float m2 = __shfl_xor_sync(0xffffffffu, m, o), s2 = __shfl_xor_sync(0xffffffffu, s, o);
        comb(m, s, m2, s2);
    }
    if ((threadIdx.x & 31) == 0) { sm[threadIdx.x >> 5] = m; ss[threadIdx.x >> 5] = s; }
    __syncthreads();
    m = NEG_INF; s = 0.0f;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++) comb(m, s, sm[w], ss[w]);
//@ out_vec4
        float4 v = xv[i];
        v.x = OUT(v.x); v.y = OUT(v.y); v.z = OUT(v.z); v.w = OUT(v.w);
        yv[i] = v;
