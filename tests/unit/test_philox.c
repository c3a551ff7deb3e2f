/* Philox4x32-10 known answers (Random123's kat_vectors), the generator's
 * deterministic math and dtype rounding, and the GPU fixture comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "problem/inputs.h"
#include "core/json.h"
#include "problem/philox.h"

static void test_kat(void **state)
{
	/* counter[4] key[2] -> out[4] */
	static const kf_u32 kat[3][10] = {
		{ 0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
		{ 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
		  0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
		{ 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
		  0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
	};
	(void)state;
	for (int k = 0; k < 3; k++) {
		kf_u32 out[4];
		kf_philox4x32_10(kat[k], kat[k] + 4, out);
		for (int j = 0; j < 4; j++)
			assert_int_equal(out[j], kat[k][6 + j]);
	}
}

static void test_math(void **state)
{
	(void)state;
	for (double x = 1e-300; x <= 1.0; x *= 1.37) {
		double d = kf_log(x) - log(x);
		assert_true(fabs(d) <= 1e-15 * fabs(log(x)) + 1e-300);
	}
	assert_true(kf_log(1.0) == 0.0);
	for (int k = 0; k < 4096; k++) {
		double u = k / 4096.0;
		assert_true(fabs(kf_cos2pi(u) - cos(2 * M_PI * u)) < 1e-15);
	}
	for (double x = -700; x < 700; x += 0.731) {
		double r = kf_exp(x) / exp(x);
		assert_true(fabs(r - 1) < 4e-16);
	}
	assert_true(kf_exp(-800) == 0.0);
	assert_true(kf_exp(0) == 1.0);
}

static void test_small_floats(void **state)
{
	(void)state;
	/* float16 */
	assert_int_equal(kf_d2small(1.0, 5, 10), 0x3c00);
	assert_int_equal(kf_d2small(-2.0, 5, 10), 0xc000);
	assert_int_equal(kf_d2small(65504.0, 5, 10), 0x7bff);
	assert_int_equal(kf_d2small(65520.0, 5, 10), 0x7c00); /* rounds up to inf */
	assert_int_equal(kf_d2small(5.960464477539063e-08, 5, 10), 0x0001);
	assert_int_equal(kf_d2small(2.98e-08, 5, 10), 0x0000);
	assert_int_equal(kf_d2small(1.0 + 1.0 / 2048, 5, 10), 0x3c00);  /* tie to even */
	assert_int_equal(kf_d2small(1.0 + 3.0 / 2048, 5, 10), 0x3c02);
	assert_int_equal(kf_d2small(0.0, 5, 10), 0);
	/* bfloat16 */
	assert_int_equal(kf_d2small(1.0, 8, 7), 0x3f80);
	assert_int_equal(kf_d2small(3.140625, 8, 7), 0x4049);
	assert_int_equal(kf_d2small(-0.5, 8, 7), 0xbf00);
	for (kf_u32 h = 0; h < 0x7c00; h++)
		assert_int_equal(kf_d2small(kf_small2d(h, 5, 10), 5, 10), h);
	for (kf_u32 h = 0; h < 0x7f80; h += 7)
		assert_int_equal(kf_d2small(kf_small2d(h, 8, 7), 8, 7), h);
}

static const char *spec_all_dists =
	"{\"id\":\"level1/900_Gen\",\"level\":1,\"number\":900,\"name\":\"Gen\","
	"\"kernelbench_file\":\"900_Gen.py\",\"family\":\"elementwise\",\"operation\":\"x\","
	"\"sizes\":{\"n\":64,\"m\":48},\"scalars\":{},\"inputs\":["
	"{\"name\":\"u\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],"
	" \"dist\":{\"kind\":\"uniform\",\"low\":-2,\"high\":3}},"
	"{\"name\":\"g\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],"
	" \"dist\":{\"kind\":\"normal\",\"mean\":1,\"std\":2}},"
	"{\"name\":\"r\",\"role\":\"input\",\"dtype\":\"int64\",\"shape\":[\"n\"],"
	" \"dist\":{\"kind\":\"randint\",\"low\":0,\"high\":10}},"
	"{\"name\":\"b\",\"role\":\"input\",\"dtype\":\"bool\",\"shape\":[\"n\",\"m\"],"
	" \"dist\":{\"kind\":\"bernoulli\",\"p\":0.25}},"
	"{\"name\":\"s\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\"],"
	" \"dist\":{\"kind\":\"sign\"}},"
	"{\"name\":\"c\",\"role\":\"param\",\"dtype\":\"float16\",\"shape\":[\"m\"],"
	" \"dist\":{\"kind\":\"constant\",\"value\":0.1}},"
	"{\"name\":\"sy\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[2,\"m\",\"m\"],"
	" \"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,\"post\":\"symmetrize\"}},"
	"{\"name\":\"tu\",\"role\":\"input\",\"dtype\":\"bfloat16\",\"shape\":[\"n\",\"m\"],"
	" \"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,\"post\":\"triu\"}},"
	"{\"name\":\"tl\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],"
	" \"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,\"post\":\"tril\"}},"
	"{\"name\":\"sc\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],"
	" \"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,\"post\":\"scale_by_random\"}},"
	"{\"name\":\"sm\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",300],"
	" \"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,\"post\":\"softmax_lastdim\"}},"
	"{\"name\":\"ss\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],"
	" \"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,"
	"  \"post\":[\"scale_by_random\",\"softmax_lastdim\"]}}],"
	"\"outputs\":[{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[]}],"
	"\"tolerance\":\"fp32\",\"flops\":1,\"min_bytes\":1}";

#define GOLDEN_DIGEST 0x8e27f74ae5f3f191ull

static void test_generator(void **state)
{
	struct problem p;
	struct buf err = BUF_INIT;
	struct inputs_gen g;
	(void)state;

	problem_init(&p);
	if (problem_load_json(&p, spec_all_dists, "gen", &err) < 0)
		fail_msg("%s", err.s);
	inputs_gen_init(&g, &p, 12345);
	double sum = 0, sum2 = 0;
	long long nb = 0, npos = 0;
	for (long long i = 0; i < 64 * 48; i++) {
		double u = inputs_value(&g, 0, i), z = inputs_value(&g, 1, i);
		assert_true(u >= -2 && u < 3);
		assert_true(u == (double)(float)u);
		sum += z;
		sum2 += (z - 1) * (z - 1);
		nb += inputs_value(&g, 3, i) != 0;
		assert_true(inputs_value(&g, 7, i) == 0 || (i % 48) >= (i / 48));
		assert_true(inputs_value(&g, 8, i) == 0 || (i % 48) <= (i / 48));
		double s = inputs_value(&g, 9, i);
		assert_true(s >= 0 && s < 1);
	}
	assert_true(fabs(sum / 3072 - 1) < 0.15);
	assert_true(fabs(sqrt(sum2 / 3072) - 2) < 0.15);
	assert_true(nb > 3072 * 0.2 && nb < 3072 * 0.3);
	for (long long i = 0; i < 64; i++) {
		double r = inputs_value(&g, 2, i), s = inputs_value(&g, 4, i);
		assert_true(r >= 0 && r < 10 && r == floor(r));
		assert_true(s == 1 || s == -1);
		npos += s > 0;
	}
	assert_true(npos > 10 && npos < 54);
	assert_true(inputs_value(&g, 5, 3) == kf_small2d(kf_d2small(0.1, 5, 10), 5, 10));
	for (long long k = 0; k < 2; k++)
		for (long long r = 0; r < 48; r++)
			for (long long c = 0; c < 48; c++)
				assert_true(inputs_value(&g, 6, k * 2304 + r * 48 + c) ==
					    inputs_value(&g, 6, k * 2304 + c * 48 + r));
	for (long long row = 0; row < 64; row += 21) {
		double s = 0, s2 = 0;
		for (long long j = 0; j < 300; j++)
			s += inputs_value(&g, 10, row * 300 + j);
		for (long long j = 0; j < 48; j++)
			s2 += inputs_value(&g, 11, row * 48 + j);
		assert_true(fabs(s - 1) < 1e-5);
		assert_true(fabs(s2 - 1) < 1e-5);
	}
	/* Same seed, same bits; another seed, other bits; tensors differ. */
	struct inputs_gen g2;
	inputs_gen_init(&g2, &p, 12345);
	assert_true(inputs_bits(&g2, 0, 77) == inputs_bits(&g, 0, 77));
	inputs_gen_release(&g2);
	inputs_gen_init(&g2, &p, 12346);
	assert_true(inputs_bits(&g2, 0, 77) != inputs_bits(&g, 0, 77));
	assert_true(inputs_bits(&g, 8, 0) != inputs_bits(&g, 9, 0));
	/* fill agrees with bits; range checked */
	unsigned short h[48];
	assert_int_equal(inputs_fill(&g, 7, 48, 48, h, &err), 0);
	for (int j = 0; j < 48; j++)
		assert_int_equal(h[j], inputs_bits(&g, 7, 48 + j));
	assert_int_equal(inputs_fill(&g, 7, 3000, 100, h, &err), -1);
	assert_non_null(strstr(err.s, "tu"));
	inputs_gen_release(&g2);
	/* Golden digest of every tensor: the generator's definition must not
	 * drift (datasets record seeds, not inputs). */
	unsigned long long dg = 1469598103934665603ull;
	for (int t = 0; t < p.n_in; t++)
		for (long long i = 0; i < p.t[t].numel; i++)
			dg = (dg ^ inputs_bits(&g, t, i)) * 1099511628211ull;
	if (dg != GOLDEN_DIGEST)
		fail_msg("generator digest %#llx, expected %#llx", dg, GOLDEN_DIGEST);
	inputs_gen_release(&g);
	problem_release(&p);
	buf_release(&err);
}

/* The threaded fill gives the same bytes as the plain one. */
static void test_fill_mt(void **state)
{
	const char *spec =
		"{\"id\":\"level1/902_F\",\"level\":1,\"number\":902,\"name\":\"F\","
		"\"kernelbench_file\":\"902_F.py\",\"family\":\"elementwise\",\"sizes\":{\"n\":700,\"m\":333},"
		"\"inputs\":[{\"name\":\"a\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],"
		"\"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1,\"post\":\"softmax_lastdim\"}},"
		"{\"name\":\"b\",\"role\":\"input\",\"dtype\":\"bfloat16\",\"shape\":[\"n\",\"m\"],"
		"\"dist\":{\"kind\":\"normal\",\"mean\":0,\"std\":1}}],"
		"\"outputs\":[{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[]}],"
		"\"tolerance\":\"fp32\",\"flops\":1,\"min_bytes\":1}";
	struct problem p;
	struct inputs_gen g;
	struct buf err = BUF_INIT;
	(void)state;
	problem_init(&p);
	if (problem_load_json(&p, spec, "mt", &err) < 0)
		fail_msg("%s", err.s);
	inputs_gen_init(&g, &p, 99);
	for (int t = 0; t < 2; t++) {
		size_t bytes = (size_t)p.t[t].bytes;
		unsigned char *x = malloc(bytes), *y = malloc(bytes);
		assert_int_equal(inputs_fill(&g, t, 0, p.t[t].numel, x, &err), 0);
		assert_int_equal(inputs_fill_mt(&g, t, 0, p.t[t].numel, y, 3, &err), 0);
		assert_memory_equal(x, y, bytes);
		assert_int_equal(inputs_fill_mt(&g, t, 5, p.t[t].numel, y, 3, &err), -1);
		free(x);
		free(y);
	}
	inputs_gen_release(&g);
	problem_release(&p);
	buf_release(&err);
}

/* tests/fixtures/philox_gpu.json (or $KF_PHILOX_FIXTURE), recorded on a GPU by
 * build/tests/record_philox_fixture: {"spec": {...}, "seed": S,
 * "tensors": {"name": {"index": [..], "bits": ["hex", ...]}}}. */
static void test_gpu_fixture(void **state)
{
	const char *root = getenv("KF_ROOT");
	struct buf path = BUF_INIT, err = BUF_INIT;
	struct problem p;
	struct inputs_gen g;
	json_t *fx, *tensors, *t;
	const char *name;
	long long checked = 0;
	(void)state;

	if (getenv("KF_PHILOX_FIXTURE"))
		buf_adds(&path, getenv("KF_PHILOX_FIXTURE"));
	else
		buf_addf(&path, "%s/tests/fixtures/philox_gpu.json", root ? root : ".");
	fx = json_load_file_bounded(path.s, 64 << 20, &err);
	if (!fx)
		fail_msg("%s", err.s);
	problem_init(&p);
	{
		struct buf spec = BUF_INIT;
		json_add_compact(&spec, json_object_get(fx, "spec"));
		if (problem_load_json(&p, spec.s, "fixture spec", &err) < 0)
			fail_msg("%s", err.s);
		buf_release(&spec);
	}
	inputs_gen_init(&g, &p, (unsigned long long)json_integer_value(json_object_get(fx, "seed")));
	tensors = json_object_get(fx, "tensors");
	json_object_foreach(tensors, name, t) {
		int ti = problem_tensor_index(&p, name);
		json_t *idx = json_object_get(t, "index"), *bits = json_object_get(t, "bits");
		size_t k;
		json_t *v;
		assert_true(ti >= 0);
		assert_int_equal(json_array_size(idx), json_array_size(bits));
		json_array_foreach(idx, k, v) {
			unsigned long long want = strtoull(json_string_value(json_array_get(bits, k)),
							   NULL, 16);
			unsigned long long got = inputs_bits(&g, ti, json_integer_value(v));
			if (got != want)
				fail_msg("%s[%lld]: CPU %llx, GPU %llx", name,
					 (long long)json_integer_value(v), got, want);
			checked++;
		}
	}
	assert_true(checked > 0);
	inputs_gen_release(&g);
	problem_release(&p);
	json_decref(fx);
	buf_release(&path);
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kat),
		cmocka_unit_test(test_math),
		cmocka_unit_test(test_small_floats),
		cmocka_unit_test(test_generator),
		cmocka_unit_test(test_fill_mt),
	};
	const struct CMUnitTest gpu[] = { cmocka_unit_test(test_gpu_fixture) };
	const char *root = getenv("KF_ROOT");
	char path[4096];
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	if (getenv("KF_PHILOX_FIXTURE"))
		snprintf(path, sizeof(path), "%s", getenv("KF_PHILOX_FIXTURE"));
	else
		snprintf(path, sizeof(path), "%s/tests/fixtures/philox_gpu.json", root ? root : ".");
	if (access(path, R_OK) != 0) {
		/* cmocka prints skips as "not ok"; the runner counts this line. */
		printf("ok - # SKIP %s absent: record it on a GPU with "
		       "build/tests/record_philox_fixture > tests/fixtures/philox_gpu.json\n", path);
		return rc;
	}
	return rc | cmocka_run_group_tests_name("gpu_fixture", gpu, NULL, NULL);
}
