// Reference: exclusive prefix sum along dim 1; one thread per row, sequential along the row in double.
extern "C" __global__ void cumsum_exclusive_ref(const float* __restrict__ x, float* __restrict__ y,
                                   long long rows, long long cols)
{
    long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + r * cols;
    float* yr = y + r * cols;
    double s = 0.0;
    for (long long j = 0; j < cols; j++) { yr[j] = (float)s; s += (double)xr[j]; }
}

/*@launch
cumsum_exclusive_ref<<<ceil_div(batch_size, 128), 128>>>(x, y, batch_size, length);
@*/
