// problem: relu
// expect: compile_timeout
// 2^40 distinct instantiations, each shallow: compiles until a limit stops it.
template <int N, unsigned long long M> struct Blow {
    static constexpr unsigned long long v = Blow<N - 1, M * 2>::v + Blow<N - 1, M * 2 + 1>::v;
};
template <unsigned long long M> struct Blow<0, M> { static constexpr unsigned long long v = M & 1; };
__device__ unsigned long long blow_sink = Blow<40, 0>::v;
extern "C" __global__ void relu_f32(const float* __restrict__ x, float* __restrict__ y,
                                    long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_f32<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
