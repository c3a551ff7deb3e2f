/* The sections of the built-in templates' .cuh texts (kernels/builtin_util.c
 * bt_cuh_find, bt_cuh_expand, bt_cuh_section, bt_cuh_fill): a section runs
 * from its "//@ NAME" line to the next one or the end, the file's comment is
 * never part of one, a name must match whole; placeholders @KEY@ take their
 * values, other '@' stay text; an unknown section, a placeholder without a
 * value and a value without a placeholder are errors, and abort in the
 * callers that emit kernels instead of emitting a wrong one. */
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
			   "}\n"
			   "//@ params\n"
			   "/*@launch @*/ x@y@ @NT@ + @NT@ * @K_2@ @lower@\n";

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

static void placeholders(void **state)
{
	struct buf s = BUF_INIT, err = BUF_INIT;
	const char *const kv[] = { "NT", "256", "K_2", "", NULL };
	const char *const extra[] = { "NT", "1", "K_2", "2", "M", "3", NULL };
	const char *const missing[] = { "NT", "1", NULL };
	const char *const odd[] = { "NT", "1", "K_2", NULL };

	(void)state;
	assert_int_equal(bt_cuh_expand(&s, text, "params", kv, &err), 0);
	assert_string_equal(s.s, "/*@launch @*/ x@y@ 256 + 256 *  @lower@\n");
	buf_reset(&s);
	bt_cuh_fill(&s, text, "params", "K_2", "k", "NT", BT_INT(-9000000000LL), NULL);
	assert_string_equal(s.s, "/*@launch @*/ x@y@ -9000000000 + -9000000000 * k @lower@\n");
	assert_int_equal(bt_cuh_expand(&s, text, "params", extra, &err), -1);
	assert_non_null(strstr(err.s, "@M@"));
	assert_int_equal(bt_cuh_expand(&s, text, "params", missing, &err), -1);
	assert_non_null(strstr(err.s, "@K_2@"));
	assert_int_equal(bt_cuh_expand(&s, text, "params", odd, &err), -1);
	assert_int_equal(bt_cuh_expand(&s, text, "params", NULL, &err), -1);
	assert_int_equal(bt_cuh_expand(&s, text, "nosuch", NULL, &err), -1);
	assert_non_null(strstr(err.s, "nosuch"));
	/* text without placeholders takes no values */
	assert_int_equal(bt_cuh_expand(&s, text, "tail", missing, &err), -1);
	buf_release(&s);
	buf_release(&err);
}

/* what: 0 an unknown section, 1 a placeholder left without value, 2 a
 * value without placeholder, 3 a good call (exits 0) */
static int child(int what)
{
	pid_t pid = fork();
	int st = 0;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct buf s = BUF_INIT;

		close(2);
		if (what == 0)
			bt_cuh_section(&s, text, "missing");
		else if (what == 1)
			bt_cuh_section(&s, text, "params");
		else if (what == 2)
			bt_cuh_fill(&s, text, "head", "NT", "1", NULL);
		else
			bt_cuh_fill(&s, text, "params", "NT", "1", "K_2", "2", NULL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

/* A bad name is a bug in the emitter: it must not render a kernel with a
 * hole or a stray @KEY@ in it. */
static void errors_abort(void **state)
{
	(void)state;
	for (int what = 0; what < 3; what++) {
		int st = child(what);

		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGABRT);
	}
	assert_true(WIFEXITED(child(3)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sections),
		cmocka_unit_test(unknown_or_partial),
		cmocka_unit_test(placeholders),
		cmocka_unit_test(errors_abort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
