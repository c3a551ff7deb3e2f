/* The runtime's CPU-testable parts: the wire protocol (framing, bounds,
 * deadlines, EOF), the protocol JSON and eval key, timing statistics, and
 * that the worker's harness kernels compile with NVRTC. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "core/json.h"
#include "core/proc.h"
#include "engine/engine_int.h"
#include "engine/rt.h"
#include "tests/unit/stderr_capture.h"
#include "engine/worker_int.h"

static void test_rt_roundtrip(void **state)
{
	int p[2];
	struct rt_msg m;
	struct buf err = BUF_INIT;
	json_t *j = json_pack("{s:s,s:i}", "hello", "world", "n", 42);
	const char bin[] = "\x7f" "ELF\0binary";

	(void)state;
	assert_int_equal(pipe(p), 0);
	rt_msg_init(&m);
	assert_int_equal(rt_send(p[1], RT_EVAL, j, bin, sizeof(bin), &err), 0);
	assert_int_equal(rt_recv(p[0], &m, now_s() + 5, &err), 0);
	assert_int_equal(m.type, RT_EVAL);
	assert_string_equal(jget_str(m.json, "hello", ""), "world");
	assert_int_equal(jget_int(m.json, "n", 0), 42);
	assert_int_equal(m.bin.len, sizeof(bin));
	assert_memory_equal(m.bin.s, bin, sizeof(bin));
	/* Deadline with nothing to read: -2, quickly. */
	{
		double t0 = now_s();
		assert_int_equal(rt_recv(p[0], &m, now_s() + 0.2, &err), -2);
		assert_true(now_s() - t0 < 2.0);
	}
	/* EOF: -1 with a message. */
	close(p[1]);
	buf_reset(&err);
	assert_int_equal(rt_recv(p[0], &m, now_s() + 5, &err), -1);
	assert_non_null(strstr(err.s, "closed"));
	close(p[0]);
	rt_msg_release(&m);
	json_decref(j);
	buf_release(&err);
}

static void test_rt_bad_frames(void **state)
{
	int p[2];
	struct rt_msg m;
	struct buf err = BUF_INIT;
	uint32_t h[4] = { 0x12345678u, RT_EVAL, 2, 0 };
	uint32_t big[4] = { RT_MAGIC, RT_EVAL, RT_JSON_MAX + 1, 0 };

	(void)state;
	rt_msg_init(&m);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], h, sizeof(h)), (ssize_t)sizeof(h));
	assert_int_equal(rt_recv(p[0], &m, 0, &err), -1);
	assert_non_null(strstr(err.s, "bad frame"));
	close(p[0]);
	close(p[1]);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], big, sizeof(big)), (ssize_t)sizeof(big));
	assert_int_equal(rt_recv(p[0], &m, 0, &err), -1);
	close(p[0]);
	close(p[1]);
	/* JSON that is not an object. */
	assert_int_equal(pipe(p), 0);
	{
		uint32_t hh[4] = { RT_MAGIC, RT_RESULT, 3, 0 };
		assert_int_equal(write(p[1], hh, sizeof(hh)), (ssize_t)sizeof(hh));
		assert_int_equal(write(p[1], "[1]", 3), 3);
	}
	assert_int_equal(rt_recv(p[0], &m, 0, &err), -1);
	assert_non_null(strstr(err.s, "bad JSON"));
	close(p[0]);
	close(p[1]);
	rt_msg_release(&m);
	buf_release(&err);
}

static void test_protocol_key(void **state)
{
	struct eval_protocol p, v;
	struct buf a = BUF_INIT, b = BUF_INIT;
	char k1[65], k2[65], k3[65], k4[65];

	(void)state;
	eval_protocol_default(&p);
	eval_protocol_verify(&v);
	assert_int_equal(p.check_trials, 5);
	assert_int_equal(p.warmup, 3);
	assert_int_equal(p.timed_trials, 100);
	assert_true(v.timed_trials > p.timed_trials);
	engine_protocol_json(&p, "sm_90", &a);
	engine_protocol_json(&v, "sm_90", &b);
	assert_non_null(strstr(a.s, "\"timed_trials\":100"));
	assert_non_null(strstr(a.s, "\"name\":\"collect-v3\""));
	/* Timed trials on fresh inputs from the check mix (issue 37): in the key. */
	assert_non_null(strstr(a.s, "\"fresh_sets\":2"));
	assert_non_null(strstr(a.s, "\"timed_mix\":true"));
	assert_non_null(strstr(b.s, "\"name\":\"verify-v4\""));
	assert_non_null(strstr(b.s, "\"fresh_sets\":4"));
	assert_non_null(strstr(a.s, "\"version\":3"));
	assert_non_null(strstr(b.s, "\"normal\""));
	/* The search checks other distributions too, one trial each. */
	assert_non_null(strstr(a.s, "\"dists\":[\"normal\",\"uniform_wide\",\"alive\"]"));
	/* sensitivity trials only in the verifier's (docs/engine.md) */
	assert_null(strstr(a.s, "sensitivity"));
	assert_non_null(strstr(b.s, "\"sensitivity\":32"));
	assert_non_null(strstr(a.s, "\"extra_trials\":1"));
	/* Secret seeds: never in the key (nor the protocol); public ones are. */
	assert_non_null(strstr(a.s, "\"seeds\":\"secret\""));
	assert_null(strstr(a.s, "seed0"));
	{
		struct eval_protocol o;
		struct buf c = BUF_INIT;
		assert_int_equal(eval_protocol_by_name(&o, "collect-v1"), 0);
		engine_protocol_json(&o, "sm_90", &c);
		assert_non_null(strstr(c.s, "\"seed0\":1000"));
		assert_int_equal(eval_protocol_by_name(&o, "verify-v2"), 0);
		assert_int_equal(o.seed0, 7000001);
		/* The older protocols stay readable, without the fresh sets. */
		assert_int_equal(eval_protocol_by_name(&o, "collect-v2"), 0);
		engine_protocol_json(&o, "sm_90", &c);
		assert_non_null(strstr(c.s, "\"name\":\"collect-v2\""));
		assert_null(strstr(c.s, "fresh_sets"));
		assert_null(strstr(c.s, "timed_mix"));
		assert_int_equal(eval_protocol_by_name(&o, "verify-v3"), 0);
		assert_string_equal(o.name, "verify-v3");
		assert_int_equal(o.fresh_sets, 0);
		assert_int_equal(eval_protocol_by_name(&o, "no-such"), -1);
		buf_release(&c);
	}
	engine_eval_key("abc", "level1/019_ReLU", "H100", a.s, k1);
	engine_eval_key("abc", "level1/019_ReLU", "H100", a.s, k2);
	engine_eval_key("abc", "level1/019_ReLU", "H200", a.s, k3);
	engine_eval_key("abc", "level1/019_ReLU", "H100", b.s, k4);
	assert_string_equal(k1, k2);
	assert_string_not_equal(k1, k3);
	assert_string_not_equal(k1, k4);
	assert_int_equal(strlen(k1), 64);
	assert_null(strstr(a.s, "max_timing_s"));     /* unset: not in the key */
	p.max_timing_s = 5;
	engine_protocol_json(&p, "sm_90", &b);
	assert_non_null(strstr(b.s, "\"max_timing_s\":5"));
	engine_eval_key("abc", "level1/019_ReLU", "H100", b.s, k4);
	assert_string_not_equal(k1, k4);
	buf_release(&a);
	buf_release(&b);
}

/* A result faster than the speed-of-light floor is rejected: the H100's
 * attributes (HBM3 at 2619 MHz on 5120 bits: 3.35 TB/s; 132 SMs at
 * 1980 MHz) and MSELoss's 8.59 GB give a floor of 2.563 ms. */
static void test_sol_floor(void **state)
{
	json_t *info = json_pack("{s:i,s:i,s:i,s:i,s:s}", "mem_clock_khz", 2619000, "mem_bus_bits", 5120,
				 "clock_khz", 1980000, "sm_count", 132, "arch", "sm_90a");
	json_t *fast = json_pack("{s:[{s:i,s:f},{s:i,s:f}]}", "time", "idx", 0, "time_ms", 2.9,
				 "idx", 1, "time_ms", 0.004);
	json_t *honest = json_pack("{s:[{s:i,s:f},{s:i,s:f}]}", "time", "idx", 0, "time_ms", 2.9,
				   "idx", 1, "time_ms", 2.78);
	struct problem p;
	struct eval_outcome o;
	double bw, fl, f;

	(void)state;
	problem_init(&p);
	p.min_bytes = 8589934596.0;
	p.flops = 3221225472.0;
	f = engine_sol_floor_ms(info, &p, &bw, &fl);
	assert_true(bw > 3.35e12 && bw < 3.36e12);
	assert_true(fl > 1.07e15 && fl < 1.08e15);
	assert_true(f > 2.56 && f < 2.57);
	eval_outcome_init(&o);
	snprintf(o.status, sizeof(o.status), "correct");
	assert_int_equal(engine_sol_check(info, &p, &o, honest), 0);
	assert_string_equal(o.status, "correct");
	assert_int_equal(engine_sol_check(info, &p, &o, fast), 1);
	assert_string_equal(o.status, "incorrect");
	assert_string_equal(o.failed_check, "faster_than_speed_of_light");
	assert_non_null(strstr(o.detail.s, "timed trial 1 took 0.0040 ms"));
	/* A spec's floor_flops (a fold to less work) sets the FLOP term: with
	 * 1e13 FLOPs the floor is 9.25 ms and 2.9 ms is rejected; with 3.2e9
	 * FLOPs left it is the bytes' 2.563 ms again. */
	p.flops = 1e13;
	snprintf(o.status, sizeof(o.status), "correct");
	assert_true(engine_sol_floor_ms(info, &p, &bw, &fl) > 9.2);
	assert_int_equal(engine_sol_check(info, &p, &o, honest), 1);
	p.floor_flops = 3221225472.0;
	snprintf(o.status, sizeof(o.status), "correct");
	f = engine_sol_floor_ms(info, &p, &bw, &fl);
	assert_true(f > 2.56 && f < 2.57);
	assert_int_equal(engine_sol_check(info, &p, &o, honest), 0);
	assert_string_equal(o.status, "correct");
	/* Unknown peaks: nothing is rejected. */
	snprintf(o.status, sizeof(o.status), "correct");
	json_object_set_new(info, "mem_clock_khz", json_integer(0));
	assert_int_equal(engine_sol_check(info, &p, &o, fast), 0);
	eval_outcome_release(&o);
	problem_release(&p);
	json_decref(info);
	json_decref(fast);
	json_decref(honest);
}

/* The engine keeps the protocol's extra distributions (it once dropped
 * them, so verify-v1 ran only the problem's own draws). */
static void test_engine_keeps_dists(void **state)
{
	char dir[] = "/tmp/kf-dists-XXXXXX", db[64];
	const char *dists[] = { "normal", "uniform_large", NULL };
	struct engine_config cfg;
	struct engine *e = NULL;
	struct buf err = BUF_INIT;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/k.db", dir);
	memset(&cfg, 0, sizeof(cfg));
	eval_protocol_verify(&cfg.protocol);
	/* verify-v4 draws normal, wide-uniform (bounded per operator) and edge
	 * values, with fresh secret seeds. */
	assert_string_equal(cfg.protocol.name, "verify-v4");
	assert_int_equal(cfg.protocol.seed0, 0);
	assert_string_equal(cfg.protocol.dists[0], "normal");
	assert_string_equal(cfg.protocol.dists[1], "uniform_wide");
	assert_string_equal(cfg.protocol.dists[2], "edges");
	/* and the alive draw (recurrent models), with sensitivity trials */
	assert_string_equal(cfg.protocol.dists[3], "alive");
	assert_null(cfg.protocol.dists[4]);
	assert_int_equal(cfg.protocol.sensitivity, 32);
	cfg.protocol.dists = dists;
	cfg.root = ".";
	cfg.store_path = db;
	cfg.compile_only = 1;
	cfg.arch = "sm_90";
	cfg.exe = "/bin/false";
	assert_int_equal(engine_open(&e, &cfg, &err), 0);
	dists[0] = "clobbered";   /* borrowed list: the engine holds copies */
	assert_non_null(strstr(e->proto_json.s, "\"dists\":[\"normal\",\"uniform_large\"]"));
	assert_non_null(strstr(e->proto_json.s, "\"check_trials\":16"));
	engine_close(e);
	unlink(db);
	rmdir(dir);
	buf_release(&err);
}

static void test_time_stats(void **state)
{
	json_t *res = json_pack("{s:[{s:f,s:f},{s:f,s:f},{s:f,s:f},{s:f,s:f}]}", "time", "time_ms", 1.0,
				"cupti_ms", 0.5, "time_ms", 2.0, "cupti_ms", 1.5, "time_ms", 3.0,
				"cupti_ms", 2.5, "time_ms", 10.0, "cupti_ms", 9.5);
	struct eval_outcome o;

	(void)state;
	eval_outcome_init(&o);
	engine_time_stats(res, &o);
	assert_true(fabs(o.time_mean_ms - 4.0) < 1e-12);
	assert_true(fabs(o.time_median_ms - 2.5) < 1e-12);
	assert_true(fabs(o.time_min_ms - 1.0) < 1e-12);
	assert_true(fabs(o.time_max_ms - 10.0) < 1e-12);
	assert_true(fabs(o.time_std_ms - sqrt((9 + 4 + 1 + 36) / 4.0)) < 1e-12);
	assert_true(fabs(o.cupti_mean_ms - 3.5) < 1e-12);
	assert_true(fabs(o.cupti_median_ms - 2.0) < 1e-12);
	eval_outcome_release(&o);
	json_decref(res);
}

/* In a child: NVRTC keeps some memory to itself, which LeakSanitizer
 * would report at exit; the child leaves with _exit. */
static int compile_in_child(const char *cache, struct buf *cubin, struct buf *err)
{
	int p[2], st = 0;
	pid_t pid;
	char tmp[65536];
	ssize_t n;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct buf c = BUF_INIT, e = BUF_INIT;
		close(p[0]);
		setenv("KFORGE_CACHE", cache, 1);
		if (worker_harness_compile("sm_90", &c, &e) < 0) {
			if (write(p[1], "E", 1) != 1 || write(p[1], e.s, e.len) < 0)
				_exit(2);
			_exit(1);
		}
		if (write(p[1], "C", 1) != 1 || write(p[1], c.s, c.len) != (ssize_t)c.len)
			_exit(2);
		_exit(0);
	}
	close(p[1]);
	buf_reset(cubin);
	while ((n = read(p[0], tmp, sizeof(tmp))) > 0)
		buf_add(cubin, tmp, (size_t)n);
	close(p[0]);
	waitpid(pid, &st, 0);
	if (!cubin->len || cubin->s[0] != 'C') {
		buf_reset(err);
		if (cubin->len)
			buf_add(err, cubin->s + 1, cubin->len - 1);
		return -1;
	}
	memmove(cubin->s, cubin->s + 1, cubin->len - 1);
	buf_truncate(cubin, cubin->len - 1);
	return 0;
}

static void test_harness_compiles(void **state)
{
	struct buf cubin = BUF_INIT, again = BUF_INIT, err = BUF_INIT;
	char dir[] = "/tmp/kf-harness-XXXXXX";
	int r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	r = compile_in_child(dir, &cubin, &err);   /* a fresh cache: this compiles */
	if (r < 0 && strstr(err.s, "NVRTC not found")) {
		buf_release(&err);
		skip();
	}
	if (r < 0)
		fail_msg("%s", err.s);
	assert_true(cubin.len > 1000);
	assert_memory_equal(cubin.s, "\x7f" "ELF", 4);
	/* every kernel the worker looks up at start is in it (worker.c) */
	assert_non_null(memmem(cubin.s, cubin.len, "kf_h_count_far", 14));
	assert_non_null(memmem(cubin.s, cubin.len, "kf_h_count_constlike", 20));
	assert_non_null(memmem(cubin.s, cubin.len, "kf_h_compare", 12));
	/* The second start reads the cache: the same bytes. */
	assert_int_equal(compile_in_child(dir, &again, &err), 0);
	assert_int_equal(again.len, cubin.len);
	assert_memory_equal(again.s, cubin.s, cubin.len);
	{
		char cmd[96];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	buf_release(&again);
	buf_release(&cubin);
	buf_release(&err);
}

/* ---- the supervisor with tests/helpers/fake_worker ------------------------ */

static json_t *request(struct supervisor *s, const char *mode, double *secs)
{
	json_t *req = json_pack("{s:s,s:f}", "mode", mode, "next_s", 0.5), *rep = NULL;
	struct buf err = BUF_INIT;
	double t0 = now_s();

	assert_int_equal(supervisor_request(s, RT_EVAL, req, "xyz", 3, &rep, &err), 0);
	if (secs)
		*secs = now_s() - t0;
	json_decref(req);
	buf_release(&err);
	assert_non_null(rep);
	return rep;
}

static int pid_of(struct supervisor *s)
{
	json_t *r = request(s, "pid", NULL);
	int pid = (int)jget_int(r, "pid", -1);

	assert_string_equal(jget_str(r, "status", ""), "correct");
	json_decref(r);
	return pid;
}

static void test_supervisor_watchdog(void **state)
{
	struct supervisor *s = NULL;
	struct buf err = BUF_INIT, exe = BUF_INIT;
	json_t *info = NULL, *r;
	const char *kb = getenv("KF_BUILD");
	int p1, p2, p3, p4;
	double secs;

	(void)state;
	buf_addf(&exe, "%s/tests/fake_worker", kb ? kb : "build");
	if (access(exe.s, X_OK) != 0) {
		buf_release(&exe);
		skip();
	}
	setenv("KFORGE_WORKER_TEST_GPUS", "1", 1);
	if (supervisor_open(&s, exe.s, NULL, 0, &info, &err) < 0)
		fail_msg("%s", err.s);
	assert_string_equal(jget_str(info, "name", ""), "Fake GPU");
	assert_int_equal(supervisor_n_workers(s), 1);

	/* A healthy request; the attachment arrives whole. */
	r = request(s, "ok", NULL);
	assert_string_equal(jget_str(r, "status", ""), "correct");
	assert_int_equal(jget_int(r, "bin", 0), 3);
	json_decref(r);
	p1 = pid_of(s);

	/* A crash: runtime_error naming the signal, and a new worker. */
	r = request(s, "crash", NULL);
	assert_string_equal(jget_str(r, "status", ""), "runtime_error");
	if (!strstr(jget_str(r, "detail", ""), "signal 6"))
		fail_msg("detail: %s", jget_str(r, "detail", ""));
	json_decref(r);
	p2 = pid_of(s);
	assert_int_not_equal(p1, p2);

	/* Silent past its announced 0.5 s: killed after the 2 s grace. */
	r = request(s, "hang_after_progress", &secs);
	assert_string_equal(jget_str(r, "status", ""), "timeout");
	assert_true(secs >= 2.4 && secs < 6.0);
	json_decref(r);
	p3 = pid_of(s);
	assert_int_not_equal(p2, p3);
	assert_int_not_equal(kill(p2, 0), 0);   /* the old one is gone */

	/* Long work that keeps announcing itself is not killed. */
	r = request(s, "slow_progress", &secs);
	assert_string_equal(jget_str(r, "status", ""), "correct");
	json_decref(r);
	assert_int_equal(pid_of(s), p3);

	/* A fatal result: the worker is replaced before the next request. */
	r = request(s, "fatal", NULL);
	assert_true(jget_bool(r, "fatal", 0));
	json_decref(r);
	p4 = pid_of(s);
	assert_int_not_equal(p3, p4);

	supervisor_close(s);
	assert_int_not_equal(kill(p4, 0), 0);
	json_decref(info);
	unsetenv("KFORGE_WORKER_TEST_GPUS");
	buf_release(&err);
	buf_release(&exe);
}

/* What a worker writes to its stdout (a candidate's device printf) never
 * reaches the supervisor's own stdout, where eval --json prints. */
static void test_supervisor_worker_stdout(void **state)
{
	struct supervisor *s = NULL;
	struct buf err = BUF_INIT, exe = BUF_INIT, got = BUF_INIT;
	json_t *info = NULL, *r;
	const char *kb = getenv("KF_BUILD");
	char path[] = "/tmp/kf-stdout-XXXXXX";
	int fd, saved;

	(void)state;
	buf_addf(&exe, "%s/tests/fake_worker", kb ? kb : "build");
	if (access(exe.s, X_OK) != 0) {
		buf_release(&exe);
		skip();
	}
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stdout);
	saved = dup(1);
	assert_true(saved >= 0 && dup2(fd, 1) == 1);
	setenv("KFORGE_WORKER_TEST_GPUS", "1", 1);
	if (supervisor_open(&s, exe.s, NULL, 0, &info, &err) < 0)
		fail_msg("%s", err.s);
	r = request(s, "printf", NULL);
	assert_string_equal(jget_str(r, "status", ""), "correct");
	json_decref(r);
	supervisor_close(s);
	unsetenv("KFORGE_WORKER_TEST_GPUS");
	fflush(stdout);
	assert_true(dup2(saved, 1) == 1);
	close(saved);
	assert_int_equal(buf_read_file(&got, path, 1 << 20, &err), 0);
	if (got.len)
		fail_msg("the worker's stdout reached ours: '%s'", got.s);
	close(fd);
	unlink(path);
	json_decref(info);
	buf_release(&err);
	buf_release(&exe);
	buf_release(&got);
}

/* Waiting requests: a freed worker takes the one for the problem it just
 * ran (its reference outputs are still there), then the oldest. The order
 * is the one the worker saw requests in (its log): the order in which the
 * threads' requests returned is not it, as a thread returns after its
 * worker went to the next waiter, whose short request may return first. */
struct aff_arg {
	struct supervisor *s;
	const char *mode, *key, *file, *log;
	int rc;
};

static void *aff_thread(void *p)
{
	struct aff_arg *a = p;
	json_t *req = json_pack("{s:s,s:s,s:s,s:s}", "mode", a->mode, "problem_dir", a->key, "file",
				a->file, "log", a->log), *rep = NULL;
	struct buf err = BUF_INIT;

	a->rc = supervisor_request(a->s, RT_EVAL, req, NULL, 0, &rep, &err);
	json_decref(req);
	json_decref(rep);
	buf_release(&err);
	return NULL;
}

static int queue_reached(struct supervisor *s, int waiting, int busy)
{
	int b = 0;

	for (int i = 0; i < 1000; i++) {
		if (supervisor_waiting(s, &b) == waiting && b == busy)
			return 1;
		usleep(5000);
	}
	return 0;
}

static void wait_queue(struct supervisor *s, int waiting, int busy)
{
	if (!queue_reached(s, waiting, busy))
		fail_msg("queue never reached %d waiting, %d busy", waiting, busy);
}

/* X holds the worker; then Y, X and Z queue in that order. streak: the
 * KFORGE_AFFINITY_STREAK to set (NULL: unset); want: the problems in the
 * order the worker ran them. */
static void affinity_case(const char *streak, const char *want)
{
	struct supervisor *s = NULL;
	struct buf err = BUF_INIT, exe = BUF_INIT, got = BUF_INIT;
	json_t *info = NULL;
	const char *kb = getenv("KF_BUILD");
	char file[] = "/tmp/kf-aff-XXXXXX", log[] = "/tmp/kf-aff-log-XXXXXX";
	pthread_t th[4];
	int fd;
	struct aff_arg a[4] = {
		{ NULL, "wait_file", "problems/X", file, log, -1 },
		{ NULL, "ok", "problems/Y", "", log, -1 },
		{ NULL, "ok", "problems/X", "", log, -1 },
		{ NULL, "ok", "problems/Z", "", log, -1 },
	};

	buf_addf(&exe, "%s/tests/fake_worker", kb ? kb : "build");
	if (access(exe.s, X_OK) != 0) {
		buf_release(&exe);
		skip();
	}
	fd = mkstemp(file);
	assert_true(fd >= 0);
	close(fd);
	unlink(file);
	fd = mkstemp(log);
	assert_true(fd >= 0);
	close(fd);
	setenv("KFORGE_WORKER_TEST_GPUS", "1", 1);
	if (streak)
		setenv("KFORGE_AFFINITY_STREAK", streak, 1);
	else
		unsetenv("KFORGE_AFFINITY_STREAK");
	if (supervisor_open(&s, exe.s, NULL, 0, &info, &err) < 0)
		fail_msg("%s", err.s);
	for (int i = 0; i < 4; i++) {
		a[i].s = s;
		assert_int_equal(pthread_create(&th[i], NULL, aff_thread, &a[i]), 0);
		wait_queue(s, i, 1);   /* each one queued before the next starts */
	}
	fd = open(file, O_CREAT | O_WRONLY, 0600);   /* X's first request ends */
	assert_true(fd >= 0);
	close(fd);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	unlink(file);
	for (int i = 0; i < 4; i++)
		assert_int_equal(a[i].rc, 0);
	assert_int_equal(buf_read_file(&got, log, 4096, &err), 0);
	unlink(log);
	assert_string_equal(got.s, want);
	supervisor_close(s);
	json_decref(info);
	unsetenv("KFORGE_WORKER_TEST_GPUS");
	unsetenv("KFORGE_AFFINITY_STREAK");
	buf_release(&err);
	buf_release(&exe);
	buf_release(&got);
}

static void test_supervisor_affinity(void **state)
{
	/* X again, ahead of the older Y; then first come, first served. */
	static const char affine[] = "problems/X\nproblems/X\nproblems/Y\nproblems/Z\n",
			  fifo[] = "problems/X\nproblems/Y\nproblems/X\nproblems/Z\n";

	(void)state;
	affinity_case(NULL, affine);
	affinity_case("32", affine);
	affinity_case("0", fifo);      /* no affinity: strictly first come */
}

static void test_supervisor_affinity_env(void **state)
{
	static const char *const bad[] = { "", "-1", "1001", "3x", "x" };
	struct buf err = BUF_INIT;

	(void)state;
	setenv("KFORGE_WORKER_TEST_GPUS", "1", 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct supervisor *s = NULL;
		json_t *info = NULL;
		buf_reset(&err);
		setenv("KFORGE_AFFINITY_STREAK", bad[i], 1);
		assert_int_equal(supervisor_open(&s, "/bin/true", NULL, 0, &info, &err), -1);
		assert_null(s);
		assert_non_null(strstr(err.s, "KFORGE_AFFINITY_STREAK"));
	}
	unsetenv("KFORGE_AFFINITY_STREAK");
	unsetenv("KFORGE_WORKER_TEST_GPUS");
	buf_release(&err);
}

/* ---- a GPU that keeps failing leaves the pool (issue 43) ------------------ */

static int pool_open(struct supervisor **s, const char *dead, const char *dead_if,
		     struct buf *err)
{
	const char *kb = getenv("KF_BUILD");
	struct buf exe = BUF_INIT;
	json_t *info = NULL;
	int r;

	buf_addf(&exe, "%s/tests/fake_worker", kb ? kb : "build");
	if (access(exe.s, X_OK) != 0) {
		buf_release(&exe);
		return 1;
	}
	setenv("KFORGE_WORKER_TEST_GPUS", "2", 1);
	setenv("FAKE_WORKER_DEAD_DEVICE", dead, 1);
	if (dead_if)
		setenv("FAKE_WORKER_DEAD_IF", dead_if, 1);
	else
		unsetenv("FAKE_WORKER_DEAD_IF");
	r = supervisor_open(s, exe.s, NULL, 0, &info, err);
	json_decref(info);
	buf_release(&exe);
	return r;
}

static void pool_close(struct supervisor *s)
{
	supervisor_close(s);
	unsetenv("KFORGE_WORKER_TEST_GPUS");
	unsetenv("FAKE_WORKER_DEAD_DEVICE");
	unsetenv("FAKE_WORKER_DEAD_IF");
}

struct pid_arg {
	struct supervisor *s;
	int rc, pid[2];
	char status[32];
};

static void *pid_thread(void *p)
{
	struct pid_arg *a = p;

	for (int k = 0; k < 2; k++) {
		json_t *req = json_pack("{s:s}", "mode", "pid"), *rep = NULL;
		struct buf err = BUF_INIT;
		a->rc |= supervisor_request(a->s, RT_EVAL, req, NULL, 0, &rep, &err);
		a->pid[k] = (int)jget_int(rep, "pid", -1);
		if (!a->status[0] || !strcmp(a->status, "correct"))
			snprintf(a->status, sizeof(a->status), "%s", jget_str(rep, "status", "none"));
		json_decref(req);
		json_decref(rep);
		buf_release(&err);
	}
	return NULL;
}

/* 10 requests from 5 threads: all served, all by the worker with pid. */
static void ten_requests_on(struct supervisor *s, int pid)
{
	struct pid_arg a[5];
	pthread_t th[5];

	memset(a, 0, sizeof(a));
	for (int i = 0; i < 5; i++) {
		a[i].s = s;
		assert_int_equal(pthread_create(&th[i], NULL, pid_thread, &a[i]), 0);
	}
	for (int i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(a[i].rc, 0);
		assert_string_equal(a[i].status, "correct");
		assert_int_equal(a[i].pid[0], pid);
		assert_int_equal(a[i].pid[1], pid);
	}
}

/* GPU 1 never starts: open retires it (saying so) and GPU 0 serves all. */
static void test_pool_dead_at_open(void **state)
{
	struct supervisor *s = NULL;
	struct buf err = BUF_INIT, got = BUF_INIT;
	struct capture c;
	int r;

	(void)state;
	capture_start(&c);
	r = pool_open(&s, "1", NULL, &err);
	capture_end(&c, &got);
	if (r == 1)
		skip();
	if (r < 0)
		fail_msg("%s", err.s);
	assert_int_equal(supervisor_n_workers(s), 1);
	if (!strstr(got.s, "GPU 1 taken out of the pool after 3 failed starts in a row") ||
	    !strstr(got.s, "exited before answering hello (exit 3)"))
		fail_msg("stderr: %s", got.s);
	ten_requests_on(s, pid_of(s));
	assert_int_equal(supervisor_n_workers(s), 1);
	pool_close(s);
	buf_release(&err);
	buf_release(&got);
}

/* A worker killed by its candidates 10 times in a row restarts every
 * time: never retired, even as the last GPU of the pool (GPU 1 is dead). */
static void test_pool_crashes_never_retire(void **state)
{
	struct supervisor *s = NULL;
	struct buf err = BUF_INIT;
	int r, p = 0;

	(void)state;
	r = pool_open(&s, "1", NULL, &err);
	if (r == 1)
		skip();
	if (r < 0)
		fail_msg("%s", err.s);
	for (int i = 0; i < 10; i++) {
		json_t *rep = request(s, "crash", NULL);
		int q;
		assert_string_equal(jget_str(rep, "status", ""), "runtime_error");
		json_decref(rep);
		q = pid_of(s);
		assert_int_not_equal(q, p);
		p = q;
	}
	assert_int_equal(supervisor_n_workers(s), 1);
	pool_close(s);
	buf_release(&err);
}

/* GPU 1 starts, dies under a candidate, then cannot start again: retired
 * after 3 failed starts while GPU 0 is busy; the request that met those
 * failed starts waits for GPU 0 instead of failing, and later ones all go
 * to GPU 0. */
static void test_pool_retired_later(void **state)
{
	struct supervisor *s = NULL;
	struct buf err = BUF_INIT, got = BUF_INIT;
	char flag[] = "/tmp/kf-dead-XXXXXX", go[] = "/tmp/kf-go-XXXXXX";
	struct aff_arg hold = { NULL, "wait_file", "problems/X", go, "", -1 };
	struct pid_arg b;
	pthread_t th, tb;
	struct capture c;
	json_t *req, *rep = NULL;
	int fd, r, rc, queued, p0, busy = 0;

	(void)state;
	fd = mkstemp(flag);
	assert_true(fd >= 0);
	close(fd);
	unlink(flag);
	fd = mkstemp(go);
	assert_true(fd >= 0);
	close(fd);
	unlink(go);
	r = pool_open(&s, "1", flag, &err);
	if (r == 1)
		skip();
	if (r < 0)
		fail_msg("%s", err.s);
	assert_int_equal(supervisor_n_workers(s), 2);
	p0 = pid_of(s);                       /* the first free worker: GPU 0 */
	hold.s = s;
	assert_int_equal(pthread_create(&th, NULL, aff_thread, &hold), 0);
	wait_queue(s, 0, 1);                  /* GPU 0 held */
	fd = open(flag, O_CREAT | O_WRONLY, 0600);   /* GPU 1 cannot start from now */
	assert_true(fd >= 0);
	close(fd);
	/* No assertion while stderr is captured (its message would be lost). */
	capture_start(&c);
	req = json_pack("{s:s}", "mode", "crash");
	rc = supervisor_request(s, RT_EVAL, req, NULL, 0, &rep, &err);  /* GPU 1 */
	json_decref(req);
	memset(&b, 0, sizeof(b));
	b.s = s;
	r = pthread_create(&tb, NULL, pid_thread, &b);
	for (int i = 0; !r && i < 1000 && supervisor_n_workers(s) != 1; i++)
		usleep(5000);
	queued = queue_reached(s, 1, 1);      /* b waits for GPU 0 */
	fd = open(go, O_CREAT | O_WRONLY, 0600);     /* GPU 0 free */
	if (fd >= 0)
		close(fd);
	pthread_join(th, NULL);
	if (!r)
		pthread_join(tb, NULL);
	capture_end(&c, &got);
	assert_int_equal(r, 0);
	assert_true(fd >= 0);
	assert_int_equal(rc, 0);
	assert_true(queued);
	assert_int_equal(supervisor_n_workers(s), 1);
	assert_string_equal(jget_str(rep, "status", ""), "runtime_error");
	json_decref(rep);
	assert_int_equal(hold.rc, 0);
	assert_int_equal(b.rc, 0);
	assert_string_equal(b.status, "correct");
	assert_int_equal(b.pid[0], p0);
	assert_int_equal(b.pid[1], p0);
	if (!strstr(got.s, "GPU 1 (Fake GPU) taken out of the pool after 3 failed starts in a row"))
		fail_msg("stderr: %s", got.s);
	ten_requests_on(s, p0);
	assert_int_equal(supervisor_waiting(s, &busy), 0);
	assert_int_equal(busy, 0);
	pool_close(s);
	unlink(flag);
	unlink(go);
	buf_release(&err);
	buf_release(&got);
}

/* No GPU starts: open fails and says so. A pool whose last GPU stops
 * starting fails the request that finds none left, and says so. */
static void test_pool_all_dead(void **state)
{
	struct supervisor *s = NULL;
	struct buf err = BUF_INIT;
	char flag[] = "/tmp/kf-dead-XXXXXX";
	json_t *req, *rep = NULL;
	int fd, r;

	(void)state;
	r = pool_open(&s, "all", NULL, &err);
	if (r == 1)
		skip();
	assert_int_equal(r, -1);
	assert_null(s);
	if (!strstr(err.s, "every GPU worker failed to start (3 tries each)") ||
	    !strstr(err.s, "exited before answering hello"))
		fail_msg("err: %s", err.s);
	pool_close(NULL);

	fd = mkstemp(flag);
	assert_true(fd >= 0);
	close(fd);
	unlink(flag);
	if (pool_open(&s, "all", flag, &err) < 0)
		fail_msg("%s", err.s);
	fd = open(flag, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	for (int i = 0; i < 2; i++) {      /* both GPUs die, neither restarts */
		json_t *x = request(s, "crash", NULL);
		json_decref(x);
	}
	req = json_pack("{s:s}", "mode", "pid");
	assert_int_equal(supervisor_request(s, RT_EVAL, req, NULL, 0, &rep, &err), -1);
	assert_null(rep);
	if (!strstr(err.s, "every GPU was taken out of the pool"))
		fail_msg("err: %s", err.s);
	assert_int_equal(supervisor_n_workers(s), 0);
	json_decref(req);
	pool_close(s);
	unlink(flag);
	buf_release(&err);
}

/* Kept reference outputs of other problems: the cheapest to recompute per
 * byte goes first (a 6 GB elementwise output before a 64 MB matmul's),
 * the current problem's never, and an old keep ages out. */
static void keep_at(struct worker *w, int i, const char *dir, size_t bytes, double ref_ms)
{
	struct wk_keep *k = &w->keep[i];
	snprintf(k->dir, sizeof(k->dir), "%s", dir);
	snprintf(k->ref_hash, sizeof(k->ref_hash), "r%s", dir);
	k->bytes = bytes;
	k->ref_ms = ref_ms;
	k->used = 1;
	wk_keep_touch(w, k);
}

static void test_keep_eviction_order(void **state)
{
	struct worker *w = calloc(1, sizeof(*w));
	size_t idle = 0;

	(void)state;
	snprintf(w->prob_dir, sizeof(w->prob_dir), "A");
	snprintf(w->ref_hash, sizeof(w->ref_hash), "rA");
	w->have_problem = 1;
	assert_int_equal(wk_keep_victim(w, &idle), -1);
	keep_at(w, 0, "A", (size_t)6 << 30, 1.0);      /* current: never a victim */
	assert_int_equal(wk_keep_victim(w, &idle), -1);
	assert_int_equal(idle, 0);
	keep_at(w, 1, "C", (size_t)64 << 20, 400.0);   /* matmul: costly, small */
	keep_at(w, 2, "B", (size_t)6 << 30, 30.0);     /* elementwise: cheap, large */
	keep_at(w, 3, "D", (size_t)64 << 20, 300.0);
	assert_int_equal(wk_keep_victim(w, &idle), 2);
	assert_int_equal(idle, ((size_t)6 << 30) + ((size_t)128 << 20));
	/* Same problem, another reference: not the current problem's. */
	snprintf(w->ref_hash, sizeof(w->ref_hash), "rA2");
	assert_int_equal(wk_keep_victim(w, &idle), 0);
	snprintf(w->ref_hash, sizeof(w->ref_hash), "rA");
	/* Evictions raise the age: a keep touched since outranks an old one. */
	w->keep[2].used = 0;
	w->keep_age = w->keep[1].prio;
	assert_int_equal(wk_keep_victim(w, &idle), 3);
	wk_keep_touch(w, &w->keep[3]);
	assert_int_equal(wk_keep_victim(w, &idle), 1);

	/* What may stay: other problems' bytes within the budget (the current
	 * problem's new keep is not theirs), and an eighth of memory free. */
	{
		const size_t G = (size_t)1 << 30, tot = 80 * G;
		w->keep_budget = 20 * G;
		assert_true(wk_keeps_fit(w, 20 * G, 8 * G, 40 * G, tot));
		assert_false(wk_keeps_fit(w, 20 * G + 1, 0, 40 * G, tot));
		assert_true(wk_keeps_fit(w, 0, 30 * G, 40 * G, tot));       /* 10 G left = 1/8 */
		assert_false(wk_keeps_fit(w, 0, 30 * G + 1, 40 * G, tot));
		assert_false(wk_keeps_fit(w, 0, 41 * G, 40 * G, tot));       /* no wrap-around */
	}
	free(w);
}

/* ---- engine_eval from several threads (compile only) -------------------- */

struct th_arg {
	struct engine *e;
	const char *cand;
	char status[24];
	char hash[65];
	char msg[256];
	int rc;
};

static void *eval_thread(void *p)
{
	struct th_arg *a = p;
	struct eval_request req = { .problem_id = "level1/019_ReLU", .candidate = a->cand };
	struct eval_outcome o;
	struct buf err = BUF_INIT;

	eval_outcome_init(&o);
	a->rc = engine_eval(a->e, &req, &o, &err);
	snprintf(a->status, sizeof(a->status), "%s", o.status);
	snprintf(a->hash, sizeof(a->hash), "%s", o.kernel_hash);
	snprintf(a->msg, sizeof(a->msg), "%s", err.s);
	eval_outcome_release(&o);
	buf_release(&err);
	return NULL;
}

static void test_engine_threads(void **state)
{
	const char *root = getenv("KF_ROOT"), *kf = getenv("KFORGE");
	char dir[] = "/tmp/kf-eng-XXXXXX", db[64];
	struct engine_config cfg;
	struct engine *e = NULL;
	struct buf err = BUF_INIT;
	struct th_arg a[6];
	pthread_t th[6];
	static char src[6][512];

	(void)state;
	if (!root || !kf)
		skip();
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/k.db", dir);
	memset(&cfg, 0, sizeof(cfg));
	eval_protocol_default(&cfg.protocol);
	cfg.root = root;
	cfg.store_path = db;
	cfg.compile_only = 1;
	cfg.arch = "sm_90";
	cfg.exe = kf;
	cfg.n_compile = 2;
	assert_int_equal(engine_open(&e, &cfg, &err), 0);
	assert_string_equal(engine_gpu_name(e), "");
	for (int i = 0; i < 6; i++) {
		/* Three distinct kernels, each twice, and one format error. */
		snprintf(src[i], sizeof(src[i]),
			 "extern \"C\" __global__ void k%d(const float* x, float* y, long long n)\n"
			 "{ long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * %d.0f; }\n"
			 "/*@launch\nk%d<<<ceil_div(batch_size * dim, 256), %s>>>(x, y, batch_size * dim);\n@*/\n",
			 i % 3, i % 3, i % 3, i == 5 ? "4096" : "256");
		a[i].e = e;
		a[i].cand = src[i];
		assert_int_equal(pthread_create(&th[i], NULL, eval_thread, &a[i]), 0);
	}
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	if (a[0].rc < 0 && strstr(a[0].msg, "NVRTC not found")) {
		engine_close(e);
		skip();
	}
#if defined(__SANITIZE_ADDRESS__)
	/* Under LeakSanitizer the compile child fails on NVRTC's own leaks. */
	if (a[0].rc < 0 && strstr(a[0].msg, "compile child failed")) {
		engine_close(e);
		skip();
	}
#endif
	for (int i = 0; i < 6; i++) {
		if (a[i].rc)
			fail_msg("thread %d: %s", i, a[i].msg);
		assert_string_equal(a[i].status, i == 5 ? "format_error" : "not_run");
	}
	assert_string_equal(a[0].hash, a[3].hash);
	assert_string_not_equal(a[0].hash, a[1].hash);
	engine_close(e);
	{
		struct store s;
		long long n = 0;
		assert_int_equal(store_open(&s, db, STORE_READONLY, &err), 0);
		assert_int_equal(store_query_int(&s, "SELECT COUNT(*) FROM kernels", NULL, 0, &n, &err), 0);
		assert_int_equal(n, 4);
		assert_int_equal(store_query_int(&s, "SELECT COUNT(*) FROM evals", NULL, 0, &n, &err), 0);
		assert_int_equal(n, 4);
		store_close(&s);
	}
	{
		char cmd[96];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rt_roundtrip),
		cmocka_unit_test(test_rt_bad_frames),
		cmocka_unit_test(test_protocol_key),
		cmocka_unit_test(test_engine_keeps_dists),
		cmocka_unit_test(test_sol_floor),
		cmocka_unit_test(test_time_stats),
		cmocka_unit_test(test_harness_compiles),
		cmocka_unit_test(test_supervisor_watchdog),
		cmocka_unit_test(test_supervisor_worker_stdout),
		cmocka_unit_test(test_supervisor_affinity),
		cmocka_unit_test(test_supervisor_affinity_env),
		cmocka_unit_test(test_pool_dead_at_open),
		cmocka_unit_test(test_pool_crashes_never_retire),
		cmocka_unit_test(test_pool_retired_later),
		cmocka_unit_test(test_pool_all_dead),
		cmocka_unit_test(test_keep_eviction_order),
		cmocka_unit_test(test_engine_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
