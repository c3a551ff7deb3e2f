/* Matmul, conv and pool oracle geometry (oracle/oracle_geom.c) on tiny
 * problems with hand-computed values, the errors on inconsistent specs, and
 * every committed matmul/conv/pool spec parsed by the loader and the
 * geometry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle.h"
#include "oracle/oracle_geom.h"
#include "problem/problem.h"

/* Inputs as explicit arrays, one per tensor index. */
struct arrays {
	const double *t[4];
};

static double fetch(void *u, int t, long long i)
{
	return ((struct arrays *)u)->t[t][i];
}

/* Loads a spec whose tensors are given as NAME:SHAPE pairs ("x:[1,1,4]");
 * the last pair is the output. Returns 0 or -1 with err. */
static int load_err(struct problem *p, const char *family, const char *attrs, struct buf *err,
		    int n, ...)
{
	struct buf spec = BUF_INIT;
	va_list ap;
	int ret;

	buf_addf(&spec, "{\"id\": \"level1/900_T\", \"level\": 1, \"number\": 900, \"name\": \"T\","
		 " \"kernelbench_file\": \"900_T.py\", \"family\": \"%s\", \"operation\": \"t\","
		 " \"sizes\": {\"one\": 1}, \"scalars\": {}, \"init_args\": {}, \"inputs\": [", family);
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		const char *name = va_arg(ap, const char *), *shape = va_arg(ap, const char *);
		if (i == n - 1)
			buf_addf(&spec, "], \"outputs\": [{\"name\": \"%s\", \"dtype\": \"float32\", "
				 "\"shape\": %s}]", name, shape);
		else
			buf_addf(&spec, "%s{\"name\": \"%s\", \"role\": \"input\", \"dtype\": "
				 "\"float32\", \"shape\": %s, \"dist\": {\"kind\": \"uniform\", "
				 "\"low\": 0, \"high\": 1}}", i ? ", " : "", name, shape);
	}
	va_end(ap);
	buf_addf(&spec, ", \"tolerance\": \"fp32\", \"flops\": 1, \"min_bytes\": 4, \"attrs\": %s}",
		 attrs);
	problem_init(p);
	ret = problem_load_json(p, spec.s, "test", err);
	buf_release(&spec);
	return ret;
}

#define LOAD(p, fam, attrs, ...) do { \
		struct buf le_ = BUF_INIT; \
		if (load_err(p, fam, attrs, &le_, __VA_ARGS__) < 0) \
			fail_msg("spec does not load: %s", le_.s); \
		buf_release(&le_); \
	} while (0)

static void check_vals(const char *what, double (*val)(const void *, oracle_fetch, void *, long long),
		       const void *g, struct arrays *a, const double *want, long long n)
{
	for (long long i = 0; i < n; i++) {
		double v = val(g, fetch, a, i);
		if (fabs(v - want[i]) > 1e-12 * (1 + fabs(want[i])))
			fail_msg("%s: element %lld is %.17g, want %.17g", what, i, v, want[i]);
	}
}

static double mmv(const void *g, oracle_fetch f, void *u, long long i) { return mm_value(g, f, u, i); }
static double convv(const void *g, oracle_fetch f, void *u, long long i) { return conv_value(g, f, u, i); }
static double poolv(const void *g, oracle_fetch f, void *u, long long i) { return pool_value(g, f, u, i); }

#define MM(what, attrs, A, ash, B, bsh, csh, ...) do { \
		struct problem p_; struct mm_geom g_; struct buf e_ = BUF_INIT; \
		const double a_[] = A, b_[] = B, w_[] = __VA_ARGS__; \
		struct arrays arr_ = { { a_, b_ } }; \
		LOAD(&p_, "matmul", attrs, 3, "A", ash, "B", bsh, "C", csh); \
		if (mm_geom_from_problem(&p_, &g_, &e_) < 0) fail_msg("%s: %s", what, e_.s); \
		assert_int_equal(mm_numel(&g_), sizeof(w_) / sizeof(w_[0])); \
		check_vals(what, mmv, &g_, &arr_, w_, mm_numel(&g_)); \
		problem_release(&p_); buf_release(&e_); \
	} while (0)
#define L(...) { __VA_ARGS__ }

static void test_matmul(void **state)
{
	(void)state;
	MM("plain 2x3 @ 3x2", "{}", L(1, 2, 3, 4, 5, 6), "[2,3]", L(7, 8, 9, 10, 11, 12), "[3,2]",
	   "[2,2]", { 58, 64, 139, 154 });
	MM("A.T @ B", "{\"trans_a\": true}", L(1, 4, 2, 5, 3, 6), "[3,2]", L(7, 8, 9, 10, 11, 12),
	   "[3,2]", "[2,2]", { 58, 64, 139, 154 });
	MM("A @ B.T", "{\"trans_b\": true}", L(1, 2, 3, 4, 5, 6), "[2,3]", L(7, 9, 11, 8, 10, 12),
	   "[2,3]", "[2,2]", { 58, 64, 139, 154 });
	MM("A.T @ B.T", "{\"trans_a\": true, \"trans_b\": true}", L(1, 4, 2, 5, 3, 6), "[3,2]",
	   L(7, 9, 11, 8, 10, 12), "[2,3]", "[2,2]", { 58, 64, 139, 154 });
	/* bmm: batch 0 is the identity times B0, batch 1 is 2*I times B1. */
	MM("bmm", "{\"batched\": true}", L(1, 0, 0, 1, 2, 0, 0, 2), "[2,2,2]",
	   L(1, 2, 3, 4, 5, 6, 7, 8), "[2,2,2]", "[2,2,2]", { 1, 2, 3, 4, 10, 12, 14, 16 });
	/* 3-D A times a shared matrix: rows flatten. */
	MM("3D tensor @ matrix", "{}", L(1, 2, 3, 4, 5, 6, 7, 8), "[2,2,2]", L(1, 0, 1, 0, 1, 1),
	   "[2,3]", "[2,2,3]", { 1, 2, 3, 3, 4, 7, 5, 6, 11, 7, 8, 15 });
	MM("matvec", "{}", L(1, 2, 3, 4, 5, 6), "[2,3]", L(1, 1, 2), "[3,1]", "[2,1]", { 9, 21 });
	MM("diag(A) @ B", "{\"diag\": true}", L(2, 3), "[2]", L(1, 2, 3, 4), "[2,2]", "[2,2]",
	   { 2, 4, 9, 12 });
	/* triu of a full product: (1,0) is dropped although A@B has 3 there. */
	MM("triu", "{\"mask\": \"triu\"}", L(1, 2, 3, 4), "[2,2]", L(1, 0, 0, 1), "[2,2]", "[2,2]",
	   { 1, 2, 0, 4 });
	MM("tril", "{\"mask\": \"tril\"}", L(1, 0, 2, 3), "[2,2]", L(4, 0, 5, 6), "[2,2]", "[2,2]",
	   { 4, 0, 23, 18 });
}

#define CONV(what, attrs, X, xsh, W, wsh, B, ysh, ...) do { \
		struct problem p_; struct conv_geom g_; struct buf e_ = BUF_INIT; \
		const double x_[] = X, w_[] = W, b_[] = B, want_[] = __VA_ARGS__; \
		struct arrays arr_ = { { x_, w_, b_ } }; \
		if (strstr(attrs, "\"bias\": true") || strstr(attrs, "pointwise")) \
			LOAD(&p_, "conv", attrs, 4, "x", xsh, "w", wsh, "b", \
			     strstr(attrs, "pointwise") ? "[1,2,1,1]" : "[2]", "out", ysh); \
		else \
			LOAD(&p_, "conv", attrs, 3, "x", xsh, "w", wsh, "out", ysh); \
		if (conv_geom_from_problem(&p_, &g_, &e_) < 0) fail_msg("%s: %s", what, e_.s); \
		assert_int_equal(conv_numel(&g_), sizeof(want_) / sizeof(want_[0])); \
		check_vals(what, convv, &g_, &arr_, want_, conv_numel(&g_)); \
		problem_release(&p_); buf_release(&e_); \
	} while (0)

#define C1(k, s, p, d, op, extra) "{\"transposed\": false, \"kernel\": [" #k "], \"stride\": [" #s \
	"], \"padding\": [" #p "], \"dilation\": [" #d "], \"output_padding\": [" #op "]" extra "}"
#define T1(k, s, p, d, op, extra) "{\"transposed\": true, \"kernel\": [" #k "], \"stride\": [" #s \
	"], \"padding\": [" #p "], \"dilation\": [" #d "], \"output_padding\": [" #op "]" extra "}"

static void test_conv(void **state)
{
	(void)state;
	/* 1-D, w = [1, 0, -1]: out[o] = x[o] - x[o + 2] over the padded input. */
	CONV("conv1d", C1(3, 1, 0, 1, 0, ""), L(1, 2, 3, 4), "[1,1,4]", L(1, 0, -1), "[1,1,3]", L(0),
	     "[1,1,2]", { -2, -2 });
	CONV("conv1d padded", C1(3, 1, 1, 1, 0, ""), L(1, 2, 3, 4), "[1,1,4]", L(1, 0, -1),
	     "[1,1,3]", L(0), "[1,1,4]", { -2, -2, -2, 3 });
	CONV("conv1d strided", C1(3, 2, 1, 1, 0, ""), L(1, 2, 3, 4), "[1,1,4]", L(1, 0, -1),
	     "[1,1,3]", L(0), "[1,1,2]", { -2, -2 });
	CONV("conv1d dilated", C1(3, 1, 0, 2, 0, ""), L(1, 2, 3, 4, 5), "[1,1,5]", L(1, 0, -1),
	     "[1,1,3]", L(0), "[1,1,1]", { -4 });
	/* Two groups, 1x1: channel c is scaled by its own weight; then bias. */
	CONV("conv2d groups", "{\"kernel\": [1,1], \"stride\": [1,1], \"padding\": [0,0], "
	     "\"dilation\": [1,1], \"output_padding\": [0,0], \"groups\": 2}",
	     L(1, 2, 3, 4), "[1,2,1,2]", L(3, 5), "[2,1,1,1]", L(0), "[1,2,1,2]", { 3, 6, 15, 20 });
	CONV("conv2d bias", "{\"kernel\": [1,1], \"stride\": [1,1], \"padding\": [0,0], "
	     "\"dilation\": [1,1], \"output_padding\": [0,0], \"groups\": 2, \"bias\": true}",
	     L(1, 2, 3, 4), "[1,2,1,2]", L(3, 5), "[2,1,1,1]", L(0.5, -1), "[1,2,1,2]",
	     { 3.5, 6.5, 14, 19 });
	/* Full channel mixing: out[co] = sum_ci w[co][ci] x[ci]. */
	CONV("conv2d channels", "{\"kernel\": [1,1], \"stride\": [1,1], \"padding\": [0,0], "
	     "\"dilation\": [1,1], \"output_padding\": [0,0]}",
	     L(1, 2, 3, 4), "[1,2,1,2]", L(1, 10, 100, 1000), "[2,2,1,1]", L(0), "[1,2,1,2]",
	     { 31, 42, 3100, 4200 });
	/* 2-D 2x2 kernel over a 3x3 ramp. */
	CONV("conv2d 2x2", "{\"kernel\": [2,2], \"stride\": [1,1], \"padding\": [0,0], "
	     "\"dilation\": [1,1], \"output_padding\": [0,0]}",
	     L(1, 2, 3, 4, 5, 6, 7, 8, 9), "[1,1,3,3]", L(1, 0, 0, -1), "[1,1,2,2]", L(0),
	     "[1,1,2,2]", { -4, -4, -4, -4 });
	/* Transposed 1-D, x = [1, 2], w = [1, 10, 100]: each input scatters w. */
	CONV("convT1d", T1(3, 1, 0, 1, 0, ""), L(1, 2), "[1,1,2]", L(1, 10, 100), "[1,1,3]", L(0),
	     "[1,1,4]", { 1, 12, 120, 200 });
	CONV("convT1d strided", T1(3, 2, 0, 1, 0, ""), L(1, 2), "[1,1,2]", L(1, 10, 100), "[1,1,3]",
	     L(0), "[1,1,5]", { 1, 10, 102, 20, 200 });
	CONV("convT1d padded", T1(3, 2, 1, 1, 0, ""), L(1, 2), "[1,1,2]", L(1, 10, 100), "[1,1,3]",
	     L(0), "[1,1,3]", { 10, 102, 20 });
	CONV("convT1d output_padding", T1(3, 2, 1, 1, 1, ""), L(1, 2), "[1,1,2]", L(1, 10, 100),
	     "[1,1,3]", L(0), "[1,1,4]", { 10, 102, 20, 200 });
	CONV("convT1d dilated", T1(3, 1, 0, 2, 0, ""), L(1, 2), "[1,1,2]", L(1, 10, 100), "[1,1,3]",
	     L(0), "[1,1,6]", { 1, 2, 10, 20, 100, 200 });
	/* Transposed weights are (C_in, C_out/groups, k): grouped vs mixed. */
	CONV("convT groups", T1(1, 1, 0, 1, 0, ", \"groups\": 2"), L(1, 2), "[1,2,1]", L(2, 3),
	     "[2,1,1]", L(0), "[1,2,1]", { 2, 6 });
	CONV("convT channels", T1(1, 1, 0, 1, 0, ""), L(1, 2), "[1,2,1]", L(1, 10, 100, 1000),
	     "[2,2,1]", L(0), "[1,2,1]", { 201, 2010 });
	/* Depthwise 1x1 (scale 2 and 3) then pointwise [1, 10]. */
	CONV("depthwise-separable", "{\"kernel\": [1,1], \"stride\": [1,1], \"padding\": [0,0], "
	     "\"dilation\": [1,1], \"output_padding\": [0,0], \"groups\": 2, \"pointwise\": true}",
	     L(1, 2, 3, 4), "[1,2,1,2]", L(2, 3), "[2,1,1,1]", L(1, 10), "[1,1,1,2]", { 92, 124 });
}

#define POOL(what, attrs, X, xsh, ysh, ...) do { \
		struct problem p_; struct pool_geom g_; struct buf e_ = BUF_INIT; \
		const double x_[] = X, want_[] = __VA_ARGS__; \
		struct arrays arr_ = { { x_ } }; \
		LOAD(&p_, "pool", attrs, 2, "x", xsh, "out", ysh); \
		if (pool_geom_from_problem(&p_, &g_, &e_) < 0) fail_msg("%s: %s", what, e_.s); \
		assert_int_equal(pool_numel(&g_), sizeof(want_) / sizeof(want_[0])); \
		check_vals(what, poolv, &g_, &arr_, want_, pool_numel(&g_)); \
		problem_release(&p_); buf_release(&e_); \
	} while (0)
#define P1(op, k, s, p, d, extra) "{\"op\": \"" op "\", \"kernel\": [" #k "], \"stride\": [" #s \
	"], \"padding\": [" #p "], \"dilation\": [" #d "]" extra "}"

static void test_pool(void **state)
{
	(void)state;
	POOL("max", P1("max", 2, 1, 0, 1, ""), L(1, 5, 2, 4, 3), "[1,1,5]", "[1,1,4]", { 5, 5, 4, 4 });
	/* Padding never wins: the first window is {pad, 1}. */
	POOL("max padded", P1("max", 2, 2, 1, 1, ""), L(1, 5, 2, 4, 3), "[1,1,5]", "[1,1,3]",
	     { 1, 5, 4 });
	POOL("max padded negative", P1("max", 2, 2, 1, 1, ""), L(-1, -5, -2, -4, -3), "[1,1,5]",
	     "[1,1,3]", { -1, -2, -3 });
	POOL("max dilated", P1("max", 2, 1, 0, 2, ""), L(1, 5, 2, 4, 3), "[1,1,5]", "[1,1,3]",
	     { 2, 5, 3 });
	POOL("max ceil_mode", P1("max", 2, 2, 0, 1, ", \"ceil_mode\": true"), L(1, 5, 2, 4, 3),
	     "[1,1,5]", "[1,1,3]", { 5, 4, 3 });
	POOL("max 2 channels", P1("max", 2, 2, 0, 1, ""), L(1, 2, 3, 4, 8, 7, 6, 5), "[1,2,4]",
	     "[1,2,2]", { 2, 4, 8, 6 });
	/* Average with count_include_pad (PyTorch's default) and without. */
	POOL("avg padded", P1("avg", 2, 1, 1, 1, ""), L(1, 2, 3, 4), "[1,1,4]", "[1,1,5]",
	     { 0.5, 1.5, 2.5, 3.5, 2 });
	POOL("avg exclude pad", P1("avg", 2, 1, 1, 1, ", \"count_include_pad\": false"),
	     L(1, 2, 3, 4), "[1,1,4]", "[1,1,5]", { 1, 1.5, 2.5, 3.5, 4 });
	/* ceil_mode: the last window is cut by the input's end (divisor 2). */
	POOL("avg ceil_mode", P1("avg", 3, 2, 0, 1, ", \"ceil_mode\": true"), L(1, 2, 3, 4),
	     "[1,1,4]", "[1,1,2]", { 2, 3.5 });
	POOL("avg 2d padded", "{\"op\": \"avg\", \"kernel\": [2,2], \"stride\": [1,1], "
	     "\"padding\": [1,1], \"dilation\": [1,1]}", L(1, 2, 3, 4), "[1,1,2,2]", "[1,1,3,3]",
	     { 0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1 });
	POOL("avg 3d stride = kernel", "{\"op\": \"avg\", \"kernel\": [2,2,2], \"stride\": [2,2,2], "
	     "\"padding\": [0,0,0], \"dilation\": [1,1,1]}", L(1, 2, 3, 4, 5, 6, 7, 8), "[1,1,2,2,2]",
	     "[1,1,1,1,1]", { 4.5 });
}

/* Inconsistent specs fail with a message naming the problem and the issue. */
static void expect_geom_error(const char *fam, const char *attrs, const char *want, int n,
			      const char *n1, const char *s1, const char *n2, const char *s2,
			      const char *n3, const char *s3)
{
	struct problem p;
	struct buf err = BUF_INIT;
	int rc;
	if (n == 2)
		rc = load_err(&p, fam, attrs, &err, 2, n1, s1, n2, s2);
	else
		rc = load_err(&p, fam, attrs, &err, 3, n1, s1, n2, s2, n3, s3);
	if (rc < 0)
		fail_msg("spec does not load: %s", err.s);
	if (!strcmp(fam, "matmul")) {
		struct mm_geom g;
		rc = mm_geom_from_problem(&p, &g, &err);
	} else if (!strcmp(fam, "conv")) {
		struct conv_geom g;
		rc = conv_geom_from_problem(&p, &g, &err);
	} else {
		struct pool_geom g;
		rc = pool_geom_from_problem(&p, &g, &err);
	}
	assert_int_equal(rc, -1);
	if (!strstr(err.s, want) || !strstr(err.s, "level1/900_T"))
		fail_msg("error \"%s\" lacks \"%s\" or the problem id", err.s, want);
	problem_release(&p);
	buf_release(&err);
}

static void test_errors(void **state)
{
	(void)state;
	expect_geom_error("matmul", "{}", "inner dimensions", 3, "A", "[2,3]", "B", "[2,2]", "C", "[2,2]");
	expect_geom_error("matmul", "{}", "output shape", 3, "A", "[2,3]", "B", "[3,2]", "C", "[2,3]");
	expect_geom_error("matmul", "{\"mask\": \"upper\"}", "attrs.mask", 3, "A", "[2,2]", "B",
			  "[2,2]", "C", "[2,2]");
	expect_geom_error("matmul", "[]", "\"attrs\"", 3, "A", "[2,2]", "B", "[2,2]", "C", "[2,2]");
	expect_geom_error("conv", C1(3, 1, 0, 1, 0, ""), "PyTorch's formula", 3, "x", "[1,1,4]", "w",
			  "[1,1,3]", "out", "[1,1,3]");
	expect_geom_error("conv", C1(3, 1, 0, 1, 0, ""), "weight shape", 3, "x", "[1,1,4]", "w",
			  "[1,1,2]", "out", "[1,1,2]");
	expect_geom_error("conv", C1(3, 0, 0, 1, 0, ""), "attrs.stride[0]", 3, "x", "[1,1,4]", "w",
			  "[1,1,3]", "out", "[1,1,2]");
	expect_geom_error("conv", "{\"kernel\": [3,3]}", "attrs.kernel", 3, "x", "[1,1,4]", "w",
			  "[1,1,3]", "out", "[1,1,2]");
	expect_geom_error("conv", C1(1, 1, 0, 1, 0, ", \"groups\": 2"), "attrs.groups", 3, "x",
			  "[1,3,4]", "w", "[2,1,1]", "out", "[1,2,4]");
	expect_geom_error("conv", C1(3, 1, 0, 1, 0, ", \"bias\": true"), "wants 3 inputs", 3, "x",
			  "[1,1,4]", "w", "[1,1,3]", "out", "[1,1,2]");
	expect_geom_error("pool", P1("max", 2, 1, 0, 1, ""), "PyTorch's formula", 2, "x", "[1,1,5]",
			  "out", "[1,1,5]", NULL, NULL);
	expect_geom_error("pool", P1("min", 2, 1, 0, 1, ""), "attrs.op", 2, "x", "[1,1,5]", "out",
			  "[1,1,4]", NULL, NULL);
	expect_geom_error("pool", P1("max", 2, 1, 2, 1, ""), "half the kernel", 2, "x", "[1,1,5]",
			  "out", "[1,1,8]", NULL, NULL);
}

/* Through oracle_value with the generator's inputs: a padded conv1d against
 * its formula, a matmul with a threaded long K sum against a serial sum. */
static void test_dispatch(void **state)
{
	struct problem p;
	struct oracle_ctx c;
	struct buf err = BUF_INIT;
	double v;

	(void)state;
	LOAD(&p, "conv", C1(3, 1, 1, 1, 0, ""), 3, "x", "[1,1,6]", "w", "[1,1,3]", "out", "[1,1,6]");
	oracle_ctx_init(&c, &p, 7);
	for (long long o = 0; o < 6; o++) {
		double want = 0;
		for (long long k = 0; k < 3; k++)
			if (o - 1 + k >= 0 && o - 1 + k < 6)
				want += oracle_input(&c, 0, o - 1 + k) * oracle_input(&c, 1, k);
		assert_int_equal(oracle_value(&c, 0, o, &v, &err), 0);
		if (fabs(v - want) > 1e-12)
			fail_msg("conv1d[%lld] = %.17g, want %.17g", o, v, want);
	}
	assert_int_equal(oracle_value(&c, 0, 6, &v, &err), -1);
	assert_non_null(strstr(err.s, "level1/900_T"));
	oracle_ctx_release(&c);
	problem_release(&p);

	LOAD(&p, "matmul", "{}", 3, "A", "[2,70000]", "B", "[70000,1]", "C", "[2,1]");
	oracle_ctx_init(&c, &p, 9);
	for (long long m = 0; m < 2; m++) {
		double want = 0;
		for (long long k = 0; k < 70000; k++)
			want += oracle_input(&c, 0, m * 70000 + k) * oracle_input(&c, 1, k);
		assert_int_equal(oracle_value(&c, 0, m, &v, &err), 0);
		if (fabs(v - want) > 1e-9 * fabs(want))
			fail_msg("matvec[%lld] = %.17g, want %.17g", m, v, want);
	}
	oracle_ctx_release(&c);
	problem_release(&p);

	/* A geometry error comes back through oracle_value. */
	LOAD(&p, "pool", P1("max", 2, 1, 0, 1, ""), 2, "x", "[1,1,5]", "out", "[1,1,5]");
	oracle_ctx_init(&c, &p, 1);
	assert_int_equal(oracle_value(&c, 0, 0, &v, &err), -1);
	assert_non_null(strstr(err.s, "PyTorch's formula"));
	oracle_ctx_release(&c);
	problem_release(&p);
	buf_release(&err);
}

/* Every committed matmul/conv/pool problem loads and its geometry parses. */
static void test_committed_specs(void **state)
{
	const char *root = getenv("KF_ROOT") ? getenv("KF_ROOT") : ".";
	char dirpath[4096];
	struct dirent **names;
	int n, seen = 0;

	(void)state;
	snprintf(dirpath, sizeof(dirpath), "%s/problems/level1", root);
	n = scandir(dirpath, &names, NULL, alphasort);
	if (n < 0)
		fail_msg("cannot list %s", dirpath);
	for (int i = 0; i < n; i++) {
		struct problem p;
		struct buf err = BUF_INIT, dir = BUF_INIT;
		int rc = 0;
		if (names[i]->d_name[0] == '.') {
			free(names[i]);
			continue;
		}
		buf_addf(&dir, "%s/%s", dirpath, names[i]->d_name);
		free(names[i]);
		problem_init(&p);
		if (problem_load(&p, dir.s, &err) < 0)
			fail_msg("%s", err.s);
		if (!strcmp(p.family, "matmul")) {
			struct mm_geom g;
			rc = mm_geom_from_problem(&p, &g, &err);
			seen++;
		} else if (!strcmp(p.family, "conv")) {
			struct conv_geom g;
			rc = conv_geom_from_problem(&p, &g, &err);
			seen++;
		} else if (!strcmp(p.family, "pool")) {
			struct pool_geom g;
			rc = pool_geom_from_problem(&p, &g, &err);
			seen++;
		}
		if (rc < 0)
			fail_msg("%s", err.s);
		problem_release(&p);
		buf_release(&err);
		buf_release(&dir);
	}
	free(names);
	assert_int_equal(seen, 58);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matmul),
		cmocka_unit_test(test_conv),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_committed_specs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
