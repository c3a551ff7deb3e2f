/* Verifier: selection of kernels (top-k per problem + best per category),
 * verdicts recorded per GPU, review flags, with a test double for the
 * engine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "store/store.h"
#include "verifier/verify.h"

static char path[64];

static void ins(struct store *s, const char *table, json_t *row)
{
	struct buf err = BUF_INIT;
	int r = store_insert(s, table, row, STORE_INSERT, &err);
	if (r < 0)
		fprintf(stderr, "%s: %s\n", table, err.s);
	assert_int_equal(r, 1);
	json_decref(row);
	buf_release(&err);
}

/* Problem P1 with kernels a (1 ms), b (2 ms), c (3 ms), d (4 ms, the only
 * "control" idea), e (incorrect); problem P2 with kernel f. */
static void fixture(struct store *s)
{
	const char *t = "2026-01-01T00:00:00Z";
	ins(s, "problems", json_pack("{s:s,s:i,s:i,s:s,s:s,s:s}", "id", "level1/001_P1", "level", 1,
				     "number", 1, "name", "P1", "spec", "{}", "spec_sha256", "x"));
	ins(s, "problems", json_pack("{s:s,s:i,s:i,s:s,s:s,s:s}", "id", "level1/002_P2", "level", 1,
				     "number", 2, "name", "P2", "spec", "{}", "spec_sha256", "y"));
	ins(s, "runs", json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:s,s:s}", "id", "run1", "created_at", t,
				 "status", "finished", "strategy", "branch", "proposer", "builtin",
				 "seed", 1, "config", "{}", "kforge_version", "test"));
	const char *ideas[][2] = { { "i_mem", "memory" }, { "i_ctl", "control" } };
	for (int i = 0; i < 2; i++) {
		ins(s, "ideas", json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:s}", "id", ideas[i][0], "run_id",
					  "run1", "problem_id", "level1/001_P1", "round", 1, "text",
					  "an idea", "source", "builtin", "created_at", t));
		ins(s, "idea_categories", json_pack("{s:s,s:s,s:s}", "idea_id", ideas[i][0],
						    "category", ideas[i][1], "method", "catalogue"));
	}
	struct {
		const char *k, *p, *status, *idea;
		double ms;
	} ks[] = {
		{ "a", "level1/001_P1", "correct", "i_mem", 1 }, { "b", "level1/001_P1", "correct", "i_mem", 2 },
		{ "c", "level1/001_P1", "correct", "i_mem", 3 }, { "d", "level1/001_P1", "correct", "i_ctl", 4 },
		{ "e", "level1/001_P1", "incorrect", "i_mem", 0.5 }, { "f", "level1/002_P2", "correct", NULL, 7 },
	};
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		char src[32], eid[32], cid[32];
		snprintf(src, sizeof(src), "source-%s", ks[i].k);
		snprintf(eid, sizeof(eid), "eval-%s", ks[i].k);
		snprintf(cid, sizeof(cid), "cand-%s", ks[i].k);
		ins(s, "kernels", json_pack("{s:s,s:s,s:i,s:s}", "hash", ks[i].k, "source", src, "bytes", 8,
					    "created_at", t));
		ins(s, "candidates", json_pack("{s:s,s:s,s:s,s:i,s:s?,s:i,s:s,s:s,s:s}", "id", cid, "run_id",
					       "run1", "problem_id", ks[i].p, "round", 1, "idea_id",
					       ks[i].idea, "impl_index", 0, "kernel_hash", ks[i].k,
					       "status", ks[i].status, "created_at", t));
		ins(s, "evals", json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:s,s:s}", "id", eid,
					  "kernel_hash", ks[i].k, "problem_id", ks[i].p, "gpu_name", "GPU-X",
					  "protocol", "collect-v1", "protocol_params", "{}", "status",
					  ks[i].status, "time_mean_ms", ks[i].ms, "created_at", t, "env",
					  "{\"driver\": \"580\"}"));
	}
}

struct fake {
	int calls;
	int sanitized;
	int released;
	int calls_at_sanitize[4];
};

static void fake_release(void *ctx)
{
	((struct fake *)ctx)->released++;
}

static int fake_eval(void *ctx, const char *pid, const char *src, struct eval_outcome *o,
		     struct buf *err)
{
	struct fake *f = ctx;
	(void)err;
	f->calls++;
	snprintf(o->kernel_hash, sizeof(o->kernel_hash), "%s", src + strlen("source-"));
	snprintf(o->eval_id, sizeof(o->eval_id), "veval-%.8s", o->kernel_hash);
	snprintf(o->gpu_name, sizeof(o->gpu_name), "GPU-X");
	/* Kernel b is wrong on the verifier's wider input distributions. */
	if (!strcmp(o->kernel_hash, "b")) {
		snprintf(o->status, sizeof(o->status), "incorrect");
		snprintf(o->failed_check, sizeof(o->failed_check), "output_mismatch");
	} else {
		snprintf(o->status, sizeof(o->status), "correct");
	}
	o->time_mean_ms = 1.0;
	o->speedup_eager = !strcmp(o->kernel_hash, "a") ? 25.0 : 1.5;
	/* "a" runs at half its floor (flagged); "d" a fifth under the measured
	 * copy's floor but over the speed of light (an H200's read-only stream:
	 * not flagged); the others, without the GPU's peaks, 5% under the
	 * copy's, within what streaming kernels reach. */
	o->roofline_ms = !strcmp(o->kernel_hash, "a") ? 2.0 : !strcmp(o->kernel_hash, "d") ? 1.25 : 1.05;
	o->sol_ms = !strcmp(o->kernel_hash, "a") ? 1.9 : !strcmp(o->kernel_hash, "d") ? 0.95 : 0;
	{
		/* The engine records its evaluation; so does the double. */
		struct store s;
		struct buf e2 = BUF_INIT;
		json_t *row = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:f,s:s,s:s}", "id", o->eval_id,
					"kernel_hash", o->kernel_hash, "problem_id", pid, "gpu_name",
					"GPU-X", "protocol", "verify-v1", "protocol_params", "{}", "status",
					o->status, "time_mean_ms", 1.0, "created_at", "t", "env",
					/* a's sensitivity trials found a tensor without influence */
					!strcmp(o->kernel_hash, "a")
						? "{\"clock\": 1, \"sensitivity\": {\"no_influence\": [{\"tensor\": \"bias\", \"max_diff\": 0}]}}"
						: "{\"clock\": 1}");
		assert_int_equal(store_open(&s, path, 0, &e2), 0);
		assert_true(store_insert(&s, "evals", row, STORE_REPLACE, &e2) >= 0);
		store_close(&s);
		json_decref(row);
		buf_release(&e2);
	}
	return 0;
}

static const char *fake_gpu(void *ctx)
{
	(void)ctx;
	return "GPU-X";
}

static int fake_sanitize(void *ctx, const char *pid, const char *src, json_t *res, struct buf *err)
{
	struct fake *f = ctx;
	(void)pid;
	(void)err;
	/* The backend's GPU memory was released just before. */
	assert_int_equal(f->released, f->sanitized + 1);
	if (f->sanitized < 4)
		f->calls_at_sanitize[f->sanitized] = f->calls;
	f->sanitized++;
	json_object_set_new(res, "memcheck", json_pack("{s:s}", "status", strstr(src, "-f") ? "errors" : "clean"));
	json_object_set_new(res, "racecheck", json_pack("{s:s}", "status", "clean"));
	return 0;
}

static int setup(void **state)
{
	struct store s;
	struct buf err = BUF_INIT;
	(void)state;
	snprintf(path, sizeof(path), "/tmp/kf-verify-%d.db", (int)getpid());
	unlink(path);
	if (store_open(&s, path, STORE_CREATE, &err) < 0)
		return -1;
	fixture(&s);
	store_close(&s);
	buf_release(&err);
	return 0;
}

static int teardown(void **state)
{
	char p[80];
	(void)state;
	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
	return 0;
}

static void test_select(void **state)
{
	struct store s;
	struct buf err = BUF_INIT;
	struct verify_config cfg = { 0 };
	json_t *sel;
	(void)state;

	cfg.top_k = 2;
	cfg.per_category = 1;
	assert_int_equal(store_open(&s, path, 0, &err), 0);
	sel = verify_select(&s, &cfg, "GPU-X", &err);
	assert_non_null(sel);
	/* P1: a, b (top 2) + d (best "control"); the best "memory" is a. P2: f. */
	assert_int_equal(json_array_size(sel), 4);
	assert_string_equal(jget_str(json_array_get(sel, 0), "kernel_hash", ""), "a");
	assert_string_equal(jget_str(json_array_get(sel, 1), "kernel_hash", ""), "b");
	assert_string_equal(jget_str(json_array_get(sel, 2), "kernel_hash", ""), "d");
	assert_string_equal(jget_str(json_array_get(sel, 3), "kernel_hash", ""), "f");
	json_decref(sel);
	cfg.per_category = 0;
	cfg.top_k = 1;
	sel = verify_select(&s, &cfg, "GPU-X", &err);
	assert_int_equal(json_array_size(sel), 2);
	json_decref(sel);
	/* A GPU the search never ran on verifies the kernels measured best
	 * where it did (an H100 search verified on an H200). */
	sel = verify_select(&s, &cfg, "GPU-Y", &err);
	assert_int_equal(json_array_size(sel), 2);
	assert_string_equal(jget_str(json_array_get(sel, 0), "kernel_hash", ""), "a");
	assert_string_equal(jget_str(json_array_get(sel, 1), "kernel_hash", ""), "f");
	json_decref(sel);
	store_close(&s);
	buf_release(&err);
}

static void test_run_records_verdicts(void **state)
{
	struct store s;
	struct buf err = BUF_INIT;
	struct verify_config cfg = { 0 };
	struct verify_report rep;
	struct fake f = { 0 };
	struct verify_backend be = { .eval = fake_eval, .gpu_name = fake_gpu,
				     .sanitize = fake_sanitize, .release = fake_release, .ctx = &f };
	json_t *rows;
	long long n = 0;
	(void)state;

	cfg.top_k = 2;
	cfg.per_category = 1;
	cfg.sanitizer = 1;
	cfg.db_path = path;
	verify_report_init(&rep);
	if (verify_run(&cfg, &be, &rep, &err) < 0)
		fail_msg("verify_run: %s", err.s);
	assert_int_equal(f.calls, 4);
	assert_int_equal(f.sanitized, 2); /* the best kernel of each problem */
	/* ... after all of its problem's evaluations (P1: a, b, d; then P2: f). */
	assert_int_equal(f.calls_at_sanitize[0], 3);
	assert_int_equal(f.calls_at_sanitize[1], 4);
	assert_int_equal(rep.verified, 2);
	assert_int_equal(rep.flagged, 1);  /* a: under its roofline floor */
	assert_int_equal(rep.failed, 2);   /* b (mismatch), f (memcheck errors) */
	/* the report names the tensors without influence (docs/engine.md) */
	for (int i = 0; i < rep.n; i++)
		if (!strcmp(rep.items[i].kernel_hash, "a")) {
			assert_int_equal(json_array_size(rep.items[i].no_influence), 1);
			assert_string_equal(json_string_value(json_array_get(rep.items[i].no_influence, 0)),
					    "bias");
		} else {
			assert_int_equal(json_array_size(rep.items[i].no_influence), 0);
		}
	assert_int_equal(store_open(&s, path, 0, &err), 0);
	rows = store_query_all(&s, "SELECT kernel_hash, verdict, failed_check, review_flags, env "
				   "FROM verifications ORDER BY kernel_hash", NULL, &err);
	assert_int_equal(json_array_size(rows), 4);
	assert_string_equal(jget_str(json_array_get(rows, 0), "verdict", ""), "verified");
	/* A 25x speedup alone is a note, not a flag (a flag is no verified result). */
	assert_null(strstr(jget_str(json_array_get(rows, 0), "review_flags", ""), "speedup_over_10x_eager"));
	assert_non_null(strstr(jget_str(json_array_get(rows, 0), "env", ""), "speedup_over_10x_eager"));
	assert_non_null(strstr(jget_str(json_array_get(rows, 0), "review_flags", ""), "faster_than_roofline_floor"));
	assert_null(strstr(jget_str(json_array_get(rows, 2), "review_flags", ""), "roofline"));
	assert_string_equal(jget_str(json_array_get(rows, 1), "verdict", ""), "failed");
	assert_string_equal(jget_str(json_array_get(rows, 1), "failed_check", ""), "output_mismatch");
	assert_string_equal(jget_str(json_array_get(rows, 3), "failed_check", ""), "sanitizer_memcheck");
	assert_non_null(strstr(jget_str(json_array_get(rows, 2), "env", ""), "GPU-X"));
	json_decref(rows);
	/* Verifying again replaces rather than duplicates. */
	store_close(&s);
	verify_report_release(&rep);
	verify_report_init(&rep);
	assert_int_equal(verify_run(&cfg, &be, &rep, &err), 0);
	assert_int_equal(store_open(&s, path, 0, &err), 0);
	assert_int_equal(store_query_int(&s, "SELECT count(*) FROM verifications", NULL, 0, &n, &err), 0);
	assert_int_equal(n, 4);
	store_close(&s);
	verify_report_release(&rep);
	/* A pass without the sanitizer keeps the earlier tools' result ... */
	cfg.sanitizer = 0;
	verify_report_init(&rep);
	assert_int_equal(verify_run(&cfg, &be, &rep, &err), 0);
	assert_int_equal(rep.failed, 2);   /* f's memcheck errors still count */
	assert_int_equal(store_open(&s, path, 0, &err), 0);
	rows = store_query_all(&s, "SELECT sanitizer FROM verifications WHERE kernel_hash = 'a'", NULL, &err);
	assert_int_equal(json_array_size(rows), 1);
	assert_non_null(strstr(jget_str(json_array_get(rows, 0), "sanitizer", ""), "clean"));
	json_decref(rows);
	/* ... and where the tools never ran, the record says why. */
	assert_int_equal(store_exec(&s, "DELETE FROM verifications", &err), 0);
	store_close(&s);
	verify_report_release(&rep);
	verify_report_init(&rep);
	assert_int_equal(verify_run(&cfg, &be, &rep, &err), 0);
	assert_int_equal(store_open(&s, path, 0, &err), 0);
	rows = store_query_all(&s, "SELECT sanitizer FROM verifications WHERE kernel_hash = 'a'", NULL, &err);
	assert_int_equal(json_array_size(rows), 1);
	assert_non_null(strstr(jget_str(json_array_get(rows, 0), "sanitizer", ""), "not run (--no-sanitizer)"));
	json_decref(rows);
	store_close(&s);
	verify_report_release(&rep);
	buf_release(&err);
}

static void sanitizer_reports(void **state)
{
	(void)state;
	assert_true(verify_sanitizer_kernel_errors(
		"========= Invalid __global__ write of size 4 bytes\n=========     at relu+0x90\n"));
	assert_true(verify_sanitizer_kernel_errors("========= Race reported between Write access ...\n"));
	assert_false(verify_sanitizer_kernel_errors(
		"========= Program hit CUDA_ERROR_OUT_OF_MEMORY (error 2) due to \"out of memory\" "
		"on CUDA API call to cuMemAlloc_v2.\n========= ERROR SUMMARY: 1 error\n"));
	assert_false(verify_sanitizer_kernel_errors(
		"========= Program hit CUDA_ERROR_OUT_OF_MEMORY on CUDA API call to cuMemAlloc_v2.\n"
		"========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"));
	assert_false(verify_sanitizer_kernel_errors(NULL));
}

/* The sanitizer runs a secret number of launch blocks, not a fixed one
 * (issue 37): work a kernel does only after some launch is seen too. */
static void test_sanitizer_launches(void **state)
{
	int seen[VERIFY_SAN_LAUNCHES_MAX + 1] = { 0 }, distinct = 0;

	(void)state;
	for (int i = 0; i < 400; i++) {
		int n = verify_sanitizer_launches();
		assert_true(n >= VERIFY_SAN_LAUNCHES_MIN && n <= VERIFY_SAN_LAUNCHES_MAX);
		distinct += !seen[n];
		seen[n] = 1;
	}
	assert_true(VERIFY_SAN_LAUNCHES_MIN > 3);
	assert_true(distinct > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sanitizer_launches),
		cmocka_unit_test_setup_teardown(test_select, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_records_verdicts, setup, teardown),
		cmocka_unit_test(sanitizer_reports),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
