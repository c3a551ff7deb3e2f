// problem: cumsum
// expect: ok
// Problem 89 (inclusive prefix sum along dim 1) with one launch per time
// step: a loop in the launch block, the step's column by an element offset
// (x + t), the running sums in a zeroed double scratch. Exact as the
// reference (double, sequential); tests loops end to end.
extern "C" __global__ void cumsum_step(const float* __restrict__ xt, float* __restrict__ yt,
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
for (int t = 0; t < length; ++t) {
    cumsum_step<<<ceil_div(batch_size, 128), 128>>>(x + t, y + t, acc, batch_size, length);
}
@*/
