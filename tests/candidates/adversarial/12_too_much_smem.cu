// problem: 019
// expect: format_error
// Dynamic shared memory over the opt-in limit (227 KiB on sm_90).
extern "C" __global__ void relu_smem(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    extern __shared__ float s[];
    s[threadIdx.x] = 0.0f;
}

/*@launch
relu_smem<<<1, 256, 300000>>>(x, y, batch_size * dim);
@*/
