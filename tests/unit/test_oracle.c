/* The CPU oracle on tiny problems: hand-computed values (constant inputs)
 * and a second, naive computation from the generated inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle.h"

/* A spec with family/op, sizes, inputs (JSON array text), one output. */
static void load(struct problem *p, const char *family, const char *op, const char *sizes,
		 const char *inputs, const char *out_shape, const char *extra)
{
	char spec[4096];
	struct buf err = BUF_INIT;
	snprintf(spec, sizeof(spec),
		 "{\"id\":\"level1/999_T\",\"level\":1,\"number\":999,\"name\":\"T\","
		 "\"kernelbench_file\":\"999_T.py\",\"family\":\"%s\",\"sizes\":{%s},"
		 "\"scalars\":{\"margin\":1.0,\"negative_slope\":0.01,\"alpha\":1.0,\"s\":3.14},"
		 "\"inputs\":%s,\"outputs\":[{\"name\":\"y\",\"dtype\":\"%s\",\"shape\":%s}],"
		 "\"tolerance\":\"fp32\",\"flops\":1,\"min_bytes\":1,"
		 "\"attrs\":{\"op\":\"%s\",\"dim\":1,\"eps\":1e-5%s}}",
		 family, sizes, inputs, strstr(op, "arg") ? "int64" : "float32", out_shape, op,
		 extra ? extra : "");
	problem_init(p);
	if (problem_load_json(p, spec, "test spec", &err) < 0)
		fail_msg("%s", err.s);
	buf_release(&err);
}

static double val(struct oracle_ctx *c, long long i)
{
	struct buf err = BUF_INIT;
	double v;
	if (oracle_value(c, 0, i, &v, &err) < 0)
		fail_msg("%s", err.s);
	buf_release(&err);
	return v;
}

#define CONST_X(v) "[{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"]," \
		   "\"dist\":{\"kind\":\"constant\",\"value\":" #v "}}]"
#define NEAR(a, b) assert_true(fabs((a) - (b)) <= 1e-12 + 1e-12 * fabs(b))

static void test_elementwise_hand(void **state)
{
	static const struct {
		const char *op;
		double at1, atm1;
	} cases[] = {
		{ "relu", 1, 0 },
		{ "leaky_relu", 1, -0.01 },
		{ "sigmoid", 0.7310585786300049, 0.2689414213699951 },
		{ "tanh", 0.7615941559557649, -0.7615941559557649 },
		{ "swish", 0.7310585786300049, -0.2689414213699951 },
		{ "gelu", 0.8413447460685429, -0.15865525393145707 },
		{ "selu", 1.0507009873554805, -1.1113307378125628 },
		{ "hardsigmoid", 2.0 / 3, 1.0 / 3 },
		{ "softplus", 1.3132616875182228, 0.31326168751822286 },
		{ "softsign", 0.5, -0.5 },
		{ "elu", 1, -0.6321205588285577 },
		{ "hardtanh", 1, -1 },
		{ "new_gelu", 0.8411919906082768, -0.15880800939172324 },
		{ "scale", 3.1400001049041748, -3.1400001049041748 },
	};
	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct problem p1, p2;
		struct oracle_ctx c1, c2;
		load(&p1, "elementwise", cases[k].op, "\"n\":2,\"m\":3", CONST_X(1.0), "[\"n\",\"m\"]", NULL);
		load(&p2, "elementwise", cases[k].op, "\"n\":2,\"m\":3", CONST_X(-1.0), "[\"n\",\"m\"]", NULL);
		oracle_ctx_init(&c1, &p1, 1);
		oracle_ctx_init(&c2, &p2, 1);
		if (fabs(val(&c1, 5) - cases[k].at1) > 1e-12 || fabs(val(&c2, 0) - cases[k].atm1) > 1e-12)
			fail_msg("%s: %.17g %.17g", cases[k].op, val(&c1, 5), val(&c2, 0));
		oracle_ctx_release(&c1);
		oracle_ctx_release(&c2);
		problem_release(&p1);
		problem_release(&p2);
	}
}

#define RANDINT_X(shape, lo, hi) "[{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":" shape "," \
		   "\"dist\":{\"kind\":\"randint\",\"low\":" #lo ",\"high\":" #hi "}}]"

static void test_reduce(void **state)
{
	const char *ops[] = { "sum", "mean", "max", "min", "argmax", "argmin" };
	(void)state;
	for (int k = 0; k < 6; k++) {
		struct problem p;
		struct oracle_ctx c;
		int ties = 0;
		load(&p, "reduce", ops[k], "\"b\":2,\"d1\":5,\"d2\":3", RANDINT_X("[\"b\",\"d1\",\"d2\"]", 0, 4),
		     "[\"b\",\"d2\"]", NULL);
		oracle_ctx_init(&c, &p, 7);
		for (long long b = 0; b < 2; b++)
			for (long long j = 0; j < 3; j++) {
				double x[5], s = 0, mx = -1e9, mn = 1e9;
				int amx = 0, amn = 0;
				for (int i = 0; i < 5; i++) {
					x[i] = oracle_input(&c, 0, (b * 5 + i) * 3 + j);
					assert_true(x[i] >= 0 && x[i] < 4);
					s += x[i];
					if (x[i] > mx) mx = x[i], amx = i;
					if (x[i] < mn) mn = x[i], amn = i;
				}
				for (int i = 0; i < 5; i++)
					ties += i != amx && x[i] == mx;
				double want[6] = { s, s / 5, mx, mn, amx, amn };
				NEAR(val(&c, b * 3 + j), want[k]);
			}
		assert_true(ties > 0); /* values 0..3 over 5 rows: the first-index rule is exercised */
		oracle_ctx_release(&c);
		problem_release(&p);
	}
}

static void test_scan(void **state)
{
	const char *ops[] = { "cumsum", "cumprod", "cumsum_reverse", "cumsum_exclusive", "masked_cumsum" };
	(void)state;
	for (int k = 0; k < 5; k++) {
		struct problem p;
		struct oracle_ctx c;
		load(&p, "scan", ops[k], "\"n\":2,\"m\":6",
		     "[{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],"
		     "\"dist\":{\"kind\":\"randint\",\"low\":1,\"high\":4}},"
		     "{\"name\":\"mask\",\"role\":\"input\",\"dtype\":\"bool\",\"shape\":[\"n\",\"m\"],"
		     "\"dist\":{\"kind\":\"bernoulli\",\"p\":0.5}}]",
		     "[\"n\",\"m\"]", NULL);
		oracle_ctx_init(&c, &p, 3);
		for (long long r = 0; r < 2; r++) {
			double x[6], m[6], want[6], acc;
			for (int j = 0; j < 6; j++) {
				x[j] = oracle_input(&c, 0, r * 6 + j);
				m[j] = oracle_input(&c, 1, r * 6 + j);
				assert_true(m[j] == 0 || m[j] == 1);
			}
			acc = k == 1 ? 1 : 0;
			if (k == 2)
				for (int j = 5; j >= 0; j--)
					want[j] = acc += x[j];
			else
				for (int j = 0; j < 6; j++) {
					if (k == 3) {
						want[j] = acc;
						acc += x[j];
					} else if (k == 1) {
						want[j] = acc *= x[j];
					} else {
						want[j] = acc += (k == 4 ? m[j] : 1) * x[j];
					}
				}
			for (int j = 0; j < 6; j++)
				NEAR(val(&c, r * 6 + j), want[j]);
		}
		oracle_ctx_release(&c);
		problem_release(&p);
	}
}

static void test_norm_hand(void **state)
{
	struct problem p;
	struct oracle_ctx c;
	(void)state;
	load(&p, "norm", "softmax", "\"n\":2,\"m\":8", CONST_X(0.3), "[\"n\",\"m\"]", NULL);
	oracle_ctx_init(&c, &p, 1);
	NEAR(val(&c, 9), 0.125);
	oracle_ctx_release(&c);
	problem_release(&p);
	load(&p, "norm", "log_softmax", "\"n\":2,\"m\":8", CONST_X(0.3), "[\"n\",\"m\"]", NULL);
	oracle_ctx_init(&c, &p, 1);
	NEAR(val(&c, 3), -log(8.0));
	oracle_ctx_release(&c);
	problem_release(&p);
	load(&p, "norm", "l1norm", "\"n\":2,\"m\":8", CONST_X(-2.0), "[\"n\",\"m\"]", NULL);
	oracle_ctx_init(&c, &p, 1);
	NEAR(val(&c, 3), -1.0);
	oracle_ctx_release(&c);
	problem_release(&p);
	load(&p, "norm", "l2norm", "\"n\":2,\"m\":4", CONST_X(3.0), "[\"n\",\"m\"]", NULL);
	oracle_ctx_init(&c, &p, 1);
	NEAR(val(&c, 3), 0.5);
	oracle_ctx_release(&c);
	problem_release(&p);
	load(&p, "norm", "frobenius", "\"n\":2,\"m\":8", CONST_X(1.0), "[\"n\",\"m\"]", NULL);
	oracle_ctx_init(&c, &p, 1);
	NEAR(val(&c, 15), 0.25);
	oracle_ctx_release(&c);
	problem_release(&p);
}

#define NCHW_X "[{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"c\",\"h\",\"w\"]," \
	"\"dist\":{\"kind\":\"uniform\",\"low\":-1,\"high\":2}}," \
	"{\"name\":\"weight\",\"role\":\"param\",\"dtype\":\"float32\",\"shape\":[\"c\"],\"dist\":{\"kind\":\"constant\",\"value\":2}}," \
	"{\"name\":\"bias\",\"role\":\"param\",\"dtype\":\"float32\",\"shape\":[\"c\"],\"dist\":{\"kind\":\"constant\",\"value\":0.5}}]"

/* Naive statistics of x over the elements selected by pick(). */
static double naive_norm(struct oracle_ctx *c, long long flat, int (*same)(long long, long long),
			 double eps, int affine)
{
	double s = 0, s2 = 0, cnt = 0, x = oracle_input(c, 0, flat);
	for (long long i = 0; i < c->p->t[0].numel; i++)
		if (same(i, flat)) {
			double e = oracle_input(c, 0, i);
			s += e;
			s2 += e * e;
			cnt++;
		}
	double mean = s / cnt, var = s2 / cnt - mean * mean;
	double y = (x - mean) / sqrt(var + eps);
	return affine ? 2 * y + 0.5 : y;
}

/* n=3, c=4, h=2, w=3 */
static int same_channel(long long a, long long b) { return (a / 6) % 4 == (b / 6) % 4; }
static int same_instance(long long a, long long b) { return a / 6 == b / 6; }
static int same_group(long long a, long long b) { return a / 12 == b / 12; } /* 2 groups of 2 channels */
static int same_sample(long long a, long long b) { return a / 24 == b / 24; }

static void test_norm_stats(void **state)
{
	static const struct {
		const char *op;
		int (*same)(long long, long long);
		int affine;
	} cases[] = {
		{ "batchnorm", same_channel, 1 },
		{ "instancenorm", same_instance, 0 },
		{ "groupnorm", same_group, 1 },
	};
	(void)state;
	for (int k = 0; k < 3; k++) {
		struct problem p;
		struct oracle_ctx c;
		load(&p, "norm", cases[k].op, "\"n\":3,\"c\":4,\"h\":2,\"w\":3,\"num_groups\":2",
		     cases[k].affine ? NCHW_X : "[{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\","
		     "\"shape\":[\"n\",\"c\",\"h\",\"w\"],\"dist\":{\"kind\":\"uniform\",\"low\":-1,\"high\":2}}]",
		     "[\"n\",\"c\",\"h\",\"w\"]", NULL);
		oracle_ctx_init(&c, &p, 11);
		for (long long i = 0; i < 72; i++)
			if (fabs(val(&c, i) - naive_norm(&c, i, cases[k].same, 1e-5, cases[k].affine)) > 1e-9)
				fail_msg("%s[%lld]", cases[k].op, i);
		oracle_ctx_release(&c);
		problem_release(&p);
	}
	/* LayerNorm over (c, h, w) with per-element weight/bias */
	struct problem p;
	struct oracle_ctx c;
	load(&p, "norm", "layernorm", "\"n\":3,\"c\":4,\"h\":2,\"w\":3",
	     "[{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"c\",\"h\",\"w\"],"
	     "\"dist\":{\"kind\":\"normal\",\"mean\":0,\"std\":1}},"
	     "{\"name\":\"weight\",\"role\":\"param\",\"dtype\":\"float32\",\"shape\":[\"c\",\"h\",\"w\"],\"dist\":{\"kind\":\"constant\",\"value\":2}},"
	     "{\"name\":\"bias\",\"role\":\"param\",\"dtype\":\"float32\",\"shape\":[\"c\",\"h\",\"w\"],\"dist\":{\"kind\":\"constant\",\"value\":0.5}}]",
	     "[\"n\",\"c\",\"h\",\"w\"]", NULL);
	oracle_ctx_init(&c, &p, 5);
	for (long long i = 0; i < 72; i++)
		assert_true(fabs(val(&c, i) - naive_norm(&c, i, same_sample, 1e-5, 1)) < 1e-9);
	oracle_ctx_release(&c);
	problem_release(&p);
	/* RMSNorm over channels */
	load(&p, "norm", "rmsnorm", "\"n\":3,\"c\":4,\"h\":2,\"w\":3",
	     "[{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"c\",\"h\",\"w\"],"
	     "\"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1}}]", "[\"n\",\"c\",\"h\",\"w\"]", NULL);
	oracle_ctx_init(&c, &p, 5);
	for (long long i = 0; i < 72; i++) {
		long long n = i / 24, q = i % 6;
		double s = 0;
		for (int ch = 0; ch < 4; ch++) {
			double e = oracle_input(&c, 0, n * 24 + ch * 6 + q);
			s += e * e;
		}
		NEAR(val(&c, i), oracle_input(&c, 0, i) / sqrt(s / 4 + 1e-5));
	}
	oracle_ctx_release(&c);
	problem_release(&p);
}

#define TWO_CONST(a, b, tshape, tdt) \
	"[{\"name\":\"predictions\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"]," \
	"\"dist\":{\"kind\":\"constant\",\"value\":" #a "}}," \
	"{\"name\":\"targets\",\"role\":\"input\",\"dtype\":\"" tdt "\",\"shape\":" tshape "," \
	"\"dist\":{\"kind\":\"constant\",\"value\":" #b "}}]"

static double loss_of(const char *op, const char *inputs)
{
	struct problem p;
	struct oracle_ctx c;
	double v;
	load(&p, "loss", op, "\"n\":4,\"m\":8", inputs, "[]", NULL);
	oracle_ctx_init(&c, &p, 1);
	v = val(&c, 0);
	oracle_ctx_release(&c);
	problem_release(&p);
	return v;
}

static void test_loss(void **state)
{
	(void)state;
	NEAR(loss_of("mse", TWO_CONST(3, 1, "[\"n\",\"m\"]", "float32")), 4.0);
	NEAR(loss_of("huber", TWO_CONST(3, 1, "[\"n\",\"m\"]", "float32")), 1.5);
	NEAR(loss_of("huber", TWO_CONST(1.5, 1, "[\"n\",\"m\"]", "float32")), 0.125);
	NEAR(loss_of("hinge", TWO_CONST(0.25, -1, "[\"m\"]", "float32")), 1.25);
	NEAR(loss_of("cross_entropy", TWO_CONST(0, 3, "[\"n\"]", "int64")), log(8.0));
	NEAR(loss_of("kldiv", TWO_CONST(0.125, 0.25, "[\"n\",\"m\"]", "float32")),
	     8 * 0.25 * log(2.0)); /* sum over a row / batch */
	NEAR(loss_of("triplet",
		     "[{\"name\":\"a\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],\"dist\":{\"kind\":\"constant\",\"value\":1}},"
		     "{\"name\":\"p\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],\"dist\":{\"kind\":\"constant\",\"value\":1}},"
		     "{\"name\":\"q\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],\"dist\":{\"kind\":\"constant\",\"value\":3}}]"),
	     0.0); /* d(a,p) = eps sqrt(8) is below d(a,n) - margin */
	/* hinge with random signs: mean of 1 - 0.25 t[j] */
	{
		struct problem p;
		struct oracle_ctx c;
		double want = 0;
		load(&p, "loss", "hinge", "\"n\":4,\"m\":8",
		     "[{\"name\":\"predictions\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],"
		     "\"dist\":{\"kind\":\"constant\",\"value\":0.25}},"
		     "{\"name\":\"targets\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"m\"],\"dist\":{\"kind\":\"sign\"}}]",
		     "[]", NULL);
		oracle_ctx_init(&c, &p, 9);
		for (int j = 0; j < 8; j++)
			want += 1 - 0.25 * oracle_input(&c, 1, j);
		NEAR(val(&c, 0), want / 8);
		oracle_ctx_release(&c);
		problem_release(&p);
	}
}

static void test_attention(void **state)
{
	struct problem p;
	struct oracle_ctx c;
	(void)state;
	/* K constant: every key scores the same, so out = mean of V over keys */
	load(&p, "attention", "sdpa", "\"b\":1,\"h\":2,\"s\":3,\"d\":4",
	     "[{\"name\":\"Q\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"b\",\"h\",\"s\",\"d\"],\"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1}},"
	     "{\"name\":\"K\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"b\",\"h\",\"s\",\"d\"],\"dist\":{\"kind\":\"constant\",\"value\":0.5}},"
	     "{\"name\":\"V\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"b\",\"h\",\"s\",\"d\"],\"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1}}]",
	     "[\"b\",\"h\",\"s\",\"d\"]", NULL);
	oracle_ctx_init(&c, &p, 2);
	for (long long i = 0; i < 24; i++) {
		long long bh = i / 12, d = i % 4;
		double m = 0;
		for (int k = 0; k < 3; k++)
			m += oracle_input(&c, 2, bh * 12 + k * 4 + d) / 3;
		NEAR(val(&c, i), m);
	}
	oracle_ctx_release(&c);
	problem_release(&p);
}

static void test_sample_and_errors(void **state)
{
	struct problem p;
	struct oracle_ctx c;
	struct buf err = BUF_INIT;
	long long idx[400];
	double v;
	int n, seen[4] = { 0 };
	(void)state;

	load(&p, "norm", "batchnorm", "\"n\":3,\"c\":4,\"h\":200,\"w\":300", NCHW_X,
	     "[\"n\",\"c\",\"h\",\"w\"]", NULL);
	n = oracle_sample(&p, 0, 42, idx, 400);
	assert_true(n > 20 && n <= 400);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[n - 1], 3LL * 4 * 200 * 300 - 1);
	for (int i = 1; i < n; i++)
		assert_true(idx[i] > idx[i - 1]);
	for (int i = 0; i < n; i++)
		seen[(idx[i] / 60000) % 4] = 1;
	assert_true(seen[0] && seen[1] && seen[2] && seen[3]); /* every channel */
	oracle_ctx_init(&c, &p, 1);
	assert_int_equal(oracle_value(&c, 0, -1, &v, &err), -1);
	assert_int_equal(oracle_value(&c, 1, 0, &v, &err), -1);
	oracle_ctx_release(&c);
	problem_release(&p);
	load(&p, "norm", "nosuchop", "\"n\":2,\"m\":2", CONST_X(1), "[\"n\",\"m\"]", NULL);
	oracle_ctx_init(&c, &p, 1);
	assert_int_equal(oracle_value(&c, 0, 0, &v, &err), -1);
	assert_non_null(strstr(err.s, "nosuchop"));
	oracle_ctx_release(&c);
	problem_release(&p);
	load(&p, "matmul", "x", "\"n\":2,\"m\":2", CONST_X(1), "[\"n\",\"m\"]", NULL);
	oracle_ctx_init(&c, &p, 1);
	assert_int_equal(oracle_value(&c, 0, 0, &v, &err), -1);
	oracle_ctx_release(&c);
	problem_release(&p);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elementwise_hand), cmocka_unit_test(test_reduce),
		cmocka_unit_test(test_scan),             cmocka_unit_test(test_norm_hand),
		cmocka_unit_test(test_norm_stats),       cmocka_unit_test(test_loss),
		cmocka_unit_test(test_attention),        cmocka_unit_test(test_sample_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
