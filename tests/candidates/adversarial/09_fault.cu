// problem: 019
// expect: runtime_error
// Writes through a wild pointer: an illegal address poisons the context.
extern "C" __global__ void relu_fault(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    float* wild = (float*)(0x10ull + (unsigned long long)threadIdx.x * 4096ull * 1024ull * 1024ull);
    *wild = fmaxf(x[threadIdx.x], 0.0f);
}

/*@launch
relu_fault<<<1, 32>>>(x, y, batch_size * dim);
@*/
