/* Double-precision convolution and GEMM kernels (see oracle_graph_kern.h).
 * Vectors are GCC's (8 doubles); target_clones builds each hot function for
 * x86-64-v4 (AVX-512), v3 (AVX2, FMA) and the baseline, picked when the
 * program starts (by ISA level: an arch= clone of a CPU model would only
 * match that model). */
#include "oracle/oracle_graph_kern.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

typedef double v8 __attribute__((vector_size(64)));

#define JB 8   /* output positions per register block */

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && defined(__GNUC__) && !defined(__clang__)
#define KERN __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KERN
#endif

static long long fdiv(long long a, long long b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static long long cdiv(long long a, long long b)
{
	return -fdiv(-a, b);
}

/* Valid taps of output position o along axis ax: kernel index and input index. */
static int taps(const struct gk_conv *c, int ax, long long o, long long *kk, long long *ii)
{
	int n = 0;
	for (long long k = 0; k < c->k[ax]; k++) {
		long long i;
		if (!c->transposed) {
			i = o * c->s[ax] - c->p[ax] + k * c->d[ax];
		} else {
			long long num = o + c->p[ax] - k * c->d[ax];
			if (num < 0 || num % c->s[ax])
				continue;
			i = num / c->s[ax];
		}
		if (i < 0 || i >= c->in[ax])
			continue;
		kk[n] = k;
		ii[n] = i;
		n++;
	}
	return n;
}

/* Along the last axis, output positions go in lane sets o = first + step * j
 * (j < J); a tap reads input base + istep * j for j in [jlo, jhi). */
struct wtap {
	long long k, base, istep, jlo, jhi;
};

static int lane_taps(const struct gk_conv *c, long long first, long long J, struct wtap *w)
{
	int n = 0;
	for (long long k = 0; k < c->k[2]; k++) {
		struct wtap t = { k, 0, 1, 0, J };
		if (!c->transposed) {
			t.base = first * c->s[2] - c->p[2] + k * c->d[2];
			t.istep = c->s[2];
			t.jlo = cdiv(-t.base, t.istep);
			t.jhi = cdiv(c->in[2] - t.base, t.istep);
		} else {
			long long num = first + c->p[2] - k * c->d[2];
			if (((num % c->s[2]) + c->s[2]) % c->s[2])
				continue;
			t.base = fdiv(num, c->s[2]);
			t.jlo = -t.base;
			t.jhi = c->in[2] - t.base;
		}
		if (t.jlo < 0)
			t.jlo = 0;
		if (t.jhi > J)
			t.jhi = J;
		if (t.jlo < t.jhi)
			w[n++] = t;
	}
	return n;
}

/* Few channels (m <= 2): lanes along the output row instead, 16 positions
 * j0 .. j0 + 15 of one lane set, m channels from co. */
#define JW 16
static inline __attribute__((always_inline)) void
conv_wvec(const struct gk_conv *c, const double *xn, long long grp, long long cl, int m,
	  const long long *k0s, const long long *i0s, int n0t, const long long *k1s,
	  const long long *i1s, int n1t, const struct wtap *wt, int nw, long long j0, double *res)
{
	long long K1 = c->k[1], K2 = c->k[2], KK = c->k[0] * K1 * K2, xs4 = c->xst[4];
	v8 acc[2][JW / 8];

	for (int q = 0; q < 2; q++)
		for (int u = 0; u < JW / 8; u++)
			acc[q][u] = (v8){ 0, 0, 0, 0, 0, 0, 0, 0 };
	for (long long ci_l = 0; ci_l < c->cpg_in; ci_l++) {
		const double *xc = xn + (grp * c->cpg_in + ci_l - c->xc0) * c->xst[1];
		const double *wc = c->wpack + (grp * c->cpg_in + ci_l) * KK * c->cob + cl;
		for (int a = 0; a < n0t; a++)
			for (int b = 0; b < n1t; b++) {
				const double *xr = xc + (i0s[a] - c->xlo[0]) * c->xst[2] +
						   (i1s[b] - c->xlo[1]) * c->xst[3];
				const double *wr = wc + (k0s[a] * K1 + k1s[b]) * K2 * c->cob;
				for (int q = 0; q < nw; q++) {
					const struct wtap *t = &wt[q];
					const double *xb = xr + (t->base - c->xlo[2]) * xs4;
					long long step = t->istep * xs4;
					double w0 = wr[t->k * c->cob], w1 = m > 1 ? wr[t->k * c->cob + 1] : 0;
					if (t->jlo <= j0 && j0 + JW <= t->jhi && step == 1) {
						for (int u = 0; u < JW / 8; u++) {
							v8 xv;
							memcpy(&xv, xb + j0 + 8 * u, sizeof(xv));
							acc[0][u] += xv * w0;
							acc[1][u] += xv * w1;
						}
					} else {
						long long jl = t->jlo > j0 ? t->jlo : j0;
						long long jh = t->jhi < j0 + JW ? t->jhi : j0 + JW;
						for (long long j = jl; j < jh; j++) {
							double xv = xb[j * step];
							acc[0][(j - j0) / 8][(j - j0) % 8] += xv * w0;
							acc[1][(j - j0) / 8][(j - j0) % 8] += xv * w1;
						}
					}
				}
			}
	}
	for (int q = 0; q < m; q++)
		for (int j = 0; j < JW; j++)
			res[q * JW + j] = acc[q][j / 8][j % 8];
}

long long gk_conv_items(const struct gk_conv *c)
{
	return c->nbn * c->nblk * c->on[0];
}

KERN void gk_conv_part(const struct gk_conv *c, long long lo, long long hi)
{
	long long K0 = c->k[0], K1 = c->k[1], K2 = c->k[2], KK = K0 * K1 * K2;
	long long *k0s = xmalloc(sizeof(long long) * (size_t)(2 * (K0 + K1)));
	struct wtap *wt = xmalloc(sizeof(struct wtap) * (size_t)K2);
	long long *i0s = k0s + K0, *k1s = i0s + K0, *i1s = k1s + K1;
	long long xs4 = c->xst[4];

	for (long long item = lo; item < hi; item++) {
		long long od_i = item % c->on[0], blk = (item / c->on[0]) % c->nblk;
		long long n = item / (c->on[0] * c->nblk), co = c->blk_co[blk];
		int m = c->blk_m[blk];
		long long grp = co / c->cpg_out, cl = co % c->cpg_out;
		int n0t = taps(c, 0, c->olo[0] + od_i, k0s, i0s);
		const double *xn = c->x + (c->nb0 + n - c->xn0) * c->xst[0];

		for (long long oh_i = 0; oh_i < c->on[1]; oh_i++) {
			int n1t = taps(c, 1, c->olo[1] + oh_i, k1s, i1s);
			long long nsets = c->transposed ? (c->s[2] < c->on[2] ? c->s[2] : c->on[2]) : 1;
			for (long long r = 0; r < nsets; r++) {
				long long first = c->olo[2] + r, ostep = c->transposed ? c->s[2] : 1;
				long long J = c->transposed ? cdiv(c->on[2] - r, c->s[2]) : c->on[2];
				int nw = lane_taps(c, first, J, wt);
				long long j0 = 0;
				if (m <= 2)
					for (; j0 + JW <= J; j0 += JW) {
						double res[2 * JW];
						conv_wvec(c, xn, grp, cl, m, k0s, i0s, n0t, k1s, i1s, n1t, wt, nw,
							  j0, res);
						for (int q = 0; q < m; q++)
							for (long long jj = 0; jj < JW; jj++) {
								long long o = first + ostep * (j0 + jj);
								long long ob = (((n * c->nco + co + q - c->co0) * c->on[0] +
										 od_i) * c->on[1] + oh_i) * c->on[2] +
									       o - c->olo[2];
								c->out[ob] = res[q * JW + jj] +
									     (c->bias ? c->bias[co + q] : 0);
							}
					}
				for (; j0 < J; j0 += JB) {
					v8 acc[JB];
					long long jn = J - j0 < JB ? J - j0 : JB;
					for (int jj = 0; jj < JB; jj++)
						acc[jj] = (v8){ 0, 0, 0, 0, 0, 0, 0, 0 };
					for (long long ci_l = 0; ci_l < c->cpg_in; ci_l++) {
						const double *xc = xn + (grp * c->cpg_in + ci_l - c->xc0) * c->xst[1];
						const double *wc = c->wpack + (grp * c->cpg_in + ci_l) * KK * c->cob + cl;
						for (int a = 0; a < n0t; a++)
							for (int b = 0; b < n1t; b++) {
								const double *xr = xc + (i0s[a] - c->xlo[0]) * c->xst[2] +
										   (i1s[b] - c->xlo[1]) * c->xst[3];
								const double *wr = wc + (k0s[a] * K1 + k1s[b]) * K2 * c->cob;
								for (int q = 0; q < nw; q++) {
									const struct wtap *t = &wt[q];
									const double *xb = xr + (t->base - c->xlo[2]) * xs4;
									long long step = t->istep * xs4;
									v8 wv;
									memcpy(&wv, wr + t->k * c->cob, sizeof(wv));
									if (t->jlo <= j0 && j0 + JB <= t->jhi) {
										const double *xj = xb + j0 * step;
#pragma GCC unroll 8
										for (int jj = 0; jj < JB; jj++)
											acc[jj] += xj[jj * step] * wv;
									} else {
										long long jl = t->jlo > j0 ? t->jlo : j0;
										long long jh = t->jhi < j0 + JB ? t->jhi : j0 + JB;
										for (long long j = jl; j < jh; j++)
											acc[j - j0] += xb[j * step] * wv;
									}
								}
							}
					}
					for (long long jj = 0; jj < jn; jj++) {
						long long o = first + ostep * (j0 + jj);
						for (int q = 0; q < m; q++) {
							long long ob = (((n * c->nco + co + q - c->co0) * c->on[0] + od_i) *
									c->on[1] + oh_i) * c->on[2] + o - c->olo[2];
							c->out[ob] = acc[jj][q] + (c->bias ? c->bias[co + q] : 0);
						}
					}
				}
			}
		}
	}
	free(k0s);
	free(wt);
}

static double hsum(v8 v)
{
	return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

#define KC 1024   /* k per pass: 4 rows of a and 2 of b stay in L1 */
#define NC 48     /* b rows per block: stay in L2 across the rows of a */

KERN void gk_gemm_nt(const double *const *a, long long m, const double *const *b, long long n,
		     long long K, double *out, long long ldo)
{
	for (long long k0 = 0; k0 < K; k0 += KC) {
		long long kn = K - k0 < KC ? K - k0 : KC, kv = kn & ~7LL;
		for (long long j0 = 0; j0 < n; j0 += NC) {
			long long jn = n - j0 < NC ? n - j0 : NC;
			long long i = 0;
			for (; i + 4 <= m; i += 4) {
				const double *a0 = a[i] + k0, *a1 = a[i + 1] + k0, *a2 = a[i + 2] + k0,
					     *a3 = a[i + 3] + k0;
				long long j = j0;
				for (; j + 2 <= j0 + jn; j += 2) {
					const double *b0 = b[j] + k0, *b1 = b[j + 1] + k0;
					v8 c00 = { 0 }, c01 = { 0 }, c10 = { 0 }, c11 = { 0 }, c20 = { 0 },
					   c21 = { 0 }, c30 = { 0 }, c31 = { 0 };
					double t[8] = { 0 };
					for (long long k = 0; k < kv; k += 8) {
						v8 x0, x1, x2, x3, y0, y1;
						memcpy(&x0, a0 + k, 64);
						memcpy(&x1, a1 + k, 64);
						memcpy(&x2, a2 + k, 64);
						memcpy(&x3, a3 + k, 64);
						memcpy(&y0, b0 + k, 64);
						memcpy(&y1, b1 + k, 64);
						c00 += x0 * y0;
						c01 += x0 * y1;
						c10 += x1 * y0;
						c11 += x1 * y1;
						c20 += x2 * y0;
						c21 += x2 * y1;
						c30 += x3 * y0;
						c31 += x3 * y1;
					}
					for (long long k = kv; k < kn; k++) {
						t[0] += a0[k] * b0[k];
						t[1] += a0[k] * b1[k];
						t[2] += a1[k] * b0[k];
						t[3] += a1[k] * b1[k];
						t[4] += a2[k] * b0[k];
						t[5] += a2[k] * b1[k];
						t[6] += a3[k] * b0[k];
						t[7] += a3[k] * b1[k];
					}
					out[i * ldo + j] += hsum(c00) + t[0];
					out[i * ldo + j + 1] += hsum(c01) + t[1];
					out[(i + 1) * ldo + j] += hsum(c10) + t[2];
					out[(i + 1) * ldo + j + 1] += hsum(c11) + t[3];
					out[(i + 2) * ldo + j] += hsum(c20) + t[4];
					out[(i + 2) * ldo + j + 1] += hsum(c21) + t[5];
					out[(i + 3) * ldo + j] += hsum(c30) + t[6];
					out[(i + 3) * ldo + j + 1] += hsum(c31) + t[7];
				}
				for (; j < j0 + jn; j++)
					for (int r = 0; r < 4; r++) {
						const double *ar = a[i + r] + k0, *bj = b[j] + k0;
						v8 cc = { 0 };
						double s = 0;
						for (long long k = 0; k < kv; k += 8) {
							v8 x, y;
							memcpy(&x, ar + k, 64);
							memcpy(&y, bj + k, 64);
							cc += x * y;
						}
						for (long long k = kv; k < kn; k++)
							s += ar[k] * bj[k];
						out[(i + r) * ldo + j] += hsum(cc) + s;
					}
			}
			for (; i < m; i++) {
				const double *ar = a[i] + k0;
				for (long long j = j0; j < j0 + jn; j++) {
					const double *bj = b[j] + k0;
					v8 cc = { 0 }, cd = { 0 };
					double s = 0;
					long long k = 0;
					for (; k + 16 <= kv; k += 16) {
						v8 x, y, x2, y2;
						memcpy(&x, ar + k, 64);
						memcpy(&y, bj + k, 64);
						memcpy(&x2, ar + k + 8, 64);
						memcpy(&y2, bj + k + 8, 64);
						cc += x * y;
						cd += x2 * y2;
					}
					for (; k < kv; k += 8) {
						v8 x, y;
						memcpy(&x, ar + k, 64);
						memcpy(&y, bj + k, 64);
						cc += x * y;
					}
					for (k = kv; k < kn; k++)
						s += ar[k] * bj[k];
					out[i * ldo + j] += hsum(cc + cd) + s;
				}
			}
		}
	}
}
