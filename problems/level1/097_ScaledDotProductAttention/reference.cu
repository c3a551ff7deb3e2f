// Reference: one block (256 threads) per query row; scores in double (one warp
// per key, lanes over the embedding), softmax in double, then P V in double.
extern "C" __global__ void sdpa_ref(const float* __restrict__ Q, const float* __restrict__ K,
                                    const float* __restrict__ V, float* __restrict__ out,
                                    long long rows, long long S, long long D)
{
    extern __shared__ double p[];          // S scores
    __shared__ double red[256];
    long long row = blockIdx.x;
    if (row >= rows) return;
    long long bh = row / S;
    const float* q = Q + row * D;
    const float* Kb = K + bh * S * D;
    const float* Vb = V + bh * S * D;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    double scale = 1.0 / sqrt((double)D);
    for (long long k = warp; k < S; k += blockDim.x / 32) {
        double s = 0.0;
        for (long long d = lane; d < D; d += 32) s += (double)q[d] * (double)Kb[k * D + d];
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
        if (lane == 0) p[k] = s * scale;
    }
    __syncthreads();
    double m = -1.0e300;
    for (long long k = threadIdx.x; k < S; k += blockDim.x) m = fmax(m, p[k]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    double sum = 0.0;
    for (long long k = threadIdx.x; k < S; k += blockDim.x) {
        p[k] = exp(p[k] - m);
        sum += p[k];
    }
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    sum = red[0];
    for (long long d = threadIdx.x; d < D; d += blockDim.x) {
        double acc = 0.0;
        for (long long k = 0; k < S; k++) acc += p[k] * (double)Vb[k * D + d];
        out[row * D + d] = (float)(acc / sum);
    }
}

/*@launch
sdpa_ref<<<batch_size * num_heads * sequence_length, 256, sequence_length * 8>>>(Q, K, V, out, batch_size * num_heads * sequence_length, sequence_length, embedding_dimension);
@*/
