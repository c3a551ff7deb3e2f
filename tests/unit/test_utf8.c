/* core/utf8: well-formedness (Unicode table 3-7), first bad byte, the
 * U+FFFD copy the store keeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "core/termsafe.h"
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

/* Controls become visible escapes; text, newlines (when kept) and
 * well-formed non-controls stay. */
static void test_termsafe(void **state)
{
	static const char in[] = "a\x1b[2J\x1b]8;;u\x07x\tz\n\xe2\x80\xae" "b\xc2\x9b" "c\xff \xc3\xa9";
	struct buf b = BUF_INIT;
	(void)state;
	assert_int_equal(termsafe_add(&b, in, sizeof(in) - 1, 0), 8);
	assert_string_equal(b.s, "a\\x1b[2J\\x1b]8;;u\\x07x\\tz\\n\\u202eb\\u009bc\\xff \xc3\xa9");
	buf_reset(&b);
	assert_int_equal(termsafe_add(&b, in, sizeof(in) - 1, TERMSAFE_KEEP_NL), 6);
	assert_non_null(strstr(b.s, "x\tz\n"));
	assert_int_equal(text_control_len("\xe2\x81\xa7", 3), 3); /* U+2067 */
	assert_int_equal(text_control_len("\xe2\x80\x94", 3), 0); /* an em dash */
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wellformed),
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_termsafe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
