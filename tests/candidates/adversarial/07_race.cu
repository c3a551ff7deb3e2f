// problem: 047
// expect: incorrect
// Sum over dim1 with unsynchronised read-modify-write from many blocks:
// lost updates, a different answer each run.
extern "C" __global__ void sum_racy(const float* __restrict__ x, float* y,
                                   long long B, long long D1, long long D2)
{
    long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (o >= B * D2) return;
    long long b = o / D2, j = o % D2;
    long long chunk = D1 / gridDim.y, k0 = blockIdx.y * chunk;
    float s = 0.0f;
    for (long long k = k0; k < k0 + chunk; k++) s += x[b * D1 * D2 + k * D2 + j];
    if (blockIdx.y == 0) y[o] = 0.0f;
    volatile float* vy = y;
    float old = vy[o];
    vy[o] = old + s;
}

/*@launch
sum_racy<<<dim3(ceil_div(batch_size * dim2, 256), 16), 256>>>(x, y, batch_size, dim1, dim2);
@*/
