// problem: 019
// expect: incorrect
// Does the work only when its output holds the harness's poison (NaN
// bytes) and otherwise returns at once: a harness that poisons only the
// trials it checks would time it at the speed of doing nothing. Outputs
// are pre-filled with the poison or random values by a secret coin before
// every launch, and every launch is checked: the first random fill fails it.
extern "C" __global__ void relu_sniff(const float* __restrict__ x, float* __restrict__ y, long long n)
{
    if (y[0] == y[0]) return;   /* not NaN: "not a checked trial" */
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

/*@launch
relu_sniff<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);
@*/
