/* core/xalloc: the one allocation-failure policy. A failed allocation
 * writes one line naming the size and the caller's file:line, then aborts
 * (SIGABRT); each failure runs in a child (proc_run_fn). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "core/buf.h"
#include "core/proc.h"
#include "core/xalloc.h"

/* Under AddressSanitizer an impossible malloc must return NULL as libc's
 * does, not stop the process with ASan's own report. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

/* In the child: no core file, and the line of the call about to fail on
 * stdout (__LINE__ in a macro is the line that uses it). */
#define AT(call) (no_core(), printf("%d\n", __LINE__), fflush(stdout), (call))

static void no_core(void)
{
	struct rlimit rl = { 0, 0 };
	setrlimit(RLIMIT_CORE, &rl);
}

static int die_malloc(void *arg)
{
	void *p = AT(xmalloc(SIZE_MAX));
	(void)arg;
	return p != NULL;
}

static int die_calloc(void *arg)
{
	void *p = AT(xcalloc(SIZE_MAX / 2, 4));   /* n * size overflows */
	(void)arg;
	return p != NULL;
}

static int die_realloc(void *arg)
{
	void *p = xmalloc(16);
	p = AT(xrealloc(p, SIZE_MAX - 64));
	(void)arg;
	return p != NULL;
}

static int die_check(void *arg)
{
	void *p = AT(xcheck(NULL, "a libcurl URL handle"));
	(void)arg;
	return p != NULL;
}

/* A buffer whose size would wrap (len + SIZE_MAX + 1 == len: once taken for
 * no growth): the same policy, at buf.c's line. */
static int die_buf(void *arg)
{
	struct buf b = BUF_INIT;
	(void)arg;
	buf_adds(&b, "x");
	AT(buf_grow(&b, SIZE_MAX));
	return 0;
}

/* fn dies by SIGABRT; its stderr into *errout, the line it printed returned. */
static int dies(int (*fn)(void *), struct buf *errout)
{
	struct proc_result r;
	struct proc_limits lim = { 0 };
	struct buf err = BUF_INIT;
	int line;

	proc_result_init(&r);
	assert_int_equal(proc_run_fn(fn, NULL, NULL, 0, &lim, &r, &err), 0);
	if (!r.signaled)
		print_message("# exit %d, stdout [%s], stderr [%s]\n", r.status, r.out.s, r.errout.s);
	assert_true(r.signaled);
	assert_int_equal(r.status, SIGABRT);
	line = atoi(r.out.s);
	assert_true(line > 0);
	buf_setf(errout, "%s", r.errout.s);
	proc_result_release(&r);
	buf_release(&err);
	return line;
}

/* got's last line is want (a line of the sanitizer's own may come before:
 * ASan warns of the failed allocation it returns NULL for). */
static void last_line_is(const struct buf *got, const struct buf *want)
{
	size_t off = got->len >= want->len ? got->len - want->len : 0;

	assert_string_equal(got->s + off, want->s);
	assert_true(off == 0 || got->s[off - 1] == '\n');
}

static void test_failure_names_size_and_site(void **state)
{
	struct buf got = BUF_INIT, want = BUF_INIT;
	int l;
	(void)state;

	l = dies(die_malloc, &got);
	buf_setf(&want, "kforge: out of memory: %zu bytes at %s:%d\n", SIZE_MAX, __FILE__, l);
	last_line_is(&got, &want);

	l = dies(die_calloc, &got);
	buf_setf(&want, "kforge: out of memory: %zu bytes at %s:%d\n", SIZE_MAX, __FILE__, l);
	last_line_is(&got, &want);

	l = dies(die_realloc, &got);
	buf_setf(&want, "kforge: out of memory: %zu bytes at %s:%d\n", SIZE_MAX - 64, __FILE__, l);
	last_line_is(&got, &want);

	l = dies(die_check, &got);
	buf_setf(&want, "kforge: out of memory: a libcurl URL handle at %s:%d\n", __FILE__, l);
	last_line_is(&got, &want);

	dies(die_buf, &got);
	buf_setf(&want, "kforge: out of memory: %zu bytes at core/buf.c:", SIZE_MAX);
	assert_true(!strncmp(got.s, want.s, want.len));   /* no allocation: nothing of ASan's */
	assert_ptr_equal(strchr(got.s, '\n'), got.s + got.len - 1);   /* one line */

	buf_release(&got);
	buf_release(&want);
}

static void test_success(void **state)
{
	char *s, *p;
	(void)state;

	p = xmalloc(0);            /* never NULL, even for 0 bytes */
	assert_non_null(p);
	free(p);
	p = xcalloc(0, 8);
	assert_non_null(p);
	free(p);
	p = xcalloc(4, 4);
	for (int i = 0; i < 16; i++)
		assert_int_equal(p[i], 0);
	memcpy(p, "abcdefghijklmno", 16);
	p = xrealloc(p, 1 << 20);
	assert_string_equal(p, "abcdefghijklmno");
	free(p);
	s = xstrdup("kforge");
	assert_string_equal(s, "kforge");
	free(s);
	s = xstrndup("kforge", 2);
	assert_string_equal(s, "kf");
	free(s);
	assert_ptr_equal(xcheck(&s, "x"), &s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failure_names_size_and_site),
		cmocka_unit_test(test_success),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
