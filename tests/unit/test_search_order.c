/* The order a search starts its problems in: costliest first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "collector/search_order.h"

static void test_costliest_first(void **state)
{
	struct problem p[5];
	int order[5];

	(void)state;
	memset(p, 0, sizeof(p));
	p[0].flops = 1e9, p[0].min_bytes = 1e9;     /* 0.33 ms, bandwidth */
	p[1].flops = 1e12, p[1].min_bytes = 1e9;    /* 20 ms, compute */
	p[2].flops = 1e9, p[2].min_bytes = 1e9;     /* a tie with 0: after it */
	p[3].flops = 0, p[3].min_bytes = 3e10;      /* 10 ms */
	p[4].flops = 0, p[4].min_bytes = 0;         /* unknown: last */
	search_order(p, 5, order);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 3);
	assert_int_equal(order[2], 0);
	assert_int_equal(order[3], 2);
	assert_int_equal(order[4], 4);
	assert_true(search_order_cost(&p[1]) > 19.9 && search_order_cost(&p[1]) < 20.1);
	assert_true(search_order_cost(&p[3]) > 9.9 && search_order_cost(&p[3]) < 10.1);
}

static void test_one_and_none(void **state)
{
	struct problem p[1];
	int order[1] = { -1 };

	(void)state;
	memset(p, 0, sizeof(p));
	search_order(p, 1, order);
	assert_int_equal(order[0], 0);
	search_order(p, 0, order);   /* nothing to order, nothing written */
	assert_int_equal(order[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_costliest_first),
		cmocka_unit_test(test_one_and_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
