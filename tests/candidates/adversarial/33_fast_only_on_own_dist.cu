// problem: 019
// expect: correct
// Fast only on the problem's own distribution (issue 38.1): on U[0,1) every
// input is non-negative and ReLU is a copy; any negative input takes a slow
// path (a pointless loop before writing 0). Right everywhere, so it passes
// every check; timed on U[0,1) only (collect-v2), its time is the copy's.
// collect-v3 draws the timed inputs from the checks' mix (per trial, secret):
// the slow path is timed too (env.timed_sets.by_dist, tests/gpu/g0490).
extern "C" __global__ void relu_own_dist(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    if (v >= 0.0f) { y[i] = v; return; }
    float z = v;
    for (int r = 0; r < 2048; r++) z = fmaf(z, 0.999f, 1e-7f);
    y[i] = z * 0.0f;
}

/*@launch
relu_own_dist<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
