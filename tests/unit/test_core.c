/* core/: buffers, JSON helpers, SHA-256, atomic files, child processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "core/proc.h"
#include "core/sha256.h"

static void test_buf(void **state)
{
	struct buf b = BUF_INIT;
	(void)state;
	assert_non_null(b.s);
	assert_string_equal(b.s, "");
	buf_adds(&b, "abc");
	buf_addf(&b, "-%d-%s", 42, "x");
	assert_string_equal(b.s, "abc-42-x");
	assert_int_equal(b.len, 8);
	for (int i = 0; i < 10000; i++)
		buf_addc(&b, 'z');
	assert_int_equal(b.len, 10008);
	assert_int_equal(b.s[b.len], '\0');
	buf_truncate(&b, 3);
	assert_string_equal(b.s, "abc");
	buf_adds(&b, "  \n\t");
	buf_trim(&b);
	assert_string_equal(b.s, "abc");
	buf_setf(&b, "%s", "new");
	assert_string_equal(b.s, "new");
	{
		size_t n;
		char *d = buf_detach(&b, &n);
		assert_string_equal(d, "new");
		assert_int_equal(n, 3);
		assert_string_equal(b.s, "");
		free(d);
	}
	assert_int_equal(kf_err(&b, "bad %s", "thing"), -1);
	assert_string_equal(b.s, "bad thing");
	assert_int_equal(kf_err(NULL, "ignored"), -1);
	buf_release(&b);
	buf_release(&b); /* idempotent */
}

static void test_sha256(void **state)
{
	char hex[65];
	(void)state;
	sha256_hex("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_json(void **state)
{
	struct buf err = BUF_INIT, out = BUF_INIT;
	json_t *v;
	const char *s;
	int64_t i;
	(void)state;

	v = json_parse_bounded("{\"b\":1,\"a\":\"x\"}", 15, 100, &err);
	assert_non_null(v);
	assert_string_equal(jget_str(v, "a", "?"), "x");
	assert_string_equal(jget_str(v, "zz", "def"), "def");
	assert_int_equal(jget_int(v, "b", 0), 1);
	assert_int_equal(jreq_str(v, "a", &s, "spec.json", &err), 0);
	assert_int_equal(jreq_str(v, "b", &s, "spec.json", &err), -1);
	assert_non_null(strstr(err.s, "\"b\" must be a string"));
	assert_int_equal(jreq_int(v, "missing", &i, "spec.json", &err), -1);
	assert_non_null(strstr(err.s, "spec.json: missing field \"missing\""));
	json_add_compact(&out, v);
	assert_string_equal(out.s, "{\"a\":\"x\",\"b\":1}"); /* sorted keys: stable bytes */
	json_decref(v);
	assert_null(json_parse_bounded("{\"a\":1}", 7, 3, &err));
	assert_non_null(strstr(err.s, "over the limit"));
	assert_null(json_parse_bounded("{\"a\":1,\"a\":2}", 13, 100, &err));
	assert_null(json_parse_bounded("{bad", 4, 100, &err));
	assert_non_null(strstr(err.s, "line 1"));
	buf_release(&err);
	buf_release(&out);
}

static void test_atomic_write(void **state)
{
	char dir[] = "/tmp/kf-core.XXXXXX";
	struct buf p = BUF_INIT, err = BUF_INIT, got = BUF_INIT;
	struct stat st;
	(void)state;

	assert_non_null(mkdtemp(dir));
	path_join(&p, dir, "a/b/c");
	assert_int_equal(mkdir_p(p.s, &err), 0);
	assert_true(is_dir(p.s));
	path_join(&p, dir, "a/b/c/file.txt");
	assert_int_equal(write_file_atomic(p.s, "hello", 5, &err), 0);
	assert_int_equal(buf_read_file(&got, p.s, 100, &err), 0);
	assert_string_equal(got.s, "hello");
	assert_int_equal(write_file_atomic(p.s, "bye", 3, &err), 0);
	assert_int_equal(buf_read_file(&got, p.s, 100, &err), 0);
	assert_string_equal(got.s, "bye");
	assert_int_equal(stat(p.s, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(buf_read_file(&got, p.s, 2, &err), -1);
	assert_non_null(strstr(err.s, "limit"));
	path_join(&p, dir, "nodir/x");
	assert_int_equal(write_file_atomic(p.s, "x", 1, &err), -1);
	assert_non_null(strstr(err.s, "nodir"));
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	buf_release(&p);
	buf_release(&err);
	buf_release(&got);
}

static void test_proc(void **state)
{
	struct proc_result r;
	struct proc_limits lim = { 0 };
	struct buf err = BUF_INIT;

	const char *cat[] = { "cat", NULL };
	const char *sh_sleep[] = { "sh", "-c", "echo start; sleep 30", NULL };
	const char *sh_exit[] = { "sh", "-c", "echo out; echo err >&2; exit 7", NULL };
	const char *noexe[] = { "/nonexistent/kforge-test", NULL };
	(void)state;

	proc_result_init(&r);
	assert_int_equal(proc_run(cat, "ping", 4, &lim, &r, &err), 0);
	assert_true(r.exited);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out.s, "ping");

	assert_int_equal(proc_run(sh_exit, NULL, 0, &lim, &r, &err), 0);
	assert_int_equal(r.status, 7);
	assert_string_equal(r.out.s, "out\n");
	assert_string_equal(r.errout.s, "err\n");

	lim.wall_s = 0.5;
	assert_int_equal(proc_run(sh_sleep, NULL, 0, &lim, &r, &err), 0);
	assert_true(r.timed_out);
	assert_true(r.wall_s < 3.0);
	assert_string_equal(r.out.s, "start\n");

	lim.wall_s = 0;
	lim.max_output = 10;
	{
		const char *big[] = { "sh", "-c", "yes | head -c 100000", NULL };
		assert_int_equal(proc_run(big, NULL, 0, &lim, &r, &err), 0);
		assert_int_equal(r.out.len, 10);
		assert_true(r.out_truncated);
	}
	lim.max_output = 0;
	assert_int_equal(proc_run(noexe, NULL, 0, &lim, &r, &err), 0);
	assert_int_equal(r.status, 127);
	{
		/* The address-space limit applies to the child. */
		const char *alloc[] = { "python3", "-c", "bytearray(400000000)", NULL };
		assert_int_equal(proc_run(alloc, NULL, 0, &lim, &r, &err), 0);
		assert_true(r.exited && r.status == 0);
		lim.as_bytes = 160u << 20;
		assert_int_equal(proc_run(alloc, NULL, 0, &lim, &r, &err), 0);
		assert_false(r.exited && r.status == 0);
		assert_non_null(strstr(r.errout.s, "MemoryError"));
		lim.as_bytes = 0;
	}
	proc_result_release(&r);
	buf_release(&err);
}

/* A process's state letter from /proc (0 when it is gone). */
static char proc_state(pid_t pid)
{
	char path[64], line[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : 0;
}

/* die_with_parent: a child left by a killed parent is killed too (a stopped
 * verifier once left a sanitizer run on the GPU); without it, it lives on. */
static void test_proc_die_with_parent(void **state)
{
	(void)state;
	for (int die = 1; die >= 0; die--) {
		char file[] = "/tmp/kf-pdeath-XXXXXX";
		int fd = mkstemp(file);
		pid_t mid, gpid = 0;
		char cmd[128];
		assert_true(fd >= 0);
		close(fd);
		snprintf(cmd, sizeof(cmd), "echo $$ > %s; exec sleep 30", file);
		mid = fork();
		assert_true(mid >= 0);
		if (mid == 0) {
			const char *argv[] = { "sh", "-c", cmd, NULL };
			struct proc_limits lim = { 60, 0, 0, 0, 0, die };
			struct proc_result r;
			struct buf err = BUF_INIT;
			proc_result_init(&r);
			proc_run(argv, NULL, 0, &lim, &r, &err);
			_exit(0);
		}
		for (int i = 0; i < 200 && gpid <= 0; i++) {
			FILE *f = fopen(file, "r");
			int v = 0;
			if (f && fscanf(f, "%d", &v) == 1)
				gpid = v;
			if (f)
				fclose(f);
			if (gpid <= 0)
				usleep(10000);
		}
		assert_true(gpid > 0);
		usleep(50000);   /* sh has exec'd sleep */
		kill(mid, SIGKILL);
		waitpid(mid, NULL, 0);
		{
			char st = 'R';
			for (int i = 0; i < 200; i++) {
				st = proc_state(gpid);
				if (st == 0 || st == 'Z' || st == 'X')
					break;
				usleep(10000);
			}
			if (die)
				assert_true(st == 0 || st == 'Z' || st == 'X');
			else
				assert_true(st != 0 && st != 'Z' && st != 'X');
		}
		kill(gpid, SIGKILL);
		unlink(file);
	}
}

static int child_fn(void *arg)
{
	printf("child %s\n", (const char *)arg);
	fflush(stdout);
	return 5;
}

static void test_proc_fn(void **state)
{
	struct proc_result r;
	struct proc_limits lim = { 0 };
	struct buf err = BUF_INIT, d = BUF_INIT;
	(void)state;
	proc_result_init(&r);
	static char xarg[] = "x";
	assert_int_equal(proc_run_fn(child_fn, xarg, NULL, 0, &lim, &r, &err), 0);
	assert_int_equal(r.status, 5);
	assert_string_equal(r.out.s, "child x\n");
	proc_describe(&r, &d);
	assert_string_equal(d.s, "exit 5");
	proc_result_release(&r);
	buf_release(&err);
	buf_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_proc),
		cmocka_unit_test(test_proc_fn),
		cmocka_unit_test(test_proc_die_with_parent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
