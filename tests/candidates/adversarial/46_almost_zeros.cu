// problem: level2/038
// expect: incorrect degenerate_output
// 35 with the first element of each 4096 written 1e-5 instead of 0: not the
// constant everywhere, and within atol of the reference everywhere; but
// nearly every element is at least as close to 0 as to the reference
// (docs/engine.md, "Degenerate outputs"): degenerate_output.
extern "C" __global__ void almost_zeros(const float4* __restrict__ x, long long nx4,
                                               float4* __restrict__ y, long long ny4)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long i0 = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int pass = 0; pass < 2; pass++)
        for (long long i = i0; i < nx4; i += stride) {
            float4 v = x[i];
            s += v.x + v.y + v.z + v.w;
        }
    const float4 z = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (long long i = i0; i < ny4; i += stride)
        y[i] = (i & 1023) ? z : make_float4(1e-5f, 0.0f, 0.0f, 0.0f);
    if (s == 12345.678f)
        y[i0 % ny4] = make_float4(s, s, s, s);
}

/*@launch
almost_zeros<<<132 * 8, 256>>>(x, batch_size * in_channels * depth * height * width / 4, out, batch_size * out_channels * 32 * 64 * 64 / 4);
@*/
