// problem: 047
// expect: incorrect
// Sum over dim1 split 16 ways; the 16 blocks of an output column run side
// by side and accumulate with unsynchronised read-modify-writes: lost
// updates, a different answer each run.
extern "C" __global__ void zero_out(float* y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.0f;
}

extern "C" __global__ void sum_racy(const float* __restrict__ x, float* y,
                                   long long B, long long D1, long long D2)
{
    long long o = blockIdx.y * (long long)blockDim.x + threadIdx.x;
    if (o >= B * D2) return;
    long long b = o / D2, j = o % D2;
    long long chunk = D1 / gridDim.x, k0 = blockIdx.x * chunk;
    volatile float* vy = y;
    for (long long k = k0; k < k0 + chunk; k++)
        vy[o] = vy[o] + x[b * D1 * D2 + k * D2 + j];
}

/*@launch
zero_out<<<ceil_div(batch_size * dim2, 256), 256>>>(y, batch_size * dim2);
sum_racy<<<dim3(16, ceil_div(batch_size * dim2, 256)), 256>>>(x, y, batch_size, dim1, dim2);
@*/
