/* The sections of the built-in templates' .cuh texts (kernels/builtin_util.c
 * bt_cuh_find, bt_cuh_section): a section runs from its "//@ NAME" line to
 * the next one or the end, the file's comment is never part of one, a name
 * must match whole, and an unknown name aborts instead of emitting nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels/builtin_util.h"

static const char text[] = "// comment: not emitted\n"
			   "//@ head\n"
			   "__device__ int f();\n"
			   "\n"
			   "//@ head2\n"
			   "    int x = 1; //@ not a marker\n"
			   "//@ tail\n"
			   "}\n";

static void sections(void **state)
{
	struct buf s = BUF_INIT;

	(void)state;
	bt_cuh_section(&s, text, "head");
	assert_string_equal(s.s, "__device__ int f();\n\n");
	buf_reset(&s);
	bt_cuh_section(&s, text, "head2");
	assert_string_equal(s.s, "    int x = 1; //@ not a marker\n");
	buf_reset(&s);
	bt_cuh_section(&s, text, "tail");
	assert_string_equal(s.s, "}\n");
	buf_release(&s);
}

static void unknown_or_partial(void **state)
{
	const char *p = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(bt_cuh_find(text, "hea", &p, &n), -1);
	assert_int_equal(bt_cuh_find(text, "comment: not emitted", &p, &n), -1);
	assert_int_equal(bt_cuh_find(text, "", &p, &n), -1);
	assert_int_equal(bt_cuh_find("", "head", &p, &n), -1);
	assert_int_equal(bt_cuh_find(text, "tail", &p, &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(p, "}\n", 2);
}

/* An unknown section is a bug in the emitter: it must not render a kernel
 * with a hole in it. */
static void unknown_aborts(void **state)
{
	int st = 0;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct buf s = BUF_INIT;

		close(2);
		bt_cuh_section(&s, text, "missing");
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGABRT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sections),
		cmocka_unit_test(unknown_or_partial),
		cmocka_unit_test(unknown_aborts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
