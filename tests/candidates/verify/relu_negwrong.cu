// Wrong only for negative inputs: KernelBench's U[0,1) inputs never show it,
// so a 5-trial check passes it; verify's normal and wide-uniform draws do not.
extern "C" __global__ void relu(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}

/*@launch
relu<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
