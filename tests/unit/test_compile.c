/* engine/compile and compile_pool: several threads submitting at once,
 * results matched to their jobs, errors kept apart; sandbox failures.
 * Needs NVRTC and the kforge binary ($KFORGE, set by tests/run-tests.sh);
 * skips without them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "engine/compile.h"
#include "engine/compile_pool.h"
#include "engine/nvrtc.h"

static struct compile_pool *pool;
static struct compile_opts opts;

static int have_nvrtc(void)
{
	/* Loaded once and kept: unloading NVRTC turns its static allocations
	 * into leaks for LeakSanitizer. */
	static struct nvrtc n;
	static int state = -1;
	struct buf err = BUF_INIT;
	if (state < 0) {
		nvrtc_init(&n);
		state = nvrtc_load(&n, &err) == 0;
		buf_release(&err);
	}
	return state && getenv("KFORGE") && access(getenv("KFORGE"), X_OK) == 0;
}

struct worker_arg {
	int id;
	int failures;
};

/* Each thread compiles kernels named after itself, some broken on purpose,
 * and checks that what comes back is its own. */
static void *worker(void *p)
{
	struct worker_arg *a = p;
	for (int k = 0; k < 3; k++) {
		struct buf src = BUF_INIT, err = BUF_INIT, name = BUF_INIT;
		struct compile_result r;
		int broken = (a->id + k) % 3 == 0;
		compile_result_init(&r);
		buf_setf(&name, "k_%d_%d", a->id, k);
		buf_setf(&src, "extern \"C\" __global__ void %s(float* y) { y[threadIdx.x] = %d.0f%s }\n",
			 name.s, k, broken ? "" : ";");
		if (compile_pool_compile(pool, src.s, &r, &err) < 0)
			a->failures++;
		else if (broken && (r.ok || !strstr(r.log.s, "error")))
			a->failures++;
		else if (!broken && (!r.ok || r.n_kernels != 1 || strcmp(r.kernels[0].name, name.s) ||
				     r.cubin.len == 0 || r.kernels[0].registers <= 0))
			a->failures++;
		compile_result_release(&r);
		buf_release(&src);
		buf_release(&err);
		buf_release(&name);
	}
	return NULL;
}

static void test_pool_threads(void **state)
{
	pthread_t t[4];
	struct worker_arg a[4];
	(void)state;
	if (!have_nvrtc())
		skip();
	for (int i = 0; i < 4; i++) {
		a[i].id = i;
		a[i].failures = 0;
		assert_int_equal(pthread_create(&t[i], NULL, worker, &a[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].failures, 0);
	}
}

static void test_submit_many_then_close(void **state)
{
	struct compile_job *j[6];
	struct compile_result r;
	struct buf err = BUF_INIT;
	(void)state;
	if (!have_nvrtc())
		skip();
	compile_result_init(&r);
	for (int i = 0; i < 6; i++)
		j[i] = compile_pool_submit(pool, "extern \"C\" __global__ void z() {}\n");
	/* Wait in reverse order: completion order does not matter. */
	for (int i = 5; i >= 3; i--) {
		assert_int_equal(compile_pool_wait(pool, j[i], &r, &err), 0);
		assert_true(r.ok);
		assert_string_equal(r.options.s, "[\"--gpu-architecture=sm_90\",\"-std=c++17\","
				    "\"-lineinfo\",\"--ptxas-options=-v\"]");
	}
	/* j[0..2] are left to compile_pool_close (teardown), which frees them. */
	compile_result_release(&r);
	buf_release(&err);
}

static void test_sandbox_errors(void **state)
{
	struct compile_opts o = opts;
	struct compile_result r;
	struct buf err = BUF_INIT;
	(void)state;
	compile_result_init(&r);
	o.arch = "sm_90; rm -rf /";
	assert_int_equal(compile_candidate(&o, "int x;\n", &r, &err), -1);
	assert_non_null(strstr(err.s, "bad GPU architecture"));
	o = opts;
	o.kforge_exe = "/nonexistent/kforge";
	assert_int_equal(compile_candidate(&o, "int x;\n", &r, &err), -1);
	assert_non_null(strstr(err.s, "compile child failed"));
	compile_result_release(&r);
	buf_release(&err);
}

static int setup(void **state)
{
	struct buf err = BUF_INIT;
	(void)state;
	compile_opts_default(&opts);
	opts.kforge_exe = getenv("KFORGE") ? getenv("KFORGE") : "kforge";
	opts.timeout_s = 120;
	opts.cpu_s = 120;
	if (compile_pool_open(&pool, 3, &opts, &err) < 0) {
		buf_release(&err);
		return -1;
	}
	buf_release(&err);
	return compile_pool_threads(pool) == 3 ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	compile_pool_close(pool);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_threads),
		cmocka_unit_test(test_submit_many_then_close),
		cmocka_unit_test(test_sandbox_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
