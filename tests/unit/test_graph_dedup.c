/* The graph template's kernel deduplication (kernels/graph/builtin_graph_dedup.c):
 * a kernel of the same text is written once and its launches name the
 * first; kernels that differ in sizes stay literal under the budget and
 * share one kernel with the sizes as arguments over it; defines, geometry
 * and divisors are lifted with their types; dedup 0 keeps every kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kernels/graph/builtin_graph.h"

static struct gr_plan *plan(int dedup, long long budget)
{
	struct gr_plan *p = malloc(sizeof(*p));

	assert_non_null(p);
	gr_plan_init(p);
	p->dedup = dedup;
	p->src_budget = budget;
	return p;
}

static void done(struct gr_plan *p)
{
	gr_plan_release(p);
	free(p);
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *q = s; (q = strstr(q, what)); q += strlen(what))
		n++;
	return n;
}

/* Kernel k: a bound and a stride, its comment naming its own node. */
static void add(struct gr_plan *p, int k, long long bound, long long stride)
{
	char name[16], body[256], args[32];
	struct buf err = BUF_INIT;

	snprintf(name, sizeof(name), "g%d_ew", k);
	snprintf(body, sizeof(body), "    /* node t%d */\n    const long long i = threadIdx.x;\n"
		 "    if (i >= %lldLL) return;\n    y[i * %lldLL] = x[i * 7LL];\n", k, bound, stride);
	snprintf(args, sizeof(args), "in%d, buf%d", k, k);
	assert_int_equal(gr_kernel(p, name, "const float* x, float* y", body, "4", 256, args, &err), 0);
	buf_release(&err);
}

static void finish(struct gr_plan *p)
{
	struct buf err = BUF_INIT;

	assert_int_equal(gr_dedup_finish(p, &err), 0);
	buf_release(&err);
}

static void identical_once(void **state)
{
	struct gr_plan *p = plan(2, 1 << 20);

	(void)state;
	add(p, 0, 100, 1);
	add(p, 1, 100, 1);	/* the same but for its name and comment */
	finish(p);
	assert_int_equal(count(p->src.s, "__global__"), 1);
	assert_non_null(strstr(p->src.s, "/* node t0 */"));
	assert_null(strstr(p->src.s, "g1_ew"));
	assert_non_null(strstr(p->launch.s, "g0_ew<<<4, 256>>>(in0, buf0);\n"
					    "g0_ew<<<4, 256>>>(in1, buf1);\n"));
	done(p);
}

static void literal_under_budget(void **state)
{
	struct gr_plan *p = plan(2, 1 << 20);

	(void)state;
	add(p, 0, 100, 1);
	add(p, 1, 200, 1);
	finish(p);
	assert_int_equal(count(p->src.s, "__global__"), 2);
	assert_non_null(strstr(p->src.s, "if (i >= 200LL)"));
	assert_null(strstr(p->src.s, "lc0"));
	assert_non_null(strstr(p->launch.s, "g1_ew<<<4, 256>>>(in1, buf1);"));
	done(p);
}

static void lifted_over_budget(void **state)
{
	struct gr_plan *p = plan(2, 0);

	(void)state;
	add(p, 0, 100, 1);
	add(p, 1, 200, 2);
	add(p, 2, 300, 3);	/* bound and stride vary, 7 does not */
	add(p, 3, 200, 2);	/* as g1 */
	finish(p);
	assert_int_equal(count(p->src.s, "__global__"), 1);
	assert_non_null(strstr(p->src.s, "g0_ew(const float* x, float* y, long long lc0, long long lc1)"));
	assert_non_null(strstr(p->src.s, "if (i >= lc0) return;\n    y[i * lc1] = x[i * 7LL];"));
	assert_non_null(strstr(p->launch.s, "g0_ew<<<4, 256>>>(in0, buf0, 100, 1);\n"
					    "g0_ew<<<4, 256>>>(in1, buf1, 200, 2);\n"
					    "g0_ew<<<4, 256>>>(in2, buf2, 300, 3);\n"
					    "g0_ew<<<4, 256>>>(in3, buf3, 200, 2);\n"));
	done(p);
}

/* Equal columns share a parameter; geometry is int, a divisor double;
 * defines around the kernel count as its text. */
static void kinds_and_defines(void **state)
{
	struct gr_plan *p = plan(2, 0);
	struct buf err = BUF_INIT;
	const char *body[2] = {
		"    const int NB = 8, CI = 3;\n    y[0] = (float)(T_ / 12.0) + NB + CI + 5LL;\n",
		"    const int NB = 9, CI = 3;\n    y[0] = (float)(T_ / 16.0) + NB + CI + 6LL;\n" };

	(void)state;
	for (int k = 0; k < 2; k++) {
		char name[16], pre[32];
		snprintf(name, sizeof(name), "g%d_k", k);
		snprintf(pre, sizeof(pre), "#define T_ %dLL\n", 5 + k);
		p->pre = pre;
		p->post = "#undef T_\n";
		assert_int_equal(gr_kernel(p, name, "float* y", body[k], "1", 32, "buf0", &err), 0);
	}
	finish(p);
	assert_int_equal(count(p->src.s, "__global__"), 1);
	assert_non_null(strstr(p->src.s, "#define T_ lc0\nextern \"C\" __global__ void g0_k(float* y, "
					 "long long lc0, int lc1, long long lc2)"));
	assert_non_null(strstr(p->src.s, "const int NB = lc1, CI = 3;"));
	assert_non_null(strstr(p->src.s, "(float)(T_ / (double)lc2) + NB + CI + lc0;"));
	assert_int_equal(count(p->src.s, "#undef T_\n"), 1);
	assert_non_null(strstr(p->launch.s, "g0_k<<<1, 32>>>(buf0, 5, 8, 12);\n"
					    "g0_k<<<1, 32>>>(buf0, 6, 9, 16);\n"));
	buf_release(&err);
	done(p);
}

static void off_and_identical_only(void **state)
{
	struct gr_plan *p = plan(0, 0);

	(void)state;
	add(p, 0, 100, 1);
	add(p, 1, 100, 1);
	finish(p);
	assert_int_equal(count(p->src.s, "__global__"), 2);
	assert_non_null(strstr(p->launch.s, "g1_ew<<<4, 256>>>(in1, buf1);"));
	done(p);
	p = plan(1, 0);
	add(p, 0, 100, 1);
	add(p, 1, 100, 1);
	add(p, 2, 200, 1);	/* differs: never lifted at dedup 1 */
	finish(p);
	assert_int_equal(count(p->src.s, "__global__"), 2);
	assert_null(strstr(p->src.s, "lc0"));
	done(p);
}

static void arrays_once(void **state)
{
	struct gr_plan *p = plan(2, 0);
	struct buf err = BUF_INIT;
	char a[32], b[32], c[32];

	(void)state;
	assert_int_equal(gr_array(p, "int", "take", 3, 2, "1, 2", a, sizeof(a), &err), 0);
	assert_int_equal(gr_array(p, "int", "take", 5, 2, "1, 2", b, sizeof(b), &err), 0);
	assert_int_equal(gr_array(p, "int", "take", 6, 2, "2, 1", c, sizeof(c), &err), 0);
	assert_string_equal(a, "take3");
	assert_string_equal(b, "take3");
	assert_string_equal(c, "take6");
	assert_int_equal(count(p->src.s, "__device__ const int"), 2);
	buf_release(&err);
	done(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(identical_once),
		cmocka_unit_test(literal_under_budget),
		cmocka_unit_test(lifted_over_budget),
		cmocka_unit_test(kinds_and_defines),
		cmocka_unit_test(off_and_identical_only),
		cmocka_unit_test(arrays_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
