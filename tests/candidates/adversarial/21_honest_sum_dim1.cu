// problem: 047
// expect: correct
// Honest reduction: one thread per output column, coalesced over dim2.
extern "C" __global__ void sum_dim1(const float* __restrict__ x, float* __restrict__ y,
                                   long long B, long long D1, long long D2)
{
    long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (o >= B * D2) return;
    long long b = o / D2, j = o % D2;
    const float* p = x + b * D1 * D2 + j;
    float s = 0.0f;
    for (long long k = 0; k < D1; k++) s += p[k * D2];
    y[o] = s;
}

/*@launch
sum_dim1<<<ceil_div(batch_size * dim2, 256), 256>>>(x, y, batch_size, dim1, dim2);
@*/
