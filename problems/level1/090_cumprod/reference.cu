// Reference: inclusive prefix product along dim 1; one thread per row, sequential along the row in double.
extern "C" __global__ void cumprod_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long rows, long long cols)
{
    long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double p = 1.0;
    for (long long j = 0; j < cols; j++) { p *= (double)xr[j]; yr[j] = (float)p; }
}

/*@launch
cumprod_ref<<<ceil_div(batch_size, 128), 128>>>(x, y, batch_size, length);
@*/
