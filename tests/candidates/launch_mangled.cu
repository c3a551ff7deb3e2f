// problem: relu
// expect: format_error 6:1: kernel `relu_mangled` is __global__ but not extern "C"
__global__ void relu_mangled(const float* x, float* y, long long n) { }

/*@launch
relu_mangled<<<1, 256>>>(x, y, 1);
@*/
