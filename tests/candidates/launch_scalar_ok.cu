// problem: relu
// expect: ok
extern "C" __global__ void leaky(const float* x, float* y, unsigned n, float slope, double eps)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : x[i] * slope + (float)eps * 0.f;
}

/*@launch
leaky<<<ceil_div(batch_size * dim, 256), min(256, max(32, dim))>>>(x, y, batch_size * dim, negative_slope, -1e-5);
@*/
