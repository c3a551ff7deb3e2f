/* The alive draw and sensitivity redraws on the CPU (problem/inputs.c,
 * problem/sensitivity.c; the GPU worker fills the same values): a spec's
 * "alive" field parses and is checked, the alive draw sets its ranges and
 * draws the rest from its distribution, a redraw changes one tensor (or
 * its early time steps) and nothing else, and the recurrent problems'
 * sequence regions are where docs/engine.md says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "problem/inputs.h"
#include "problem/problem.h"
#include "problem/sensitivity.h"

static const char *root(void)
{
	const char *r = getenv("KF_ROOT");
	return r ? r : ".";
}

/* A tiny spec: x [4, 8, 3] (batch-first sequence of an rnn node), a bias
 * param b [12] with an alive draw. ALIVE is the param's "alive" text. */
static int load_spec(struct problem *p, const char *alive, struct buf *err)
{
	char s[2048];

	snprintf(s, sizeof(s),
		 "{\"id\":\"level3/901_T\",\"level\":3,\"number\":901,\"name\":\"T\","
		 "\"kernelbench_file\":\"901_T.py\",\"family\":\"graph\",\"operation\":\"t\","
		 "\"sizes\":{},\"scalars\":{},\"inputs\":["
		 "{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[4,8,3],"
		 "\"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1}},"
		 "{\"name\":\"b\",\"role\":\"param\",\"dtype\":\"float32\",\"shape\":[12],"
		 "\"dist\":{\"kind\":\"uniform\",\"low\":-0.25,\"high\":0.25}%s}],"
		 "\"outputs\":[{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[4,3]}],"
		 "\"tolerance\":\"fp32\",\"flops\":1,\"min_bytes\":1,\"attrs\":{\"graph\":["
		 "{\"out\":\"y\",\"op\":\"rnn\",\"in\":[\"x\",\"b\"],\"batch_first\":true}]}}",
		 alive);
	problem_init(p);
	return problem_load_json(p, s, "t.json", err);
}

static const char *alive_ok =
	",\"alive\":{\"kind\":\"uniform\",\"low\":-0.5,\"high\":0.5,\"set\":[[3,6,6.0],[0,3,-4]]}";

static void test_alive_parse(void **state)
{
	struct problem p;
	struct buf err = BUF_INIT;
	static const struct {
		const char *alive, *what;
	} bad[] = {
		{ ",\"alive\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,\"set\":[[3,6,1],[5,8,2]]}", "overlaps" },
		{ ",\"alive\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,\"set\":[[3,13,1]]}", "0 <= lo < hi <= 12" },
		{ ",\"alive\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,\"set\":[[3,3,1]]}", "0 <= lo < hi" },
		{ ",\"alive\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,\"post\":\"triu\"}", "without post op" },
		{ ",\"alive\":{\"kind\":\"zipf\"}", "zipf" },
		{ ",\"alive\":[1]", "must be an object" },
	};

	(void)state;
	assert_int_equal(load_spec(&p, alive_ok, &err), 0);
	assert_false(p.t[0].has_alive);
	assert_true(p.t[1].has_alive);
	assert_int_equal(p.t[1].n_set, 2);
	assert_true(p.t[1].set_lo[0] == 3 && p.t[1].set_hi[0] == 6 && p.t[1].set_v[0] == 6.0);
	assert_true(p.t[1].set_lo[1] == 0 && p.t[1].set_hi[1] == 3 && p.t[1].set_v[1] == -4.0);
	assert_true(p.t[1].alive.a == -0.5 && p.t[1].alive.b == 0.5);
	assert_true(sens_has_alive(&p));
	problem_release(&p);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		buf_reset(&err);
		assert_int_equal(load_spec(&p, bad[i].alive, &err), -1);
		if (!strstr(err.s, "inputs[1].alive") || !strstr(err.s, bad[i].what))
			fail_msg("%s: error \"%s\" does not say %s", bad[i].alive, err.s, bad[i].what);
		problem_release(&p);
	}
	buf_release(&err);
}

static void test_alive_values(void **state)
{
	struct problem p;
	struct buf err = BUF_INIT;
	struct inputs_gen spec, alive;
	struct inputs_draw d;
	int differ = 0;

	(void)state;
	assert_int_equal(load_spec(&p, alive_ok, &err), 0);
	inputs_gen_init(&spec, &p, 7);
	inputs_draw_spec(&d);
	d.alive = 1;
	inputs_gen_init_draw(&alive, &p, 7, &d);
	/* tensors without an alive draw are the spec's, bit for bit */
	for (long long i = 0; i < p.t[0].numel; i++)
		assert_true(inputs_bits(&spec, 0, i) == inputs_bits(&alive, 0, i));
	for (long long i = 0; i < 12; i++) {
		double v = inputs_value(&alive, 1, i), s = inputs_value(&spec, 1, i);
		if (i < 3)
			assert_true(v == -4.0);
		else if (i < 6)
			assert_true(v == 6.0);
		else
			assert_true(v >= -0.5 && v < 0.5);
		assert_true(s >= -0.25 && s < 0.25);
		differ += v != s;
	}
	assert_int_equal(differ, 12);
	inputs_gen_release(&spec);
	inputs_gen_release(&alive);
	problem_release(&p);
	buf_release(&err);
}

static void test_redraws(void **state)
{
	struct problem p;
	struct buf err = BUF_INIT;
	struct inputs_gen spec, g;
	struct inputs_draw d;
	char name[160];
	int in_region = 0, changed = 0;

	(void)state;
	assert_int_equal(load_spec(&p, "", &err), 0);
	assert_false(sens_has_alive(&p));
	assert_int_equal(sens_count(&p), 3);       /* x, b, x's early steps */
	inputs_gen_init(&spec, &p, 11);
	/* trial 1: b redrawn whole, x untouched */
	sens_draw(&p, 1, &d);
	assert_int_equal(d.redraw, 1);
	assert_int_equal(d.alive, 0);
	inputs_gen_init_draw(&g, &p, 11, &d);
	for (long long i = 0; i < p.t[0].numel; i++)
		assert_true(inputs_bits(&spec, 0, i) == inputs_bits(&g, 0, i));
	for (long long i = 0; i < 12; i++)
		changed += inputs_bits(&spec, 1, i) != inputs_bits(&g, 1, i);
	assert_int_equal(changed, 12);
	inputs_gen_release(&g);
	sens_name(&p, &d, name, sizeof(name));
	assert_string_equal(name, "b");
	/* trial 2: time steps [0, 2) of 8 in every batch row of x [4, 8, 3] */
	sens_draw(&p, 2, &d);
	assert_int_equal(d.redraw, 0);
	assert_true(d.stride == 24 && d.block == 6);
	sens_name(&p, &d, name, sizeof(name));
	assert_string_equal(name, "x[time steps 0..2 of 8]");
	inputs_gen_init_draw(&g, &p, 11, &d);
	changed = 0;
	for (long long i = 0; i < p.t[0].numel; i++) {
		int r = (i % 24) / 3 < 2;
		in_region += r;
		if (!r)
			assert_true(inputs_bits(&spec, 0, i) == inputs_bits(&g, 0, i));
		else
			changed += inputs_bits(&spec, 0, i) != inputs_bits(&g, 0, i);
		assert_int_equal(inputs_draw_region(&d, 0, i), r);
	}
	assert_int_equal(in_region, 4 * 2 * 3);
	assert_int_equal(changed, in_region);
	/* block k is the tensor drawn with seed INPUTS_REDRAW_SEED + k (the GPU's fill) */
	{
		struct kf_gen_desc k2;
		inputs_desc(&p, 0, INPUTS_REDRAW_SEED(11ull) + 2, &k2);
		assert_true(inputs_bits(&g, 0, 2 * 24 + 5) == kf_encode(kf_elem_value(&k2, 5), k2.dtype));
	}
	for (long long i = 0; i < 12; i++)
		assert_true(inputs_bits(&spec, 1, i) == inputs_bits(&g, 1, i));
	inputs_gen_release(&g);
	inputs_gen_release(&spec);
	problem_release(&p);
	buf_release(&err);
}

/* The committed recurrent models: every one has its alive draw (one
 * bias_ih per layer and direction) and its time-step region; others none. */
static void test_committed(void **state)
{
	static const struct {
		const char *id;
		long long stride, block;
		int sets;
	} rec[] = {
		{ "level3/35", 512 * 128, 128 * 128, 6 * 2 },   /* LSTM: f and i slices */
		{ "level3/38", 512 * 128, 128 * 128, 12 * 2 },  /* bidirectional */
		{ "level3/39", 512 * 10 * 128, 128 * 10 * 128, 6 }, /* GRU: z, sequence first */
		{ "level3/42", 512 * 10 * 128, 128 * 10 * 128, 12 },
	};
	struct buf dir = BUF_INIT, err = BUF_INIT;
	struct problem p;

	(void)state;
	for (size_t i = 0; i < sizeof(rec) / sizeof(rec[0]); i++) {
		int t, sets = 0;
		long long stride, block;
		assert_int_equal(problem_find(root(), rec[i].id, &dir, &err), 0);
		problem_init(&p);
		if (problem_load(&p, dir.s, &err) < 0)
			fail_msg("%s", err.s);
		assert_true(sens_seq_region(&p, &t, &stride, &block));
		assert_string_equal(p.t[t].name, "x");
		assert_true(stride == rec[i].stride && block == rec[i].block);
		for (int k = 0; k < p.n_in; k++)
			sets += p.t[k].has_alive ? p.t[k].n_set : 0;
		if (sets != rec[i].sets)
			fail_msg("%s: %d set ranges, want %d", rec[i].id, sets, rec[i].sets);
		assert_int_equal(sens_count(&p), p.n_in + 1);
		problem_release(&p);
	}
	assert_int_equal(problem_find(root(), "level3/1", &dir, &err), 0);
	problem_init(&p);
	assert_int_equal(problem_load(&p, dir.s, &err), 0);
	assert_false(sens_has_alive(&p));
	assert_int_equal(sens_count(&p), p.n_in);
	problem_release(&p);
	buf_release(&dir);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alive_parse),
		cmocka_unit_test(test_alive_values),
		cmocka_unit_test(test_redraws),
		cmocka_unit_test(test_committed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
