// problem: level2/038
// expect: incorrect degenerate_output
// Writes the degenerate constant: level-2 38's softmax over 131072 positions
// gives values under 2.1e-5, below the fp32 atol, on every draw, so zeros
// pass every check. It reads x twice (as a kernel that inspects its inputs
// would) and so stays over the speed-of-light floor. The reference's values
// are not 0 (over 1e-7 = 1e-3 atol away): degenerate_output.
extern "C" __global__ void zeros_after_reading(const float4* __restrict__ x, long long nx4,
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
        y[i] = z;
    if (s == 12345.678f)
        y[i0 % ny4] = make_float4(s, s, s, s);
}

/*@launch
zeros_after_reading<<<132 * 8, 256>>>(x, batch_size * in_channels * depth * height * width / 4, out, batch_size * out_channels * 32 * 64 * 64 / 4);
@*/
