// problem: 019
// expect: incorrect output_not_written
// An empty kernel.
extern "C" __global__ void relu_nop(const float* __restrict__ x, float* __restrict__ y, long long n)
{
}

/*@launch
relu_nop<<<1, 32>>>(x, y, batch_size * dim);
@*/
