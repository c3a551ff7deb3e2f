// problem: relu
// expect: format_error 5:5: `_CCCL_HAS_INCLUDE` is not allowed
// libcu++ wraps __has_include: the file probe under another name.
#include <cuda/std/cstdint>
#if _CCCL_HAS_INCLUDE(</etc/passwd>)
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
