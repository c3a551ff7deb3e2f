// problem: cumsum
// expect: ok
// Problem 91 (suffix sum along dim 1): a loop counting down, in chunks of
// 8 time steps (a nested loop), one launch per step.
extern "C" __global__ void suffix_step(const float* __restrict__ xt, float* __restrict__ yt,
                                       double* __restrict__ acc, long long rows, long long cols)
{
    long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (r >= rows) return;
    double s = acc[r] + (double)xt[r * cols];
    acc[r] = s;
    yt[r * cols] = (float)s;
}

/*@launch
scratch zeroed double acc[batch_size];
for (int c = ceil_div(length, 8) - 1; c >= 0; c--) {
    for (int t = min(length - 1, c * 8 + 7); t >= c * 8; t -= 1) {
        suffix_step<<<dim3(ceil_div(batch_size, 64)), dim3(64)>>>(x + t, y + t, acc, batch_size, length);
    }
}
@*/
