/* core/utf8: well-formedness (Unicode table 3-7), first bad byte, the
 * U+FFFD copy the store keeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "core/utf8.h"

static void test_wellformed(void **state)
{
	static const struct { const char *s; size_t len; } good[] = {
		{ "a", 1 }, { "\xC2\x80", 2 }, { "\xDF\xBF", 2 }, { "\xE0\xA0\x80", 3 },
		{ "\xE2\x82\xAC", 3 }, { "\xED\x9F\xBF", 3 }, { "\xEE\x80\x80", 3 },
		{ "\xF0\x90\x80\x80", 4 }, { "\xF4\x8F\xBF\xBF", 4 },
	};
	static const char *const bad[] = {
		"\x80", "\xBF", "\xC0\x80", "\xC1\xBF", "\xC2", "\xC2\x41", "\xE0\x80\x80",
		"\xE0\x9F\xBF", "\xED\xA0\x80", "\xED\xBF\xBF", "\xE2\x82", "\xE2\x82\x41",
		"\xF0\x80\x80\x80", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80",
		"\xFE", "\xFF", "\xF0\x90\x80",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(utf8_seq_len(good[i].s, strlen(good[i].s)), good[i].len);
		assert_int_equal(utf8_first_bad(good[i].s, strlen(good[i].s)), strlen(good[i].s));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (utf8_seq_len(bad[i], strlen(bad[i])) != 0)
			fail_msg("accepted bad[%zu]", i);
		assert_int_equal(utf8_first_bad(bad[i], strlen(bad[i])), 0);
	}
	/* Bounded by n, not by the NUL: a sequence cut by n is bad. */
	assert_int_equal(utf8_seq_len("\xE2\x82\xAC", 2), 0);
	assert_int_equal(utf8_first_bad("ab\0c", 4), 2);
	assert_int_equal(utf8_first_bad("caf\xC3\xA9 \xE9", 7), 6);
}

static void test_clean(void **state)
{
	struct buf b = BUF_INIT;
	json_t *j;
	(void)state;
	assert_int_equal(utf8_add_clean(&b, "caf\xE9 \xE2\x82\xAC\0x\xE2\x82", 11), 3);
	assert_int_equal(b.len, 3 + 3 + 1 + 3 + 3 + 1 + 3);
	assert_memory_equal(b.s, "caf\xEF\xBF\xBD \xE2\x82\xAC\xEF\xBF\xBDx\xEF\xBF\xBD", b.len);
	buf_release(&b);
	j = json_utf8("ok \xFF", 4);
	assert_non_null(j);
	assert_string_equal(json_string_value(j), "ok \xEF\xBF\xBD");
	json_decref(j);
	j = json_utf8(NULL, 0);
	assert_string_equal(json_string_value(j), "");
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wellformed),
		cmocka_unit_test(test_clean),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
