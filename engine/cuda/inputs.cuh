/* GPU fill kernels of the input generator. Compile with NVRTC as ONE
 * source: philox_cuh followed by inputs_cuh (inputs_device_source() in
 * problem/inputs.h concatenates them). They give the same bits as the CPU
 * generator (problem/inputs.c) for the same (seed, tensor index).
 *
 * Kernels (extern "C"):
 *
 *   kf_fill_elementwise(void *dst, long long numel, unsigned long long seed,
 *                       int t, int kind, int dtype, int post, double a, double b,
 *                       long long rows, long long cols)
 *     Any launch shape (grid-stride loop); e.g. <<<min(ceil_div(numel, 256), 65535*8), 256>>>.
 *     For post none, symmetrize, triu, tril, scale_by_random.
 *
 *   kf_fill_softmax_rows(void *dst, long long nrows, unsigned long long seed,
 *                        int t, int kind, int dtype, int post, double a, double b,
 *                        long long rows, long long cols)
 *     For post softmax_lastdim and scaled softmax (KF_PO_SCALED_SOFTMAX).
 *     Block MUST be exactly 256 threads (the canonical summation order);
 *     any grid (grid-stride over rows), e.g. <<<min(nrows, 65535), 256>>>.
 *     nrows = numel / cols.
 *
 * Arguments: t is the tensor's index in the problem (inputs then params, in
 * spec order); kind/dtype/post the KF_DK_/KF_DT_/KF_PO_ numbers (= the enums
 * of problem/problem.h); a, b the dist parameters; rows, cols the last two
 * dims (1 for absent dims). inputs_desc() computes all of them.
 * dst holds numel elements of kf_dtype_size(dtype) bytes. */

__device__ __forceinline__ void kf_store_bits(void *dst, long long i, int dtype, kf_u64 bits)
{
	switch (dtype) {
	case KF_DT_F32: ((kf_u32 *)dst)[i] = (kf_u32)bits; break;
	case KF_DT_F16:
	case KF_DT_BF16: ((unsigned short *)dst)[i] = (unsigned short)bits; break;
	case KF_DT_I64: ((kf_u64 *)dst)[i] = bits; break;
	case KF_DT_I32: ((kf_u32 *)dst)[i] = (kf_u32)bits; break;
	default: ((unsigned char *)dst)[i] = (unsigned char)bits; break;
	}
}

extern "C" __global__ void kf_fill_elementwise(void *dst, long long numel, unsigned long long seed,
					       int t, int kind, int dtype, int post, double a,
					       double b, long long rows, long long cols)
{
	struct kf_gen_desc g;
	g.seed = seed; g.t = t; g.kind = kind; g.dtype = dtype; g.post = post;
	g.a = a; g.b = b; g.rows = rows; g.cols = cols;
	long long stride = (long long)gridDim.x * blockDim.x;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < numel; i += stride)
		kf_store_bits(dst, i, dtype, kf_encode(kf_elem_value(&g, (kf_u64)i), dtype));
}

extern "C" __global__ void kf_fill_softmax_rows(void *dst, long long nrows, unsigned long long seed,
						int t, int kind, int dtype, int post, double a,
						double b, long long rows, long long cols)
{
	__shared__ double lane[KF_SOFTMAX_LANES];
	struct kf_gen_desc g;
	g.seed = seed; g.t = t; g.kind = kind; g.dtype = dtype; g.post = post;
	g.a = a; g.b = b; g.rows = rows; g.cols = cols;
	int k = threadIdx.x;
	for (long long row = blockIdx.x; row < nrows; row += gridDim.x) {
		long long base = row * cols;
		double m = -__longlong_as_double(0x7ff0000000000000ll);
		for (long long j = k; j < cols; j += KF_SOFTMAX_LANES) {
			double x = kf_elem_value(&g, (kf_u64)(base + j));
			m = x > m ? x : m;
		}
		lane[k] = m;
		__syncthreads();
		for (int s = KF_SOFTMAX_LANES / 2; s > 0; s >>= 1) {
			if (k < s && lane[k + s] > lane[k])
				lane[k] = lane[k + s];
			__syncthreads();
		}
		m = lane[0];
		__syncthreads();
		double sum = 0.0;
		for (long long j = k; j < cols; j += KF_SOFTMAX_LANES)
			sum = KF_DADD(sum, kf_exp(KF_DADD(kf_elem_value(&g, (kf_u64)(base + j)), -m)));
		lane[k] = sum;
		__syncthreads();
		for (int s = KF_SOFTMAX_LANES / 2; s > 0; s >>= 1) {
			if (k < s)
				lane[k] = KF_DADD(lane[k], lane[k + s]);
			__syncthreads();
		}
		sum = lane[0];
		__syncthreads();
		for (long long j = k; j < cols; j += KF_SOFTMAX_LANES) {
			double x = kf_elem_value(&g, (kf_u64)(base + j));
			kf_store_bits(dst, base + j, dtype, kf_softmax_bits(&g, x, m, sum));
		}
	}
}
