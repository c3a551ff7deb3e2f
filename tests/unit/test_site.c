/* The site's escaping and rendering helpers: hostile strings come out
 * inert through every path (HTML escaping, CUDA highlighting, Markdown,
 * SVG charts, Markdown reports, text from the store), and file names made
 * from store values cannot leave the site. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store_site.h"
#include "site/html.h"
#include "site/report_md.h"
#include "site/site.h"
#include "site/svg.h"

static const char *const hostile[] = {
	"</script><script>alert('x')</script>",
	"<img src=x onerror=alert(1)>",
	"{{#evil}}{{{raw}}}{{/evil}}",
	"ctl\x01\x07\x1b[31m\x7f end",
	"\"quoted' & <b>",
	"<a href=\"javascript:alert(1)\">x</a>",
};
#define N_HOSTILE (sizeof(hostile) / sizeof(hostile[0]))

/* No tag of the input survives and no control character is left. */
static void assert_inert(const char *out, const char *what)
{
	if (strstr(out, "<script") || strstr(out, "<img") || strstr(out, "onerror=\"") ||
	    strstr(out, "<b>") || strstr(out, "href=\"javascript")) {
		print_error("%s produced markup: %s\n", what, out);
		fail();
	}
	for (const char *p = out; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7F) {
			print_error("%s left control 0x%02x: %s\n", what, c, out);
			fail();
		}
	}
}

static void test_escape(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	html_escapes(&b, "a<b>&\"'\x01z");
	assert_string_equal(b.s, "a&lt;b&gt;&amp;&quot;&#39;&#xFFFD;z");
	for (size_t i = 0; i < N_HOSTILE; i++) {
		buf_reset(&b);
		html_escapes(&b, hostile[i]);
		assert_inert(b.s, "html_escape");
	}
	buf_reset(&b);
	html_escapes(&b, "{{x}}");
	assert_string_equal(b.s, "{{x}}"); /* inert text: the page is never re-rendered */
	buf_release(&b);
}

static void test_highlight(void **state)
{
	const char *src = "extern \"C\" __global__ void k(float* y, int n)\n"
			  "{ // a <comment> & more\n"
			  "  if (threadIdx.x < n) y[0] = 1.5f;\n"
			  "}\n/*@launch\nk<<<1, 32>>>(y, n);\n@*/\n";
	struct buf b = BUF_INIT;

	(void)state;
	html_highlight_cuda(&b, src, strlen(src));
	assert_non_null(strstr(b.s, "<span class=\"k\">__global__</span>"));
	assert_non_null(strstr(b.s, "<span class=\"t\">float</span>"));
	assert_non_null(strstr(b.s, "<span class=\"b\">threadIdx</span>"));
	assert_non_null(strstr(b.s, "<span class=\"n\">1.5f</span>"));
	assert_non_null(strstr(b.s, "<span class=\"s\">&quot;C&quot;</span>"));
	assert_non_null(strstr(b.s, "<span class=\"c\">// a &lt;comment&gt; &amp; more</span>"));
	assert_non_null(strstr(b.s, "<span class=\"l\">/*@launch\nk&lt;&lt;&lt;1, 32&gt;&gt;&gt;"));
	assert_non_null(strstr(b.s, "threadIdx</span>.x &lt; n"));
	for (size_t i = 0; i < N_HOSTILE; i++) {
		/* in code, in a comment, in a string, unterminated */
		static const char *const wrap[][2] = { { "", "" }, { "// ", "\n" }, { "/* ", " */" },
						       { "\"", "\"" }, { "/* ", "" }, { "'", "" } };
		for (size_t f = 0; f < sizeof(wrap) / sizeof(wrap[0]); f++) {
			char in[256];
			snprintf(in, sizeof(in), "%s%s%s", wrap[f][0], hostile[i], wrap[f][1]);
			buf_reset(&b);
			html_highlight_cuda(&b, in, strlen(in));
			assert_inert(b.s, "highlight");
		}
	}
	buf_release(&b);
}

static void test_markdown(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	html_markdown(&b, "Use **float4** and `__ldg`", 26);
	assert_non_null(strstr(b.s, "<strong>float4</strong>"));
	assert_non_null(strstr(b.s, "<code>__ldg</code>"));
	for (size_t i = 0; i < N_HOSTILE; i++) {
		buf_reset(&b);
		html_markdown(&b, hostile[i], strlen(hostile[i]));
		assert_inert(b.s, "markdown");
	}
	/* GFM pipe tables, which cmark lacks: cells go through cmark too */
	static const char table[] = "| a | n |\n|---|--:|\n| **x** | 1 |\n"
				    "| <img src=x onerror=alert(1)> | 2 |\n\nafter\n";
	buf_reset(&b);
	html_markdown(&b, table, strlen(table));
	assert_non_null(strstr(b.s, "<th>a</th><th class=\"num\">n</th>"));
	assert_non_null(strstr(b.s, "<td><strong>x</strong></td><td class=\"num\">1</td>"));
	assert_non_null(strstr(b.s, "<p>after</p>"));
	assert_inert(b.s, "markdown table");
	static const char fenced[] = "```\n| a | b |\n|---|---|\n```\n";
	buf_reset(&b);
	html_markdown(&b, fenced, strlen(fenced));
	assert_null(strstr(b.s, "<table>"));
	buf_reset(&b);
	html_markdown(&b, "[x](javascript:alert(1))", 24);
	assert_null(strstr(b.s, "javascript:"));
	buf_release(&b);
}

static void test_svg(void **state)
{
	double x[] = { 1, 2, 3 }, y[] = { 0.5, 1.25, NAN };
	const char *labels[] = { hostile[0], hostile[1], hostile[3] };
	struct svg_series s = { hostile[1], x, y, 3, 1, 1, 0, labels };
	struct svg_chart c = { "t", hostile[0], hostile[1], hostile[3], 1, 1.0, "×" };
	struct buf b = BUF_INIT;

	(void)state;
	svg_lines(&b, &c, &s, 1);
	assert_inert(b.s, "svg_lines");
	assert_non_null(strstr(b.s, "<title id=\"t-t\">&lt;/script&gt;"));
	assert_non_null(strstr(b.s, "data-x=\"2\" data-y=\"1.25\""));
	assert_null(strstr(b.s, "data-x=\"3\"")); /* NaN: no point */
	buf_reset(&b);
	double v[] = { 3, 0 };
	const char *bl[] = { hostile[4], hostile[2] };
	svg_bars(&b, &c, bl, v, 2);
	assert_inert(b.s, "svg_bars");
	assert_non_null(strstr(b.s, "data-value=\"3\""));
	buf_release(&b);
}

static void test_md_report_escape(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	for (size_t i = 0; i < N_HOSTILE; i++) {
		buf_reset(&b);
		md_escape(&b, hostile[i]);
		assert_inert(b.s, "md_escape");
		assert_null(strchr(b.s, '<'));
	}
	buf_reset(&b);
	md_code(&b, "cuda", "a ``` b\n````x");
	assert_true(!strncmp(b.s, "`````cuda\n", 10)); /* fence longer than any run inside */
	buf_release(&b);
}

static void test_store_text(void **state)
{
	json_t *v;

	(void)state;
	v = store_site_text("ok\xff\xc3(\0x\xe2\x82\xac", 10);
	assert_non_null(v);
	assert_string_equal(json_string_value(v), "ok\xEF\xBF\xBD\xEF\xBF\xBD(\xEF\xBF\xBDx\xe2\x82\xac");
	json_decref(v);
	v = store_site_text("\xed\xa0\x80", 3); /* a surrogate is not UTF-8 */
	assert_string_equal(json_string_value(v), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
	json_decref(v);
}

static void test_paths(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	site_kernel_path(&b, "abcdef0123456789");
	assert_string_equal(b.s, "kernels/ab/abcdef0123456789.html");
	site_kernel_path(&b, "../../etc/passwd");
	assert_null(strstr(b.s, ".."));
	assert_int_equal(strlen(b.s), strlen("kernels/xx/.html") + 64);
	site_problem_slug(&b, "level1/023_Softmax");
	assert_string_equal(b.s, "level1-023_Softmax");
	site_problem_slug(&b, "../x/<y>");
	assert_string_equal(b.s, "_.-x-_y_");
	site_problem_slug(&b, "");
	assert_string_equal(b.s, "_");
	buf_release(&b);
}

static void test_format(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	fmt_int(&b, 1234567);
	assert_string_equal(b.s, "1,234,567");
	buf_reset(&b);
	fmt_ms(&b, 0.25);
	assert_string_equal(b.s, "250.0 µs");
	buf_reset(&b);
	fmt_pct(&b, 0.5);
	assert_string_equal(b.s, "50.0%");
	buf_reset(&b);
	fmt_num(&b, NAN);
	assert_string_equal(b.s, "—");
	buf_reset(&b);
	fmt_bytes(&b, 1536);
	assert_string_equal(b.s, "1.5 KiB");
	buf_release(&b);
}

static void test_report_from_store(void **state)
{
	struct store s;
	struct buf err = BUF_INIT, out = BUF_INIT;
	char path[] = "/tmp/kf-site-test-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	assert_int_equal(store_open(&s, path, STORE_CREATE, &err), 0);
	assert_int_equal(report_md_from_store(&s, "level1/001_X", &out, &err), 1);
	assert_int_equal(store_exec(&s, "INSERT INTO problems(id, level, number, name, spec,"
		" spec_sha256) VALUES('level1/001_X', 1, 1, 'X <b>', '{}', 'h')", &err), 0);
	assert_int_equal(report_md_from_store(&s, "level1/001_X", &out, &err), 0);
	assert_non_null(strstr(out.s, "# level1/001\\_X\n"));
	assert_non_null(strstr(out.s, "- name: X &lt;b&gt;\n"));
	assert_non_null(strstr(out.s, "No correct kernel."));
	store_close(&s);
	unlink(path);
	buf_release(&err);
	buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_highlight),
		cmocka_unit_test(test_markdown),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_md_report_escape),
		cmocka_unit_test(test_store_text),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_report_from_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
