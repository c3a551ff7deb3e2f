/* Geometry and value functions behind the matmul, conv and pool oracles
 * (oracle/oracle_{matmul,conv,pool}.c). They read inputs through a fetch
 * callback, so unit tests can drive them with small explicit arrays and the
 * oracle with the counter-based generator. Values are computed in double
 * over every term (no early rounding), element by element.
 *
 * Tensor numbering is the problem's (problem/problem.h): inputs and params in
 * spec order from 0; the geometry records which index is which. Spatial axes
 * are padded to three with leading size-1 axes (kernel 1, stride 1, no
 * padding), so one code path serves 1D, 2D and 3D. */
#ifndef KF_ORACLE_GEOM_H
#define KF_ORACLE_GEOM_H

#include "core/buf.h"
#include "problem/problem.h"

typedef double (*oracle_fetch)(void *u, int tensor, long long flat);

enum mm_mask { MM_MASK_NONE, MM_MASK_TRIU, MM_MASK_TRIL };

/* C[b][m][n] = sum_k A(b, m, k) * B(b, k, n); diag: C[m][n] = A[m] * B[m][n]. */
struct mm_geom {
	long long batch, M, N, K;
	int batched, trans_a, trans_b, diag;
	enum mm_mask mask;
};

struct conv_geom {
	int transposed, bias, pointwise;
	long long n, ci, co, groups;  /* co: the layer's out channels (depthwise for pointwise) */
	long long co_pw;              /* pointwise: final out channels */
	long long in[3], out[3], k[3], s[3], p[3], d[3], op[3];
};

struct pool_geom {
	int is_max, ceil_mode, count_include_pad;
	long long nc;                 /* batch * channels */
	long long in[3], out[3], k[3], s[3], p[3], d[3];
};

/* From a loaded problem: shapes from p->t[], options from spec "attrs"
 * (docs/formats.md). Errors name the problem and the field. */
int mm_geom_from_problem(const struct problem *p, struct mm_geom *g, struct buf *err);
int conv_geom_from_problem(const struct problem *p, struct conv_geom *g, struct buf *err);
int pool_geom_from_problem(const struct problem *p, struct pool_geom *g, struct buf *err);

/* Output element count. */
long long mm_numel(const struct mm_geom *g);
long long conv_numel(const struct conv_geom *g);
long long pool_numel(const struct pool_geom *g);

/* Value of output element `flat` (0 <= flat < numel). Tensors: matmul A=0,
 * B=1; conv x=0, weight=1, bias=2 (pointwise: depthwise weight=1, pointwise
 * weight=2); pool x=0. */
double mm_value(const struct mm_geom *g, oracle_fetch f, void *u, long long flat);
double conv_value(const struct conv_geom *g, oracle_fetch f, void *u, long long flat);
double pool_value(const struct pool_geom *g, oracle_fetch f, void *u, long long flat);

/* Matmul pieces for callers that split the K sum: whether `flat` is
 * masked to zero, and the flat indices of A and B for term k. */
int mm_masked(const struct mm_geom *g, long long flat);
void mm_operands(const struct mm_geom *g, long long flat, long long k, long long *ia,
		 long long *ib);

/* PyTorch's output sizes (ceil_mode: the last window starts inside the
 * input or the left padding). */
long long geom_conv_out(long long in, long long k, long long s, long long p, long long d);
long long geom_convt_out(long long in, long long k, long long s, long long p, long long d,
			 long long op);
long long geom_pool_out(long long in, long long k, long long s, long long p, long long d,
			int ceil_mode);

#endif
