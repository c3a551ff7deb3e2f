// problem: 019
// expect: correct
// Honest elementwise: float4 loads and stores, grid-stride.
extern "C" __global__ void relu_vec4(const float4* __restrict__ x, float4* __restrict__ y, long long n4)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        v.x = fmaxf(v.x, 0.0f); v.y = fmaxf(v.y, 0.0f);
        v.z = fmaxf(v.z, 0.0f); v.w = fmaxf(v.w, 0.0f);
        y[i] = v;
    }
}

/*@launch
relu_vec4<<<132 * 16, 256>>>(x, y, batch_size * dim / 4);
@*/
