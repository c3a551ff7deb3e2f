// problem: relu
// expect: format_error 3:4: universal character name `\\u` outside a literal
_Pr\u0061gma("message(\"the pragma ran\")")
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_f32<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
