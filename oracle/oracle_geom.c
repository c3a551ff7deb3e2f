/* Matmul, conv and pool oracle geometry and values (see oracle_geom.h). */
#include <math.h>
#include <string.h>

#include "oracle/oracle_geom.h"

long long geom_conv_out(long long in, long long k, long long s, long long p, long long d)
{
	return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

long long geom_convt_out(long long in, long long k, long long s, long long p, long long d,
			 long long op)
{
	return (in - 1) * s - 2 * p + d * (k - 1) + op + 1;
}

long long geom_pool_out(long long in, long long k, long long s, long long p, long long d,
			int ceil_mode)
{
	long long num = in + 2 * p - d * (k - 1) - 1, o;
	if (num < 0)
		return 0;
	o = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
	if (ceil_mode && (o - 1) * s >= in + p)
		o--;
	return o;
}

/* ---- spec access */

static const char *pname(const struct problem *p)
{
	return p->id ? p->id : "problem";
}

static int get_attrs(const struct problem *p, json_t **a, struct buf *err)
{
	*a = p->spec ? json_object_get(p->spec, "attrs") : NULL;
	if (!json_is_object(*a))
		return kf_err(err, "%s: field \"attrs\" must be an object", pname(p));
	return 0;
}

static int attr_bool(const struct problem *p, const json_t *a, const char *key, int *out,
		     struct buf *err)
{
	json_t *v = json_object_get(a, key);
	if (!v) {
		*out = 0;
		return 0;
	}
	if (!json_is_boolean(v))
		return kf_err(err, "%s: field \"attrs.%s\" must be true or false", pname(p), key);
	*out = json_is_true(v);
	return 0;
}

static int attr_int(const struct problem *p, const json_t *a, const char *key, long long def,
		    long long *out, struct buf *err)
{
	json_t *v = json_object_get(a, key);
	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > (1 << 20))
		return kf_err(err, "%s: field \"attrs.%s\" must be an integer in [1, 2^20]",
			      pname(p), key);
	*out = json_integer_value(v);
	return 0;
}

/* An array of nd integers >= lo, stored right-aligned in out[3] after `fill`s. */
static int attr_axes(const struct problem *p, const json_t *a, const char *key, int nd,
		     long long lo, long long fill, long long out[3], struct buf *err)
{
	json_t *v = json_object_get(a, key);
	if (!json_is_array(v) || (int)json_array_size(v) != nd)
		return kf_err(err, "%s: field \"attrs.%s\" must be an array of %d integers",
			      pname(p), key, nd);
	for (int i = 0; i < 3 - nd; i++)
		out[i] = fill;
	for (int i = 0; i < nd; i++) {
		json_t *e = json_array_get(v, (size_t)i);
		if (!json_is_integer(e) || json_integer_value(e) < lo ||
		    json_integer_value(e) > (1 << 20))
			return kf_err(err, "%s: field \"attrs.%s[%d]\" must be an integer >= %lld",
				      pname(p), key, i, lo);
		out[3 - nd + i] = json_integer_value(e);
	}
	return 0;
}

static int want_tensors(const struct problem *p, int n_in, int n_out, struct buf *err)
{
	if (p->n_in != n_in || p->n_out != n_out)
		return kf_err(err, "%s: field \"inputs\": wants %d inputs/params and %d output "
			      "(has %d and %d)", pname(p), n_in, n_out, p->n_in, p->n_out);
	return 0;
}

static int shape_is(const struct problem_tensor *t, int nd, const long long *want)
{
	if (t->ndim != nd)
		return 0;
	for (int i = 0; i < nd; i++)
		if (t->shape[i] != want[i])
			return 0;
	return 1;
}

/* ---- matmul */

int mm_geom_from_problem(const struct problem *p, struct mm_geom *g, struct buf *err)
{
	const struct problem_tensor *A = &p->t[0], *B = &p->t[1], *C;
	json_t *a;
	const char *mask;

	memset(g, 0, sizeof(*g));
	if (get_attrs(p, &a, err) < 0 || want_tensors(p, 2, 1, err) < 0)
		return -1;
	C = &p->t[2];
	if (attr_bool(p, a, "batched", &g->batched, err) < 0 ||
	    attr_bool(p, a, "trans_a", &g->trans_a, err) < 0 ||
	    attr_bool(p, a, "trans_b", &g->trans_b, err) < 0 ||
	    attr_bool(p, a, "diag", &g->diag, err) < 0)
		return -1;
	mask = json_string_value(json_object_get(a, "mask"));
	if (!mask || !strcmp(mask, "none"))
		g->mask = MM_MASK_NONE;
	else if (!strcmp(mask, "triu"))
		g->mask = MM_MASK_TRIU;
	else if (!strcmp(mask, "tril"))
		g->mask = MM_MASK_TRIL;
	else
		return kf_err(err, "%s: field \"attrs.mask\": \"%s\" is not none, triu or tril",
			      pname(p), mask);
	g->batch = 1;
	if (g->diag) {
		if (A->ndim != 1 || B->ndim != 2 || B->shape[0] != A->shape[0])
			return kf_err(err, "%s: diag wants A (M) and B (M, N)", pname(p));
		g->M = A->shape[0];
		g->N = B->shape[1];
		g->K = 1;
	} else if (g->batched) {
		if (A->ndim != 3 || B->ndim != 3 || A->shape[0] != B->shape[0] ||
		    A->shape[2] != B->shape[1])
			return kf_err(err, "%s: batched wants A (b, M, K) and B (b, K, N)", pname(p));
		g->batch = A->shape[0];
		g->M = A->shape[1];
		g->K = A->shape[2];
		g->N = B->shape[2];
	} else {
		if (A->ndim < 1 || B->ndim != 2 || (g->trans_a && A->ndim != 2))
			return kf_err(err, "%s: matmul wants A (..., K) or A (K, M) with 2-D B",
				      pname(p));
		g->K = g->trans_a ? A->shape[0] : A->shape[A->ndim - 1];
		g->M = g->trans_a ? A->shape[1] : A->numel / g->K;
		g->N = g->trans_b ? B->shape[0] : B->shape[1];
		if ((g->trans_b ? B->shape[1] : B->shape[0]) != g->K)
			return kf_err(err, "%s: inner dimensions of A and B differ", pname(p));
	}
	if (C->numel != g->batch * g->M * g->N || C->shape[C->ndim - 1] != g->N)
		return kf_err(err, "%s: output shape does not match A and B", pname(p));
	if (g->mask != MM_MASK_NONE && (g->batch != 1 || g->M != g->N))
		return kf_err(err, "%s: triu/tril wants square 2-D matrices", pname(p));
	return 0;
}

long long mm_numel(const struct mm_geom *g)
{
	return g->batch * g->M * g->N;
}

int mm_masked(const struct mm_geom *g, long long flat)
{
	long long n = flat % g->N, m = (flat / g->N) % g->M;
	return (g->mask == MM_MASK_TRIU && m > n) || (g->mask == MM_MASK_TRIL && m < n);
}

void mm_operands(const struct mm_geom *g, long long flat, long long k, long long *ia,
		 long long *ib)
{
	long long n = flat % g->N, m = (flat / g->N) % g->M, b = flat / (g->M * g->N);
	*ia = g->batched ? (b * g->M + m) * g->K + k : g->trans_a ? k * g->M + m : m * g->K + k;
	*ib = g->batched ? (b * g->K + k) * g->N + n : g->trans_b ? n * g->K + k : k * g->N + n;
}

double mm_value(const struct mm_geom *g, oracle_fetch f, void *u, long long flat)
{
	double acc = 0.0;

	if (g->diag)
		return f(u, 0, (flat / g->N) % g->M) * f(u, 1, flat);
	if (mm_masked(g, flat))
		return 0.0;
	for (long long k = 0; k < g->K; k++) {
		long long ia, ib;
		mm_operands(g, flat, k, &ia, &ib);
		acc += f(u, 0, ia) * f(u, 1, ib);
	}
	return acc;
}

/* ---- conv */

int conv_geom_from_problem(const struct problem *p, struct conv_geom *g, struct buf *err)
{
	const struct problem_tensor *x = &p->t[0], *w, *y;
	json_t *a;
	int nd, n_in;
	long long want[PROBLEM_MAX_DIMS];

	memset(g, 0, sizeof(*g));
	if (get_attrs(p, &a, err) < 0)
		return -1;
	if (p->n_in < 2 || x->ndim < 3 || x->ndim > 5)
		return kf_err(err, "%s: conv wants x (N, C, spatial 1-3 dims) and a weight", pname(p));
	nd = x->ndim - 2;
	if (attr_bool(p, a, "transposed", &g->transposed, err) < 0 ||
	    attr_bool(p, a, "bias", &g->bias, err) < 0 ||
	    attr_bool(p, a, "pointwise", &g->pointwise, err) < 0 ||
	    attr_int(p, a, "groups", 1, &g->groups, err) < 0 ||
	    attr_axes(p, a, "kernel", nd, 1, 1, g->k, err) < 0 ||
	    attr_axes(p, a, "stride", nd, 1, 1, g->s, err) < 0 ||
	    attr_axes(p, a, "padding", nd, 0, 0, g->p, err) < 0 ||
	    attr_axes(p, a, "dilation", nd, 1, 1, g->d, err) < 0 ||
	    attr_axes(p, a, "output_padding", nd, 0, 0, g->op, err) < 0)
		return -1;
	if (g->pointwise && (g->transposed || g->bias))
		return kf_err(err, "%s: field \"attrs.pointwise\" goes with a plain conv without bias",
			      pname(p));
	n_in = 2 + (g->bias || g->pointwise);
	if (want_tensors(p, n_in, 1, err) < 0)
		return -1;
	w = &p->t[1];
	y = &p->t[n_in];
	g->n = x->shape[0];
	g->ci = x->shape[1];
	for (int i = 0; i < 3; i++) {
		g->in[i] = i < 3 - nd ? 1 : x->shape[2 + i - (3 - nd)];
	}
	if (g->ci % g->groups)
		return kf_err(err, "%s: field \"attrs.groups\": %lld does not divide %lld input channels",
			      pname(p), g->groups, g->ci);
	/* The weight's shape follows from the rest; check it. */
	if (g->transposed) {
		if (w->ndim != 2 + nd)
			return kf_err(err, "%s: weight wants %d dims", pname(p), 2 + nd);
		g->co = w->shape[1] * g->groups;
		want[0] = g->ci;
		want[1] = w->shape[1];
	} else {
		g->co = g->pointwise ? g->ci : w->shape[0];
		want[0] = g->co;
		want[1] = g->ci / g->groups;
	}
	for (int i = 0; i < nd; i++)
		want[2 + i] = g->k[3 - nd + i];
	if (!shape_is(w, 2 + nd, want))
		return kf_err(err, "%s: weight shape does not match channels, groups and attrs.kernel",
			      pname(p));
	if (g->co % g->groups)
		return kf_err(err, "%s: groups do not divide the output channels", pname(p));
	if (g->pointwise) {
		long long pw[4] = { p->t[2].shape[0], g->ci, 1, 1 };
		if (g->groups != g->ci || !shape_is(&p->t[2], 4, pw) || nd != 2)
			return kf_err(err, "%s: pointwise wants a depthwise 2-D conv and a (C_out, C_in, 1, 1) weight",
				      pname(p));
		g->co_pw = pw[0];
	}
	if (g->bias && !shape_is(&p->t[2], 1, &g->co))
		return kf_err(err, "%s: bias wants shape (%lld)", pname(p), g->co);
	for (int i = 0; i < 3; i++) {
		g->out[i] = g->transposed ? geom_convt_out(g->in[i], g->k[i], g->s[i], g->p[i], g->d[i], g->op[i])
					  : geom_conv_out(g->in[i], g->k[i], g->s[i], g->p[i], g->d[i]);
		if (g->out[i] < 1)
			return kf_err(err, "%s: empty output along axis %d", pname(p), i);
	}
	want[0] = g->n;
	want[1] = g->pointwise ? g->co_pw : g->co;
	for (int i = 0; i < nd; i++)
		want[2 + i] = g->out[3 - nd + i];
	if (!shape_is(y, 2 + nd, want))
		return kf_err(err, "%s: output shape differs from PyTorch's formula", pname(p));
	return 0;
}

long long conv_numel(const struct conv_geom *g)
{
	return g->n * (g->pointwise ? g->co_pw : g->co) * g->out[0] * g->out[1] * g->out[2];
}

/* Input index along one axis reached from output o through tap k, or -1. */
static long long conv_in_index(const struct conv_geom *g, int ax, long long o, long long k)
{
	long long i;
	if (!g->transposed) {
		i = o * g->s[ax] - g->p[ax] + k * g->d[ax];
		return i >= 0 && i < g->in[ax] ? i : -1;
	}
	i = o + g->p[ax] - k * g->d[ax];          /* = input * stride when it lands on o */
	if (i < 0 || i % g->s[ax])
		return -1;
	i /= g->s[ax];
	return i < g->in[ax] ? i : -1;
}

/* The plain (or depthwise) layer at (n, co, o[]). */
static double conv_at(const struct conv_geom *g, oracle_fetch f, void *u, long long n,
		      long long co, const long long o[3])
{
	long long cpg = g->ci / g->groups, opg = g->co / g->groups, grp = co / opg;
	double acc = 0.0;

	for (long long cj = 0; cj < cpg; cj++) {
		long long c = grp * cpg + cj;
		for (long long k0 = 0; k0 < g->k[0]; k0++) {
			long long i0 = conv_in_index(g, 0, o[0], k0);
			if (i0 < 0)
				continue;
			for (long long k1 = 0; k1 < g->k[1]; k1++) {
				long long i1 = conv_in_index(g, 1, o[1], k1);
				if (i1 < 0)
					continue;
				for (long long k2 = 0; k2 < g->k[2]; k2++) {
					long long i2 = conv_in_index(g, 2, o[2], k2);
					long long xi, wi, wrow;
					if (i2 < 0)
						continue;
					xi = (((n * g->ci + c) * g->in[0] + i0) * g->in[1] + i1) * g->in[2] + i2;
					wrow = g->transposed ? c * opg + co % opg : co * cpg + cj;
					wi = ((wrow * g->k[0] + k0) * g->k[1] + k1) * g->k[2] + k2;
					acc += f(u, 0, xi) * f(u, 1, wi);
				}
			}
		}
	}
	if (g->bias)
		acc += f(u, 2, co);
	return acc;
}

double conv_value(const struct conv_geom *g, oracle_fetch f, void *u, long long flat)
{
	long long o[3], t = flat, co, n, cout = g->pointwise ? g->co_pw : g->co;
	double acc = 0.0;

	o[2] = t % g->out[2];
	t /= g->out[2];
	o[1] = t % g->out[1];
	t /= g->out[1];
	o[0] = t % g->out[0];
	t /= g->out[0];
	co = t % cout;
	n = t / cout;
	if (!g->pointwise)
		return conv_at(g, f, u, n, co, o);
	for (long long c = 0; c < g->ci; c++)
		acc += f(u, 2, co * g->ci + c) * conv_at(g, f, u, n, c, o);
	return acc;
}

/* ---- pool */

int pool_geom_from_problem(const struct problem *p, struct pool_geom *g, struct buf *err)
{
	const struct problem_tensor *x = &p->t[0];
	const char *op;
	json_t *a;
	int nd;
	long long want[PROBLEM_MAX_DIMS];

	memset(g, 0, sizeof(*g));
	if (get_attrs(p, &a, err) < 0 || want_tensors(p, 1, 1, err) < 0)
		return -1;
	if (x->ndim < 3 || x->ndim > 5)
		return kf_err(err, "%s: pool wants x (N, C, spatial 1-3 dims)", pname(p));
	nd = x->ndim - 2;
	op = json_string_value(json_object_get(a, "op"));
	if (!op || (strcmp(op, "max") && strcmp(op, "avg")))
		return kf_err(err, "%s: field \"attrs.op\" must be \"max\" or \"avg\"", pname(p));
	g->is_max = !strcmp(op, "max");
	g->count_include_pad = 1;
	if (json_object_get(a, "count_include_pad") &&
	    attr_bool(p, a, "count_include_pad", &g->count_include_pad, err) < 0)
		return -1;
	if (attr_bool(p, a, "ceil_mode", &g->ceil_mode, err) < 0 ||
	    attr_axes(p, a, "kernel", nd, 1, 1, g->k, err) < 0 ||
	    attr_axes(p, a, "stride", nd, 1, 1, g->s, err) < 0 ||
	    attr_axes(p, a, "padding", nd, 0, 0, g->p, err) < 0 ||
	    attr_axes(p, a, "dilation", nd, 1, 1, g->d, err) < 0)
		return -1;
	g->nc = x->shape[0] * x->shape[1];
	want[0] = x->shape[0];
	want[1] = x->shape[1];
	for (int i = 0; i < 3; i++) {
		g->in[i] = i < 3 - nd ? 1 : x->shape[2 + i - (3 - nd)];
		if (2 * g->p[i] > g->k[i])
			return kf_err(err, "%s: field \"attrs.padding\" must be at most half the kernel",
				      pname(p));
		g->out[i] = geom_pool_out(g->in[i], g->k[i], g->s[i], g->p[i], g->d[i], g->ceil_mode);
		if (g->out[i] < 1)
			return kf_err(err, "%s: empty output along axis %d", pname(p), i);
		if (i >= 3 - nd)
			want[2 + i - (3 - nd)] = g->out[i];
	}
	if (!shape_is(&p->t[1], 2 + nd, want))
		return kf_err(err, "%s: output shape differs from PyTorch's formula", pname(p));
	return 0;
}

long long pool_numel(const struct pool_geom *g)
{
	return g->nc * g->out[0] * g->out[1] * g->out[2];
}

double pool_value(const struct pool_geom *g, oracle_fetch f, void *u, long long flat)
{
	long long o[3], t = flat, nc, lo[3], hi[3], size = 1, clipped = 1;
	double acc;

	for (int i = 2; i >= 0; i--) {
		o[i] = t % g->out[i];
		t /= g->out[i];
	}
	nc = t;
	if (g->is_max) {
		acc = -INFINITY;
		for (long long k0 = 0; k0 < g->k[0]; k0++) {
			long long i0 = o[0] * g->s[0] - g->p[0] + k0 * g->d[0];
			if (i0 < 0 || i0 >= g->in[0])
				continue;
			for (long long k1 = 0; k1 < g->k[1]; k1++) {
				long long i1 = o[1] * g->s[1] - g->p[1] + k1 * g->d[1];
				if (i1 < 0 || i1 >= g->in[1])
					continue;
				for (long long k2 = 0; k2 < g->k[2]; k2++) {
					long long i2 = o[2] * g->s[2] - g->p[2] + k2 * g->d[2];
					double v;
					if (i2 < 0 || i2 >= g->in[2])
						continue;
					v = f(u, 0, ((nc * g->in[0] + i0) * g->in[1] + i1) * g->in[2] + i2);
					if (v > acc || isnan(v))
						acc = v;
				}
			}
		}
		return acc;
	}
	/* Average as PyTorch: the divisor counts the window clipped to the
	 * padded extent (count_include_pad) or to the input itself. */
	for (int i = 0; i < 3; i++) {
		long long start = o[i] * g->s[i] - g->p[i];
		long long end = start + g->k[i] < g->in[i] + g->p[i] ? start + g->k[i] : g->in[i] + g->p[i];
		size *= end - start;
		lo[i] = start > 0 ? start : 0;
		hi[i] = end < g->in[i] ? end : g->in[i];
		clipped *= hi[i] > lo[i] ? hi[i] - lo[i] : 0;
	}
	acc = 0.0;
	for (long long i0 = lo[0]; i0 < hi[0]; i0++)
		for (long long i1 = lo[1]; i1 < hi[1]; i1++)
			for (long long i2 = lo[2]; i2 < hi[2]; i2++)
				acc += f(u, 0, ((nc * g->in[0] + i0) * g->in[1] + i1) * g->in[2] + i2);
	return acc / (double)(g->count_include_pad ? size : clipped);
}
