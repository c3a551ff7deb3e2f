// problem: 019
// expect: timeout
// Never returns.
extern "C" __global__ void relu_spin(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    volatile int forever = 1;
    while (forever) { }
}

/*@launch
relu_spin<<<1, 32>>>(x, y, batch_size * dim);
@*/
