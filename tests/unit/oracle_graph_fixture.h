/* The graph oracle's unit tests (test_oracle_graph.c, level 2 ops;
 * test_oracle_graph3.c, level 3): a hand-built one-output spec loaded with
 * an oracle context, its inputs and outputs by index, and a comparison with
 * values computed by brute force. TG_LEVEL (a string) is the spec's level. */
#ifndef KF_TEST_ORACLE_GRAPH_FIXTURE_H
#define KF_TEST_ORACLE_GRAPH_FIXTURE_H

#include "oracle/oracle.h"
#include "oracle/oracle_graph.h"

#ifndef TG_LEVEL
#define TG_LEVEL "2"
#endif

struct tg {
	struct problem p;
	struct oracle_ctx c;
};

/* An input of uniform values in [lo, hi). */
#define IN_U(name, shape, lo, hi)                                                                  \
	"{\"name\":\"" name "\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":" shape          \
	",\"dist\":{\"kind\":\"uniform\",\"low\":" #lo ",\"high\":" #hi "}}"
#define IN(name, shape) IN_U(name, shape, -1, 1)

static int tg_try(struct tg *g, const char *inputs, const char *out_shape, const char *graph,
		  struct buf *err)
{
	struct buf spec = BUF_INIT;
	int ret;

	buf_addf(&spec,
		 "{\"id\":\"level" TG_LEVEL "/999_T\",\"level\":" TG_LEVEL ",\"number\":999,\"name\":\"T\","
		 "\"kernelbench_file\":\"999_T.py\",\"family\":\"graph\",\"sizes\":{},"
		 "\"inputs\":[%s],\"outputs\":[{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":%s}],"
		 "\"tolerance\":\"fp32\",\"flops\":1,\"min_bytes\":1,\"attrs\":{\"graph\":[%s]}}",
		 inputs, out_shape, graph);
	problem_init(&g->p);
	ret = problem_load_json(&g->p, spec.s, "test spec", err);
	buf_release(&spec);
	if (ret == 0)
		oracle_ctx_init(&g->c, &g->p, 11);
	return ret;
}

static void tg_load(struct tg *g, const char *inputs, const char *out_shape, const char *graph)
{
	struct buf err = BUF_INIT;
	if (tg_try(g, inputs, out_shape, graph, &err) < 0)
		fail_msg("%s", err.s);
	buf_release(&err);
}

static void tg_free(struct tg *g)
{
	oracle_ctx_release(&g->c);
	problem_release(&g->p);
}

static double X(struct tg *g, const char *name, long long i)
{
	int t = problem_tensor_index(&g->p, name);
	assert_true(t >= 0);
	return oracle_input(&g->c, t, i);
}

static double Y(struct tg *g, long long i)
{
	struct buf err = BUF_INIT;
	double v;
	if (oracle_value(&g->c, 0, i, &v, &err) < 0)
		fail_msg("%s", err.s);
	buf_release(&err);
	return v;
}

static int close_to(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (isinf(a) || isinf(b))
		return a == b;
	return fabs(a - b) <= 1e-11 + 1e-10 * fabs(b);
}

/* Every output element against want[]. */
static void expect(struct tg *g, const double *want, long long n, const char *what)
{
	assert_int_equal(g->p.t[g->p.n_in].numel, n);
	for (long long i = 0; i < n; i++) {
		double v = Y(g, i);
		if (!close_to(v, want[i]))
			fail_msg("%s: y[%lld] = %.17g, want %.17g", what, i, v, want[i]);
	}
}

#endif
