// problem: 019
// expect: correct
// Launch-bound on purpose (tests/gpu/g0475-profile.sh, on a small ReLU):
// 64 launches of a tiny kernel, each over a 64th of the elements.
extern "C" __global__ void relu_slice(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
for (int j = 0; j < 64; j += 1) {
    relu_slice<<<ceil_div(batch_size * dim / 64, 256), 256>>>(x + j * (batch_size * dim / 64), y + j * (batch_size * dim / 64), batch_size * dim / 64);
}
@*/
