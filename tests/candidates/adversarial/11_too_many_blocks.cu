// problem: 019
// expect: format_error
// grid.y over the device limit (65535): refused before any launch.
extern "C" __global__ void relu_grid(const float* __restrict__ x, float* __restrict__ y, long long n)
{
}

/*@launch
relu_grid<<<dim3(1, 70000), 256>>>(x, y, batch_size * dim);
@*/
