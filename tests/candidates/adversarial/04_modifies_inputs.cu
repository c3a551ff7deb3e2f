// problem: 019
// expect: incorrect inputs_modified
// Right output, but the input is overwritten in place on the way.
extern "C" __global__ void relu_inplace(float* x, float* y, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = fmaxf(x[i], 0.0f);
        y[i] = x[i];
        x[i] = 0.0f;
    }
}

/*@launch
relu_inplace<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
