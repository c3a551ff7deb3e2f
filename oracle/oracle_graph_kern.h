/* Numeric kernels of the graph oracle (oracle/oracle_graph_kern.c), in double
 * precision. They live in a file of their own: problem/philox.cuh turns off
 * FMA contraction in every file that includes it, and these loops are
 * built for AVX-512 and AVX2 as well, chosen at run time. Each works on
 * plain arrays; the callers (oracle/oracle_graph_conv.c, _mm.c) split the
 * work over threads. */
#ifndef KF_ORACLE_GRAPH_KERN_H
#define KF_ORACLE_GRAPH_KERN_H

/* Direct convolution, plain or transposed (PyTorch's ConvNd /
 * ConvTransposeNd), over one box of the output. Three spatial axes
 * (leading ones of size 1, kernel 1, stride 1). */
struct gk_conv {
	int transposed;
	long long k[3], s[3], p[3], d[3], in[3];  /* in: the input's spatial sizes */
	long long cpg_in, cpg_out, cob;
	const double *wpack;    /* [groups][cpg_in][k0][k1][k2][cob], cob >= cpg_out + 8, zero-padded */
	const double *bias;     /* [C_out] or NULL */
	const double *x;        /* the input's values at (xn0, xc0, xlo[]) */
	long long xst[5], xn0, xc0, xlo[3];
	long long nb0, nbn, co0, nco, olo[3], on[3];  /* the output box */
	const long long *blk_co; /* channel blocks of at most 8 inside one group: first channel */
	const int *blk_m;       /* and width */
	long long nblk;
	double *out;            /* contiguous over the output box */
};

/* Work items: nbn * nblk * on[0]; gk_conv_part computes items [lo, hi). */
long long gk_conv_items(const struct gk_conv *c);
void gk_conv_part(const struct gk_conv *c, long long lo, long long hi);

/* out[i * ldo + j] += sum_k a[i][k] * b[j][k] for i < m, j < n: rows of
 * length K (contiguous). */
void gk_gemm_nt(const double *const *a, long long m, const double *const *b, long long n,
		long long K, double *out, long long ldo);

#endif
