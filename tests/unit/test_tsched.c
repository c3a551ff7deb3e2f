/* Issue 37's CPU-testable parts: the timed phase's secret schedule, the
 * history rule, the speed-of-light floors per precision path, and the
 * module variables the worker restores before every launch block (found in
 * a cubin that NVRTC compiles here, when it is installed). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "engine/compile.h"
#include "engine/engine_int.h"
#include "engine/nvrtc.h"
#include "engine/tsched.h"

static void test_schedule(void **state)
{
	int set[103], first[TSCHED_MAX_FRESH], set2[103], first2[TSCHED_MAX_FRESH];
	int n, differ = 0, nb = 0, seen_pos[10] = { 0 };

	(void)state;
	n = tsched_build(42, 3, 100, 1, 2, set, first);
	assert_int_equal(n, 2);
	/* Each fresh set is used exactly once, by a timed trial among the first 10. */
	for (int f = 0; f < 2; f++) {
		int uses = 0;
		assert_true(first[f] >= 3 && first[f] < 13);
		for (int j = 0; j < 103; j++)
			uses += set[j] == TSCHED_FRESH + f;
		assert_int_equal(uses, 1);
		assert_int_equal(set[first[f]], TSCHED_FRESH + f);
	}
	assert_int_not_equal(first[0], first[1]);
	for (int j = 0; j < 103; j++) {
		assert_true(set[j] == TSCHED_A || set[j] == TSCHED_B || set[j] >= TSCHED_FRESH);
		nb += set[j] == TSCHED_B;
	}
	assert_true(nb > 20 && nb < 80);   /* a coin, not an alternation */
	/* Deterministic in the key, different across keys. */
	assert_int_equal(tsched_build(42, 3, 100, 1, 2, set2, first2), 2);
	assert_memory_equal(set, set2, sizeof(set));
	tsched_build(43, 3, 100, 1, 2, set2, first2);
	for (int j = 0; j < 103; j++)
		differ += set[j] != set2[j];
	assert_true(differ > 10);
	/* The positions are spread over the first 10 timed trials. */
	for (unsigned long long k = 0; k < 400; k++) {
		tsched_build(k * 7919, 3, 100, 1, 1, set2, first2);
		seen_pos[first2[0] - 3] = 1;
	}
	for (int i = 0; i < 10; i++)
		assert_int_equal(seen_pos[i], 1);
	/* No B set: every replay is A. Fewer trials than fresh sets: capped. */
	tsched_build(5, 0, 3, 0, 8, set2, first2);
	assert_int_equal(tsched_build(5, 0, 3, 0, 8, set2, first2), 3);
	for (int j = 0; j < 3; j++)
		assert_true(set2[j] >= TSCHED_FRESH);
	assert_int_equal(tsched_build(5, 2, 10, 0, 0, set2, first2), 0);
	for (int j = 0; j < 12; j++)
		assert_int_equal(set2[j], TSCHED_A);
}

static void test_history_rule(void **state)
{
	/* An honest kernel: ~1% noise, fresh launches like the others. */
	double replay[20], novel[2] = { 1.02, 0.99 }, ratio;

	(void)state;
	for (int i = 0; i < 20; i++)
		replay[i] = 1.0 + 0.01 * ((i * 7) % 5 - 2);
	assert_int_equal(tsched_history(novel, 2, replay, 20, &ratio), 0);
	assert_true(ratio > 0.95 && ratio < 1.05);
	/* One slow fresh launch (a clock dip) is not enough: the fastest decides. */
	novel[0] = 3.0;
	assert_int_equal(tsched_history(novel, 2, replay, 20, &ratio), 0);
	/* The cache of issue 37: replays 2.5x faster than every fresh launch. */
	for (int i = 0; i < 20; i++)
		replay[i] = 0.4;
	novel[0] = 1.0;
	novel[1] = 1.01;
	assert_int_equal(tsched_history(novel, 2, replay, 20, &ratio), 1);
	assert_true(ratio > 0.39 && ratio < 0.41);
	/* Tiny kernels: under 10 us apart is events' jitter, not history. */
	for (int i = 0; i < 20; i++)
		replay[i] = 0.004;
	novel[0] = novel[1] = 0.009;
	assert_int_equal(tsched_history(novel, 2, replay, 20, &ratio), 0);
	/* Not enough samples (a pruned run): not judged. */
	novel[0] = novel[1] = 1.0;
	assert_int_equal(tsched_history(novel, 2, replay, 2, &ratio), 0);
	assert_int_equal(tsched_history(novel, 0, replay, 20, &ratio), 0);
}

/* The H100 SXM: 132 SMs at 1980 MHz, HBM3 3.35 TB/s. A GEMM's floor is its
 * FLOPs at a third of the dense fp16 rate (357 TFLOP/s), no longer the
 * fp16 rate itself (1070 TFLOP/s): 4096^3 x 2 FLOPs cannot take under
 * 0.385 ms fp32-accurately; other families keep the fp16 rate. */
static void test_floor_per_path(void **state)
{
	json_t *info = json_pack("{s:i,s:i,s:i,s:i,s:s}", "mem_clock_khz", 2619000, "mem_bus_bits", 5120,
				 "clock_khz", 1980000, "sm_count", 132, "arch", "sm_90a");
	json_t *tc = json_pack("{s:[{s:i,s:f}]}", "time", "idx", 0, "time_ms", 0.2);
	struct problem p;
	struct eval_outcome o;
	double bw, fl, f;
	const char *path = NULL;

	(void)state;
	problem_init(&p);
	p.family = strdup("matmul");
	p.flops = 137438953472.0;
	p.min_bytes = 201326592.0;
	f = engine_sol_floor_ms(info, &p, &bw, &fl);
	assert_true(fl > 3.56e14 && fl < 3.58e14);
	assert_true(f > 0.38 && f < 0.39);
	assert_true(engine_sol_flop_rate(info, &p, &path) > 0);
	assert_non_null(strstr(path, "fp32-accurate"));
	/* 0.2 ms (687 TFLOP/s: a single-pass fp16 GEMM, or one that skipped work) is rejected. */
	eval_outcome_init(&o);
	snprintf(o.status, sizeof(o.status), "correct");
	assert_int_equal(engine_sol_check(info, &p, &o, tc), 1);
	assert_string_equal(o.failed_check, "faster_than_speed_of_light");
	assert_non_null(strstr(o.detail.s, "fp32-accurate"));
	/* The fastest fp32-accurate GEMM of docs/results/gemm-4096-h100 (119 TFLOP/s, 1.15 ms) passes. */
	json_real_set(json_object_get(json_array_get(json_object_get(tc, "time"), 0), "time_ms"), 1.15);
	snprintf(o.status, sizeof(o.status), "correct");
	assert_int_equal(engine_sol_check(info, &p, &o, tc), 0);
	/* The verifier's roofline flag: with the FP32 FMA rate measured (51 TFLOP/s)
	 * the roofline put that 1.15 ms kernel under 0.9 x 2.7 ms, flagged; the
	 * precision path's ceiling puts the floor at 0.385 ms. */
	assert_true(problem_roofline_ms(&p, 3000.0, 51000.0) * 0.9 > 1.15);
	f = engine_roofline_ms(info, &p, 3000.0, 51000.0);
	assert_true(f > 0.38 && f < 0.39);
	/* Not a GEMM: the measured FMA rate stays the ceiling. */
	free(p.family);
	p.family = strdup("reduce");
	assert_true(engine_roofline_ms(info, &p, 3000.0, 51000.0) > 2.6);
	assert_true(engine_roofline_ms(info, &p, 0, 51000.0) == 0);
	/* Level 2 and 3 (graphs of GEMMs and convolutions) are on the same path. */
	free(p.family);
	p.family = strdup("graph");
	assert_true(engine_sol_flop_rate(info, &p, NULL) < 3.6e14);
	/* Elementwise: the fp16 rate, as before. */
	free(p.family);
	p.family = strdup("elementwise");
	assert_true(engine_sol_flop_rate(info, &p, NULL) > 1.07e15);
	/* Ampere's tensor cores do half Hopper's per SM and clock. */
	free(p.family);
	p.family = strdup("conv");
	json_object_set_new(info, "arch", json_string("sm_80"));
	assert_true(engine_sol_flop_rate(info, &p, NULL) < 1.8e14);
	eval_outcome_release(&o);
	problem_release(&p);
	json_decref(info);
	json_decref(tc);
}

static int collect(const char *name, unsigned long long size, void *ctx)
{
	struct buf *b = ctx;
	buf_addf(b, "%s:%llu;", name, size);
	return 0;
}

/* The module variables of a cubin (what the worker restores before every
 * launch block): zero-initialised, initialised, static and __managed__
 * ones; not __constant__ memory (read-only) nor shared memory. */
static void test_cubin_globals(void **state)
{
	static const char src[] =
		"__device__ float kf_cache[1024];\n"
		"__device__ int kf_count = 7;\n"
		"static __device__ unsigned kf_hidden[4];\n"
		"__constant__ float kf_table[16] = {1};\n"
		"extern \"C\" __global__ void k(float *y) {\n"
		"  __shared__ float s[32]; s[threadIdx.x] = kf_table[threadIdx.x & 15];\n"
		"  kf_cache[threadIdx.x] += y[0]; kf_count++; kf_hidden[0] += 1; y[1] = s[0] + kf_hidden[1];\n"
		"}\n";
	struct nvrtc nv;
	struct buf err = BUF_INIT, names = BUF_INIT, cubin = BUF_INIT;
	kf_nvrtcProgram prog = NULL;
	const char *opts[] = { "--gpu-architecture=sm_90" };
	size_t sz = 0;

	(void)state;
	assert_int_equal(cubin_globals("not an elf", 10, collect, &names), -1);
	nvrtc_init(&nv);
	if (nvrtc_load(&nv, &err) < 0) {
		print_message("# skip: NVRTC not installed (%s)\n", err.s);
		buf_release(&err);
		return;
	}
	assert_int_equal(nv.CreateProgram(&prog, src, "g.cu", 0, NULL, NULL), 0);
	assert_int_equal(nv.CompileProgram(prog, 1, opts), 0);
	assert_int_equal(nv.GetCUBINSize(prog, &sz), 0);
	buf_grow(&cubin, sz);
	assert_int_equal(nv.GetCUBIN(prog, cubin.s), 0);
	cubin.len = sz;
	nv.DestroyProgram(&prog);
	assert_int_equal(cubin_globals(cubin.s, cubin.len, collect, &names), 3);
	assert_non_null(strstr(names.s, "kf_cache:4096;"));
	assert_non_null(strstr(names.s, "kf_count:4;"));
	assert_non_null(strstr(names.s, "kf_hidden"));
	assert_null(strstr(names.s, "kf_table"));
	nvrtc_release(&nv);
	buf_release(&err);
	buf_release(&names);
	buf_release(&cubin);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_history_rule),
		cmocka_unit_test(test_floor_per_path),
		cmocka_unit_test(test_cubin_globals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
