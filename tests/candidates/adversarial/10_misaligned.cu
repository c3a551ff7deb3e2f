// problem: 019
// expect: runtime_error
// A misaligned 16-byte vector store.
extern "C" __global__ void relu_misaligned(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    float4* p = (float4*)((char*)y + 4);
    p[threadIdx.x] = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
}

/*@launch
relu_misaligned<<<1, 32>>>(x, y, batch_size * dim);
@*/
