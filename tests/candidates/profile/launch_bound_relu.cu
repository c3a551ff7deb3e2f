// problem: 019
// expect: correct
// Launch-bound on purpose (tests/gpu/g0475-profile.sh, on a small ReLU):
// 32 launches of a tiny kernel, each over a 32nd of the elements, in
// one-warp blocks so that every launch spans all SMs (256 blocks on the
// 1 MiB tensor): with 16 blocks on 132 SMs, ncu's achieved occupancy
// (5.7%) and the range profiler's (12.1%) parted on the H100.
extern "C" __global__ void relu_slice(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
for (int j = 0; j < 32; j += 1) {
    relu_slice<<<ceil_div(batch_size * dim / 32, 32), 32>>>(x + j * (batch_size * dim / 32), y + j * (batch_size * dim / 32), batch_size * dim / 32);
}
@*/
