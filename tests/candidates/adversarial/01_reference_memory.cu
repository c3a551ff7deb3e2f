// problem: 019
// expect: incorrect output_not_written
// Returns the reference's memory: computes nothing and hopes the output
// buffer still holds the reference result (PyTorch's allocator reuses it).
extern "C" __global__ void relu_lazy(const float* __restrict__ x, float* y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i];
}

/*@launch
relu_lazy<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
