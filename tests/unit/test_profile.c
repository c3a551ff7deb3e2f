/* Profiles (engine/profile.h): the limiter rule of docs/engine.md
 * "Profiles" at and around each threshold, and the JSON built from
 * synthetic per-kernel metrics (bytes summed, percentages weighted by
 * duration, nulls for what was not measured) as store_profile_put takes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "engine/engine_int.h"
#include "engine/profile.h"
#include "store/store_profile.h"

static void test_limiter(void **state)
{
	(void)state;
	/* memory: DRAM >= 60% and at least the SM's */
	assert_string_equal(prof_limiter(86, 4.7, 0, 1, 0.186, 0.188), "memory");
	assert_string_equal(prof_limiter(60, 59.9, 0, 1, 1, 1), "memory");
	assert_string_equal(prof_limiter(59.9, 10, 0, 1, 1, 1), "latency");
	assert_string_equal(prof_limiter(70, 80, 0, 1, 1, 1), "compute");
	/* compute: SM >= 60%, or a tensor pipe >= 40% (H100's mma.sync matmul) */
	assert_string_equal(prof_limiter(17.4, 46.6, 48.4, 1, 1.2, 1.23), "compute");
	assert_string_equal(prof_limiter(10, 60, 0, 1, 1, 1), "compute");
	assert_string_equal(prof_limiter(10, 50, 39.9, 1, 1, 1), "latency");
	assert_string_equal(prof_limiter(10, 50, 40, 1, 1, 1), "compute");
	/* launch: >= 8 launches of under 10 us on average ... */
	assert_string_equal(prof_limiter(0.3, 0.2, 0, 64, 0.1737, 0.3708), "launch");
	assert_string_equal(prof_limiter(0.3, 0.2, 0, 7, 0.063, 0), "latency");
	assert_string_equal(prof_limiter(90, 5, 0, 8, 0.0799, 0), "launch");
	assert_string_equal(prof_limiter(90, 5, 0, 8, 0.0800, 0), "memory");
	/* ... or kernels busy under 60% of the timed block (2 launches or more) */
	assert_string_equal(prof_limiter(90, 5, 0, 2, 0.59, 1.0), "launch");
	assert_string_equal(prof_limiter(90, 5, 0, 2, 0.60, 1.0), "memory");
	assert_string_equal(prof_limiter(90, 5, 0, 1, 0.10, 1.0), "memory");
	/* unmeasured (NAN) counts as 0; an unknown duration never says launch */
	assert_string_equal(prof_limiter(NAN, NAN, NAN, 1, NAN, 0), "latency");
	assert_string_equal(prof_limiter(NAN, 70, NAN, 64, NAN, 1), "compute");
}

static void test_json(void **state)
{
	struct prof_kernel k[3];
	json_t *j, *ks;

	(void)state;
	for (int i = 0; i < 3; i++)
		prof_kernel_init(&k[i]);
	snprintf(k[0].name, sizeof(k[0].name), "big");
	k[0].duration_ms = 3.0;
	k[0].dram_read_bytes = 3e9;
	k[0].dram_write_bytes = 1e9;
	k[0].dram_pct = 90;
	k[0].sm_pct = 10;
	k[0].tensor_pct = 0;
	k[0].l2_hit_pct = 20;
	k[0].occupancy_pct = 80;
	k[0].registers = 32;
	k[0].shared_bytes = 1024;
	k[0].block_threads = 256;
	k[0].grid_blocks = 2112;
	snprintf(k[1].name, sizeof(k[1].name), "small");
	k[1].duration_ms = 1.0;
	k[1].dram_read_bytes = 1e6;
	k[1].dram_write_bytes = 5e5;
	k[1].dram_pct = 10;
	k[1].sm_pct = 70;
	k[1].tensor_pct = 50;
	k[1].l2_hit_pct = 60;
	/* occupancy not measured: the block's is the first kernel's */
	snprintf(k[2].name, sizeof(k[2].name), "unmeasured");

	j = prof_to_json(k, 3, 5.0, 12.5, "cupti-range-profiler 130001");
	assert_int_equal(jget_int(j, "launches", 0), 3);
	assert_true(fabs(jget_num(j, "kernel_ms", 0) - 4.0) < 1e-12);
	assert_int_equal(jget_int(j, "dram_read_bytes", 0), 3001000000LL);
	assert_int_equal(jget_int(j, "dram_write_bytes", 0), 1000500000LL);
	assert_true(fabs(jget_num(j, "dram_pct", 0) - (90 * 3 + 10) / 4.0) < 1e-9);
	assert_true(fabs(jget_num(j, "sm_pct", 0) - (10 * 3 + 70) / 4.0) < 1e-9);
	assert_true(fabs(jget_num(j, "tensor_pct", 0) - 50 / 4.0) < 1e-9);
	assert_true(fabs(jget_num(j, "l2_hit_pct", 0) - (20 * 3 + 60) / 4.0) < 1e-9);
	assert_true(fabs(jget_num(j, "occupancy_pct", 0) - 80) < 1e-9);
	assert_true(fabs(jget_num(j, "cost_ms", 0) - 12.5) < 1e-12);
	assert_string_equal(jget_str(j, "tool", ""), "cupti-range-profiler 130001");
	/* dram 70% >= sm 25%: memory (4 ms of 5 timed: no gaps to speak of) */
	assert_string_equal(jget_str(j, "limiter", ""), "memory");
	ks = json_object_get(j, "kernels");
	assert_int_equal(json_array_size(ks), 3);
	assert_string_equal(jget_str(json_array_get(ks, 0), "limiter", ""), "memory");
	assert_string_equal(jget_str(json_array_get(ks, 1), "limiter", ""), "compute");
	assert_string_equal(jget_str(json_array_get(ks, 2), "limiter", ""), "latency");
	assert_int_equal(jget_int(json_array_get(ks, 0), "registers", 0), 32);
	assert_int_equal(jget_int(json_array_get(ks, 0), "grid_blocks", 0), 2112);
	assert_int_equal(jget_int(json_array_get(ks, 1), "idx", 0), 1);
	assert_true(json_is_null(json_object_get(json_array_get(ks, 1), "registers")));
	assert_true(json_is_null(json_object_get(json_array_get(ks, 2), "duration_ms")));
	assert_true(json_is_null(json_object_get(json_array_get(ks, 2), "dram_read_bytes")));
	for (size_t i = 0; i < 3; i++)
		assert_true(store_profile_limiter_ok(jget_str(json_array_get(ks, i), "limiter", "")));
	json_decref(j);

	/* The same kernels timed at 10 ms a block: kernels busy 40% of it. */
	j = prof_to_json(k, 3, 10.0, 1, "t");
	assert_string_equal(jget_str(j, "limiter", ""), "launch");
	json_decref(j);
	/* Nothing measured: nulls, and still a known limiter. */
	j = prof_to_json(&k[2], 1, 0, 0, "t");
	assert_true(json_is_null(json_object_get(j, "kernel_ms")));
	assert_true(json_is_null(json_object_get(j, "dram_pct")));
	assert_string_equal(jget_str(j, "limiter", ""), "latency");
	json_decref(j);
}

/* The engine writes the worker's profile with the evaluation (one
 * transaction), only for a correct one, and a re-evaluation without a
 * profile takes the old one away. */
static void test_engine_store(void **state)
{
	char dir[] = "/tmp/kf-prof-test.XXXXXX", db[64];
	struct store s;
	struct buf err = BUF_INIT;
	struct eval_outcome o;
	struct prof_kernel k;
	json_t *res, *got = NULL, *row;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/k.db", dir);
	assert_int_equal(store_open(&s, db, STORE_CREATE, &err), 0);
	row = json_pack("{s:s,s:i,s:i,s:s,s:s,s:s}", "id", "level1/019_ReLU", "level", 1, "number", 19,
			"name", "ReLU", "spec", "{}", "spec_sha256", "aa");
	assert_int_equal(store_insert(&s, "problems", row, STORE_REPLACE, &err), 1);
	json_decref(row);
	assert_int_equal(es_put_kernel(&s, "k1", "src", 3, &err), 0);
	eval_outcome_init(&o);
	snprintf(o.eval_id, sizeof(o.eval_id), "e1");
	snprintf(o.kernel_hash, sizeof(o.kernel_hash), "k1");
	snprintf(o.status, sizeof(o.status), "correct");
	snprintf(o.gpu_name, sizeof(o.gpu_name), "NVIDIA H100 80GB HBM3");
	o.time_mean_ms = 0.2;
	prof_kernel_init(&k);
	snprintf(k.name, sizeof(k.name), "relu_vec4");
	k.duration_ms = 0.186;
	k.dram_pct = 86;
	k.sm_pct = 4.7;
	res = json_pack("{s:s,s:[{s:i,s:f}],s:o}", "status", "correct", "time", "idx", 0, "time_ms", 0.2,
			"profile", prof_to_json(&k, 1, 0.2, 900, "cupti-range-profiler 130001"));
	assert_int_equal(es_put_eval(&s, &o, "level1/019_ReLU", "collect-v3", "{}", res, &err), 0);
	assert_int_equal(store_profile_get(&s, "e1", &got, &err), 0);
	assert_non_null(got);
	assert_string_equal(jget_str(got, "limiter", ""), "memory");
	assert_string_equal(jget_str(got, "kernel_hash", ""), "k1");
	assert_string_equal(jget_str(got, "gpu_name", ""), "NVIDIA H100 80GB HBM3");
	assert_int_equal(json_array_size(json_object_get(got, "kernels")), 1);
	assert_string_equal(jget_str(json_array_get(json_object_get(got, "kernels"), 0), "name", ""), "relu_vec4");
	json_decref(got);

	/* Re-evaluated (forced) without a profile: none, not the old one. */
	json_object_del(res, "profile");
	assert_int_equal(es_put_eval(&s, &o, "level1/019_ReLU", "collect-v3", "{}", res, &err), 0);
	assert_int_equal(store_profile_get(&s, "e1", &got, &err), 0);
	assert_null(got);

	/* A profile beside another status is not written. */
	json_object_set_new(res, "profile", prof_to_json(&k, 1, 0.2, 900, "t"));
	snprintf(o.status, sizeof(o.status), "incorrect");
	assert_int_equal(es_put_eval(&s, &o, "level1/019_ReLU", "collect-v3", "{}", res, &err), 0);
	assert_int_equal(store_profile_get(&s, "e1", &got, &err), 0);
	assert_null(got);
	json_decref(res);
	eval_outcome_release(&o);
	store_close(&s);
	buf_release(&err);
	unlink(db);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limiter),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_engine_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
