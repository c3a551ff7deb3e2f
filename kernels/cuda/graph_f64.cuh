// The graph template's double-precision path (kernels/graph/builtin_graph_f64.c):
// each float32 input is copied into a double buffer before the graph runs and
// the double result is rounded into the float32 output after it.
//@ convert
extern "C" __global__ void @NAME@(const @FROM@* __restrict__ x, @TO@* __restrict__ y, long long n)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += step)
        y[i] = (@TO@)x[i];
}

