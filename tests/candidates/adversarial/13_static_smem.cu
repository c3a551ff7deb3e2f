// problem: 019
// expect: compile_error
// Static shared memory over what ptxas allows for one block.
extern "C" __global__ void relu_static_smem(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    __shared__ float s[80000];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    y[threadIdx.x] = s[255 - threadIdx.x];
}

/*@launch
relu_static_smem<<<1, 256>>>(x, y, batch_size * dim);
@*/
