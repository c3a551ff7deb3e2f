// problem: relu
// expect: format_error 4:20: `##` between two macro parameters
// __has_include pasted together from two harmless names.
#define CAT(a, b) a##b
#define XCAT(a, b) CAT(a, b)
#if XCAT(__has_, include)(</etc/passwd>)
#error /etc/passwd exists
#endif
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_f32<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
