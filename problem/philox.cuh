/* Philox4x32-10 (Salmon et al., SC'11) and the input generator built on it.
 * This one file is compiled by the C compiler (through problem/philox.h) and,
 * as a string (build/gen/philox_cuh.h), by NVRTC, so the CPU and the GPU
 * produce the same bits for the same seed.
 *
 * Bit-exactness rules: only integer ops and correctly rounded double
 * + - * / sqrt (the __d*_rn intrinsics on the device, so nothing is fused
 * into an FMA); log, cos and exp are our own polynomials over those ops;
 * no libm. The host build must not contract a*b+c into an FMA (x86-64
 * baseline has no FMA; other hosts need -ffp-contract=off).
 *
 * Definition (docs/formats.md, "Input generator"):
 *   key     = (seed & 0xffffffff, (seed >> 32) ^ (t * 0x9E3779B9))
 *   counter = (i & 0xffffffff, i >> 32, 0, 0)   for element i of tensor t
 *   counter = (0, 0, 1, 0)                      for the tensor's one scalar
 *   w[0..3] = Philox4x32-10(counter, key)
 *   uniform  {a,b}: a + (b - a) * ((w0 >> 8) * 2^-24)
 *   normal   {a,b}: a + b * sqrt(-2 log u1) * cos(2 pi u2),
 *                   u1 = ((w0 >> 5) * 2^26 + (w1 >> 6) + 1) * 2^-53, u2 = w2 * 2^-32
 *   randint  {a,b}: a + ((w1 << 32 | w0) mod (b - a))
 *   bernoulli {p}:  w0 * 2^-32 < p ? 1 : 0
 *   sign:           w0 >> 31 ? 1 : -1
 *   constant {v}:   v
 * each rounded (nearest-even) to the tensor's dtype; then the post op. */
#ifndef KF_PHILOX_CUH
#define KF_PHILOX_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KF_FN static __device__ __forceinline__
#define KF_FN_BIG static __device__ __noinline__
#define KF_DADD(a, b) __dadd_rn((a), (b))
#define KF_DMUL(a, b) __dmul_rn((a), (b))
#define KF_DDIV(a, b) __ddiv_rn((a), (b))
#define KF_DSQRT(a) __dsqrt_rn(a)
#define KF_D2BITS(d) ((kf_u64)__double_as_longlong(d))
#define KF_BITS2D(u) __longlong_as_double((long long)(u))
#define KF_D2F(d) __double2float_rn(d)
#define KF_F2BITS(f) ((kf_u32)__float_as_uint(f))
#define KF_BITS2F(u) __uint_as_float(u)
#else
#define KF_FN static inline
#define KF_FN_BIG static inline
#define KF_DADD(a, b) ((double)(a) + (double)(b))
#define KF_DMUL(a, b) ((double)(a) * (double)(b))
#define KF_DDIV(a, b) ((double)(a) / (double)(b))
#define KF_DSQRT(a) __builtin_sqrt(a)
#define KF_D2BITS(d) kf_d2bits_(d)
#define KF_BITS2D(u) kf_bits2d_(u)
#define KF_D2F(d) ((float)(d))
#define KF_F2BITS(f) kf_f2bits_(f)
#define KF_BITS2F(u) kf_bits2f_(u)
#endif

#if !(defined(__CUDACC__) || defined(__CUDACC_RTC__))
/* Never fuse a*b+c into an FMA on the host (hosts built with -mfma or
 * -march=native would, and lose bit-identity with the device). */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
#endif

typedef unsigned int kf_u32;
typedef unsigned long long kf_u64;

#if !(defined(__CUDACC__) || defined(__CUDACC_RTC__))
KF_FN kf_u64 kf_d2bits_(double d) { union { double d; kf_u64 u; } x; x.d = d; return x.u; }
KF_FN double kf_bits2d_(kf_u64 u) { union { double d; kf_u64 u; } x; x.u = u; return x.d; }
KF_FN kf_u32 kf_f2bits_(float f) { union { float f; kf_u32 u; } x; x.f = f; return x.u; }
KF_FN float kf_bits2f_(kf_u32 u) { union { float f; kf_u32 u; } x; x.u = u; return x.f; }
#endif

/* Same numbering as enum kf_dtype, kf_dist_kind, kf_dist_post (problem/problem.h). */
#define KF_DT_F32 0
#define KF_DT_F16 1
#define KF_DT_BF16 2
#define KF_DT_I64 3
#define KF_DT_I32 4
#define KF_DT_BOOL 5
#define KF_DK_UNIFORM 0
#define KF_DK_NORMAL 1
#define KF_DK_RANDINT 2
#define KF_DK_BERNOULLI 3
#define KF_DK_SIGN 4
#define KF_DK_CONSTANT 5
#define KF_PO_NONE 0
#define KF_PO_SYMMETRIZE 1
#define KF_PO_TRIU 2
#define KF_PO_TRIL 3
#define KF_PO_SCALE_BY_RANDOM 4
#define KF_PO_SOFTMAX_LASTDIM 5
#define KF_PO_SCALED_SOFTMAX 6   /* scale_by_random, then softmax_lastdim */

/* The canonical summation order of softmax_lastdim: lane k (of 256) sums
 * elements k, k+256, ... in ascending order from 0.0; then lanes are
 * folded by halves (lane[k] += lane[k+s], s = 128, 64, ..., 1). */
#define KF_SOFTMAX_LANES 256

#define KF_PHILOX_M0 0xD2511F53u
#define KF_PHILOX_M1 0xCD9E8D57u
#define KF_PHILOX_W0 0x9E3779B9u
#define KF_PHILOX_W1 0xBB67AE85u

KF_FN void kf_philox4x32_10(const kf_u32 ctr[4], const kf_u32 key[2], kf_u32 out[4])
{
	kf_u32 c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
	kf_u32 k0 = key[0], k1 = key[1];
	for (int r = 0; r < 10; r++) {
		if (r) {
			k0 += KF_PHILOX_W0;
			k1 += KF_PHILOX_W1;
		}
		kf_u64 p0 = (kf_u64)KF_PHILOX_M0 * c0;
		kf_u64 p1 = (kf_u64)KF_PHILOX_M1 * c2;
		kf_u32 n0 = (kf_u32)(p1 >> 32) ^ c1 ^ k0;
		kf_u32 n2 = (kf_u32)(p0 >> 32) ^ c3 ^ k1;
		c1 = (kf_u32)p1;
		c3 = (kf_u32)p0;
		c0 = n0;
		c2 = n2;
	}
	out[0] = c0;
	out[1] = c1;
	out[2] = c2;
	out[3] = c3;
}

/* The four words for element i of tensor t (scalar != 0: the tensor's one
 * extra scalar, counter (0, 0, 1, 0)). */
KF_FN void kf_gen_words(kf_u64 seed, int t, kf_u64 i, int scalar, kf_u32 w[4])
{
	kf_u32 key[2], ctr[4];
	key[0] = (kf_u32)seed;
	key[1] = (kf_u32)(seed >> 32) ^ ((kf_u32)t * 0x9E3779B9u);
	ctr[0] = scalar ? 0u : (kf_u32)i;
	ctr[1] = scalar ? 0u : (kf_u32)(i >> 32);
	ctr[2] = scalar ? 1u : 0u;
	ctr[3] = 0u;
	kf_philox4x32_10(ctr, key, w);
}

/* 2^k as a double, k in [-1022, 1023]. */
KF_FN double kf_pow2(int k)
{
	return KF_BITS2D((kf_u64)(k + 1023) << 52);
}

/* log(x) for x in (0, 1]. */
KF_FN double kf_log(double x)
{
	kf_u64 b = KF_D2BITS(x);
	int e = (int)((b >> 52) & 0x7ff) - 1023;
	double m = KF_BITS2D((b & 0xfffffffffffffull) | 0x3ff0000000000000ull); /* [1, 2) */
	if (m > 1.4142135623730951) {
		m = KF_DMUL(m, 0.5);
		e += 1;
	}
	/* log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716 */
	double s = KF_DDIV(KF_DADD(m, -1.0), KF_DADD(m, 1.0));
	double s2 = KF_DMUL(s, s);
	double p = 2.0 / 25.0;
	for (int k = 23; k >= 1; k -= 2)
		p = KF_DADD(KF_DMUL(p, s2), KF_DDIV(2.0, (double)k));
	return KF_DADD(KF_DMUL((double)e, 0.69314718055994531), KF_DMUL(p, s));
}

/* sin and cos of r in [0, pi/4] (Taylor to r^19). */
KF_FN double kf_sin_small(double r)
{
	double r2 = KF_DMUL(r, r), p = 0.0;
	double c[9] = { -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800,
			1.0 / 6227020800.0, -1.0 / 1307674368000.0, 1.0 / 355687428096000.0,
			-1.0 / 121645100408832000.0 };
	for (int k = 8; k >= 0; k--)
		p = KF_DMUL(KF_DADD(p, c[k]), r2);
	return KF_DADD(r, KF_DMUL(r, p));
}

KF_FN double kf_cos_small(double r)
{
	double r2 = KF_DMUL(r, r), p = 0.0;
	double c[9] = { -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800,
			1.0 / 479001600, -1.0 / 87178291200.0, 1.0 / 20922789888000.0,
			-1.0 / 6402373705728000.0 };
	for (int k = 8; k >= 0; k--)
		p = KF_DMUL(KF_DADD(p, c[k]), r2);
	return KF_DADD(1.0, p);
}

/* cos(2 pi u) for u in [0, 1). */
KF_FN double kf_cos2pi(double u)
{
	double q = KF_DMUL(u, 4.0);            /* exact */
	int k = (int)q;
	double f = KF_DADD(q, -(double)k);     /* exact, [0, 1) */
	double c, s;
	if (f <= 0.5) {
		double r = KF_DMUL(f, 1.5707963267948966);
		c = kf_cos_small(r);
		s = kf_sin_small(r);
	} else {
		double r = KF_DMUL(KF_DADD(1.0, -f), 1.5707963267948966);
		c = kf_sin_small(r);
		s = kf_cos_small(r);
	}
	/* cos(k pi/2 + r) */
	return k == 0 ? c : k == 1 ? -s : k == 2 ? -c : s;
}

/* exp(x); 0 below -745, +inf above 709.78. */
KF_FN_BIG double kf_exp(double x)
{
	if (x < -745.0)
		return 0.0;
	if (x > 709.78)
		return KF_BITS2D(0x7ff0000000000000ull);
	double kd = KF_DMUL(x, 1.4426950408889634);
	int k = (int)(kd < 0 ? KF_DADD(kd, -0.5) : KF_DADD(kd, 0.5));
	/* ln2 split so that k * LN2_HI is exact */
	double r = KF_DADD(x, -KF_DMUL((double)k, 6.93147180369123816490e-01));
	r = KF_DADD(r, -KF_DMUL((double)k, 1.90821492927058770002e-10));
	const double inv_fact[15] = { 1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720,
				      1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800,
				      1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0,
				      1.0 / 87178291200.0 };
	double p = inv_fact[14];
	for (int n = 13; n >= 0; n--)
		p = KF_DADD(KF_DMUL(p, r), inv_fact[n]);
	if (k < -1022)
		return KF_DMUL(KF_DMUL(p, kf_pow2(k + 600)), kf_pow2(-600));
	return KF_DMUL(p, kf_pow2(k));
}

/* Rounds d (nearest-even) to a binary float with `ebits` exponent and
 * `mbits` mantissa bits (float16: 5/10, bfloat16: 8/7); returns its bits. */
KF_FN kf_u32 kf_d2small(double d, int ebits, int mbits)
{
	kf_u64 b = KF_D2BITS(d);
	kf_u32 sign = (kf_u32)(b >> 63) << (ebits + mbits);
	int e = (int)((b >> 52) & 0x7ff);
	kf_u64 m = b & 0xfffffffffffffull;
	int bias = (1 << (ebits - 1)) - 1;
	kf_u32 inf = (kf_u32)((1 << ebits) - 1) << mbits;
	if (e == 0x7ff)
		return sign | inf | (m ? (1u << (mbits - 1)) : 0u);
	if (e == 0)
		return sign;
	int E = e - 1023;
	if (E > bias)
		return sign | inf;
	kf_u64 mant = m | (1ull << 52);
	int shift = 52 - mbits, normal = 1;
	if (E < 1 - bias) {
		shift += (1 - bias) - E;
		normal = 0;
		if (shift >= 54)
			return sign;
	}
	kf_u64 q = mant >> shift, rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
	if (rem > half || (rem == half && (q & 1)))
		q++;
	if (!normal)
		return sign | (kf_u32)q;
	return sign | (((kf_u32)(E + bias) << mbits) + ((kf_u32)q - (1u << mbits)));
}

KF_FN double kf_small2d(kf_u32 h, int ebits, int mbits)
{
	kf_u32 sign = (h >> (ebits + mbits)) & 1u;
	int e = (int)((h >> mbits) & ((1u << ebits) - 1));
	kf_u32 m = h & ((1u << mbits) - 1);
	int bias = (1 << (ebits - 1)) - 1;
	double v;
	if (e == (1 << ebits) - 1)
		v = m ? KF_BITS2D(0x7ff8000000000000ull) : KF_BITS2D(0x7ff0000000000000ull);
	else if (e == 0)
		v = KF_DMUL((double)m, kf_pow2(1 - bias - mbits));
	else
		v = KF_DMUL((double)(m | (1u << mbits)), kf_pow2(e - bias - mbits));
	return sign ? -v : v;
}

/* The storage bits of value v in dtype dt (integers truncate toward zero). */
KF_FN kf_u64 kf_encode(double v, int dt)
{
	switch (dt) {
	case KF_DT_F32: return KF_F2BITS(KF_D2F(v));
	case KF_DT_F16: return kf_d2small(v, 5, 10);
	case KF_DT_BF16: return kf_d2small(v, 8, 7);
	case KF_DT_I64: return (kf_u64)(long long)v;
	case KF_DT_I32: return (kf_u64)(kf_u32)(int)v;
	default: return v != 0.0 ? 1u : 0u;
	}
}

KF_FN double kf_decode(kf_u64 bits, int dt)
{
	switch (dt) {
	case KF_DT_F32: return (double)KF_BITS2F((kf_u32)bits);
	case KF_DT_F16: return kf_small2d((kf_u32)bits, 5, 10);
	case KF_DT_BF16: return kf_small2d((kf_u32)bits, 8, 7);
	case KF_DT_I64: return (double)(long long)bits;
	case KF_DT_I32: return (double)(int)(kf_u32)bits;
	default: return bits ? 1.0 : 0.0;
	}
}

/* The value drawn from the words, before rounding to the dtype (not
 * inlined on the device: it is large and called from several places). */
KF_FN_BIG double kf_draw_words(const kf_u32 w[4], int kind, double a, double b)
{
	switch (kind) {
	case KF_DK_UNIFORM: {
		double u = KF_DMUL((double)(w[0] >> 8), 5.9604644775390625e-08); /* 2^-24 */
		return KF_DADD(a, KF_DMUL(KF_DADD(b, -a), u));
	}
	case KF_DK_NORMAL: {
		double u1 = KF_DMUL(KF_DADD(KF_DMUL((double)(w[0] >> 5), 67108864.0),
					    (double)(w[1] >> 6) + 1.0),
				    1.1102230246251565e-16); /* 2^-53 */
		double u2 = KF_DMUL((double)w[2], 2.3283064365386963e-10); /* 2^-32 */
		double z = KF_DMUL(KF_DSQRT(KF_DMUL(-2.0, kf_log(u1))), kf_cos2pi(u2));
		return KF_DADD(a, KF_DMUL(b, z));
	}
	case KF_DK_RANDINT: {
		kf_u64 range = (kf_u64)(long long)KF_DADD(b, -a);
		kf_u64 r = ((kf_u64)w[1] << 32) | w[0];
		return KF_DADD(a, (double)(range ? r % range : 0));
	}
	case KF_DK_BERNOULLI:
		return KF_DMUL((double)w[0], 2.3283064365386963e-10) < a ? 1.0 : 0.0;
	case KF_DK_SIGN:
		return (w[0] >> 31) ? 1.0 : -1.0;
	default:
		return a;
	}
}

/* How one tensor is generated (all but the shape comes from the spec). */
struct kf_gen_desc {
	kf_u64 seed;
	int t;            /* tensor index: salts the key */
	int kind, dtype, post;
	double a, b;
	long long rows, cols; /* last two dims (1 x n for a vector) */
};

/* Element i drawn and rounded to the dtype, as a double (no post op). */
KF_FN_BIG double kf_elem_raw(const struct kf_gen_desc *g, kf_u64 i)
{
	kf_u32 w[4];
	kf_gen_words(g->seed, g->t, i, 0, w);
	return kf_decode(kf_encode(kf_draw_words(w, g->kind, g->a, g->b), g->dtype), g->dtype);
}

/* The tensor's scale for scale_by_random: U[0,1) rounded to the dtype. */
KF_FN double kf_tensor_scale(const struct kf_gen_desc *g)
{
	kf_u32 w[4];
	kf_gen_words(g->seed, g->t, 0, 1, w);
	return kf_decode(kf_encode(kf_draw_words(w, KF_DK_UNIFORM, 0.0, 1.0), g->dtype), g->dtype);
}

/* Element i with every element-wise post op applied (none, symmetrize,
 * triu, tril, scale_by_random; the scaling of scaled softmax too), as a
 * value exactly representable in the dtype. */
KF_FN double kf_elem_value(const struct kf_gen_desc *g, kf_u64 i)
{
	long long plane = g->rows * g->cols;
	long long r = ((long long)i / g->cols) % g->rows, c = (long long)i % g->cols;
	switch (g->post) {
	case KF_PO_SYMMETRIZE: {
		kf_u64 j = i - (kf_u64)((long long)i % plane) + (kf_u64)(c * g->cols + r);
		double v = KF_DMUL(KF_DADD(kf_elem_raw(g, i), kf_elem_raw(g, j)), 0.5);
		return kf_decode(kf_encode(v, g->dtype), g->dtype);
	}
	case KF_PO_TRIU:
		return r > c ? 0.0 : kf_elem_raw(g, i);
	case KF_PO_TRIL:
		return c > r ? 0.0 : kf_elem_raw(g, i);
	case KF_PO_SCALE_BY_RANDOM:
	case KF_PO_SCALED_SOFTMAX: {
		double v = KF_DMUL(kf_elem_raw(g, i), kf_tensor_scale(g));
		return kf_decode(kf_encode(v, g->dtype), g->dtype);
	}
	default:
		return kf_elem_raw(g, i);
	}
}

/* softmax_lastdim: element value x of a row with maximum mx and canonical
 * sum of exp(x - mx) `sum`, as storage bits. */
KF_FN kf_u64 kf_softmax_bits(const struct kf_gen_desc *g, double x, double mx, double sum)
{
	return kf_encode(KF_DDIV(kf_exp(KF_DADD(x, -mx)), sum), g->dtype);
}

KF_FN int kf_post_is_rowwise(int post)
{
	return post == KF_PO_SOFTMAX_LASTDIM || post == KF_PO_SCALED_SOFTMAX;
}

#endif
