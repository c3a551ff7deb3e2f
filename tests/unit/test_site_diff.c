/* Kernel diffs (site/diff.c, libgit2) against `diff -u`, their HTML
 * (escaped, +/- lines marked, bounded), and the Markdown of profiles and
 * chains of ideas (site/report_md.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/json.h"
#include "site/diff.h"
#include "site/profile.h"
#include "site/report_md.h"

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(s, f);
	fclose(f);
}

/* `diff -u` of a and b without its ---/+++ lines. */
static void diff_u(struct buf *out, const char *a, const char *b)
{
	const char *t = getenv("TMPDIR");
	char da[256], cmd[1024], line[4096];
	int n = 0;

	snprintf(da, sizeof(da), "%s/kf-diff-XXXXXX", t && *t ? t : "/tmp");
	assert_non_null(mkdtemp(da));
	snprintf(cmd, sizeof(cmd), "%s/a", da);
	write_file(cmd, a);
	snprintf(cmd, sizeof(cmd), "%s/b", da);
	write_file(cmd, b);
	snprintf(cmd, sizeof(cmd), "diff -u %s/a %s/b; rm -r %s", da, da, da);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (n++ >= 2)
			buf_adds(out, line);
	pclose(p);
}

static void test_against_diff_u(void **state)
{
	(void)state;
	static const char *const pairs[][2] = {
		{ "a\nb\nc\n", "a\nB\nc\n" },
		{ "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\ntwelve\n",
		  "one\nTWO\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n12\nthirteen\n" },
		{ "x\n", "x\ny\nz\n" },
		{ "keep\ndrop me\nkeep too\n", "keep\nkeep too\n" },
		{ "", "new\nfile\n" },
		{ "int a;\nint b;\n", "int a;\nint b;\nint c;" },   /* no newline at the end */
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		struct buf got = BUF_INIT, want = BUF_INIT, err = BUF_INIT;
		assert_int_equal(site_diff_text(&got, pairs[i][0], strlen(pairs[i][0]), pairs[i][1],
						strlen(pairs[i][1]), &err), 0);
		diff_u(&want, pairs[i][0], pairs[i][1]);
		if (strcmp(got.s ? got.s : "", want.s ? want.s : "")) {
			print_error("pair %zu:\n--- got\n%s--- diff -u\n%s", i, got.s, want.s);
			fail();
		}
		buf_release(&got);
		buf_release(&want);
		buf_release(&err);
	}
}

static void test_html(void **state)
{
	(void)state;
	const char *a = "int x;\n// old </script>\nreturn 0;\n";
	const char *b = "int x;\n// new <script>alert(1)</script> & \x1b[31m\nreturn 0;\n";
	struct buf h = BUF_INIT, err = BUF_INIT;
	struct site_diff_stat st;

	assert_int_equal(site_diff_html(&h, a, strlen(a), b, strlen(b), 400, &st, &err), 0);
	assert_int_equal(st.added, 1);
	assert_int_equal(st.removed, 1);
	assert_int_equal(st.lines, 5);   /* header, 2 context, - and + */
	assert_int_equal(st.shown, 5);
	assert_non_null(strstr(h.s, "<pre class=\"diff\"><code><span class=\"dh\">@@ -1,3 +1,3 @@</span>"));
	assert_non_null(strstr(h.s, "<del class=\"dd\">-// old &lt;/script&gt;</del>"));
	assert_non_null(strstr(h.s, "<ins class=\"da\">+// new &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#xFFFD;[31m</ins>"));
	assert_non_null(strstr(h.s, "<span class=\"dc\"> int x;</span>"));
	assert_null(strstr(h.s, "<script"));
	assert_null(strstr(h.s, "\x1b"));
	assert_null(strstr(h.s, "more lines"));

	/* equal sources: no diff at all */
	buf_reset(&h);
	assert_int_equal(site_diff_html(&h, a, strlen(a), a, strlen(a), 400, &st, &err), 0);
	assert_int_equal(st.lines, 0);
	assert_int_equal(h.len, 0);

	/* bounded: 1000 changed lines, 400 shown, the rest counted */
	struct buf x = BUF_INIT, y = BUF_INIT;
	for (int i = 0; i < 1000; i++) {
		buf_addf(&x, "line %d\n", i);
		buf_addf(&y, "LINE %d\n", i);
	}
	buf_reset(&h);
	assert_int_equal(site_diff_html(&h, x.s, x.len, y.s, y.len, 400, &st, &err), 0);
	assert_int_equal(st.lines, 2001);
	assert_int_equal(st.shown, 400);
	assert_non_null(strstr(h.s, "… 1601 more lines not shown"));
	buf_release(&x);
	buf_release(&y);
	buf_release(&h);
	buf_release(&err);
}

/* A block of three launches of two kernels: grouped by name, the costliest
 * first, with launches and shares; one name gives no such table. */
static void test_time_by_kernel(void **state)
{
	(void)state;
	json_t *p = json_loads("{\"limiter\": \"launch\", \"launches\": 3, \"kernel_ms\": 1.75,"
		" \"kernels\": [{\"name\": \"a\", \"duration_ms\": 0.5},"
		" {\"name\": \"b|c\", \"duration_ms\": 1.0}, {\"name\": \"a\", \"duration_ms\": 0.25}]}",
		0, NULL);
	struct buf o = BUF_INIT;

	assert_non_null(p);
	json_t *g = profile_by_name(p);
	assert_int_equal(json_array_size(g), 2);
	assert_string_equal(jget_str(json_array_get(g, 0), "name", ""), "b|c");
	assert_int_equal(jget_int(json_array_get(g, 0), "launches", 0), 1);
	assert_string_equal(jget_str(json_array_get(g, 0), "share", ""), "57.1%");
	assert_string_equal(jget_str(json_array_get(g, 1), "name", ""), "a");
	assert_int_equal(jget_int(json_array_get(g, 1), "launches", 0), 2);
	assert_string_equal(jget_str(json_array_get(g, 1), "time", ""), "750.0 µs");
	assert_string_equal(jget_str(json_array_get(g, 1), "share", ""), "42.9%");
	json_decref(g);
	json_t *v = profile_view(p);
	assert_true(json_is_true(json_object_get(v, "has_by_name")));
	assert_int_equal(json_array_size(json_object_get(v, "by_name")), 2);
	json_decref(v);
	report_md_profile(&o, p);
	const char *h = strstr(o.s, "Where the time goes, by kernel:");
	const char *r1 = strstr(o.s, "| b\\|c | 1 | 1 ms | 57.1% |");
	const char *r2 = strstr(o.s, "| a | 2 | 750.0 µs | 42.9% |");
	assert_non_null(h);
	assert_non_null(r1);
	assert_non_null(r2);
	assert_true(h < r1 && r1 < r2);
	json_decref(p);

	p = json_loads("{\"limiter\": \"memory\", \"kernels\": [{\"name\": \"a\", \"duration_ms\": 1},"
		       " {\"name\": \"a\", \"duration_ms\": 2}]}", 0, NULL);
	buf_reset(&o);
	report_md_profile(&o, p);
	assert_null(strstr(o.s, "Where the time goes"));
	v = profile_view(p);
	assert_null(json_object_get(v, "has_by_name"));
	json_decref(v);
	json_decref(p);
	buf_release(&o);
}

static void test_md_profile(void **state)
{
	(void)state;
	json_t *p = json_loads("{\"gpu_name\": \"G<b>\", \"limiter\": \"memory\", \"tool\": \"t\","
		" \"launches\": 2, \"kernel_ms\": 1.5, \"dram_read_bytes\": 1048576,"
		" \"dram_write_bytes\": null, \"dram_pct\": 81.25, \"l2_hit_pct\": 50,"
		" \"sm_pct\": 12.5, \"tensor_pct\": null, \"occupancy_pct\": 75,"
		" \"kernels\": [{\"name\": \"k|<img src=x>\", \"duration_ms\": 0.75, \"dram_pct\": 80,"
		" \"sm_pct\": 10, \"registers\": 32, \"shared_bytes\": 4096, \"block_threads\": 256,"
		" \"grid_blocks\": 1024, \"limiter\": \"memory\"}]}", 0, NULL);
	struct buf o = BUF_INIT;

	assert_non_null(p);
	report_md_profile(&o, p);
	assert_non_null(strstr(o.s, "- limiter: **memory**"));
	assert_non_null(strstr(o.s, "| DRAM read | 1.0 MiB |"));
	assert_non_null(strstr(o.s, "| DRAM write | — |"));
	assert_non_null(strstr(o.s, "| DRAM bandwidth, % of peak | 81.2% |") ||
			strstr(o.s, "| DRAM bandwidth, % of peak | 81.3% |"));
	assert_non_null(strstr(o.s, "| Tensor pipes, % of peak | — |"));
	assert_non_null(strstr(o.s, "| k\\|&lt;img src=x&gt; |"));
	assert_non_null(strstr(o.s, "| 256 × 1024 | memory |"));
	assert_null(strstr(o.s, "<img"));
	assert_null(strstr(o.s, "<b>"));
	buf_reset(&o);
	report_md_profile(&o, NULL);
	assert_string_equal(o.s, "No profile recorded.\n");
	json_decref(p);

	json_t *c = json_loads("[{\"id\": \"root\", \"round\": 1, \"kernel_hash\": \"aaaaaaaaaaaaaaaa\","
		" \"idea_text\": null, \"time_ms\": 2, \"eager_ms\": 2},"
		" {\"id\": \"child\", \"round\": 2, \"kernel_hash\": \"bbbbbbbbbbbbbbbb\","
		" \"idea_text\": \"tile | <script>\", \"time_ms\": 1, \"eager_ms\": 2}]", 0, NULL);
	buf_reset(&o);
	report_md_chain(&o, c);
	const char *r1 = strstr(o.s, "| 1 | 1 | root | aaaaaaaaaaaa | 1.00× | (no idea: a seed kernel) |");
	const char *r2 = strstr(o.s, "| 2 | 2 | child | bbbbbbbbbbbb | 2.00× | tile \\| &lt;script&gt; |");
	assert_non_null(r1);
	assert_non_null(r2);
	assert_true(r1 < r2);
	json_decref(c);
	buf_release(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_diff_u),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_md_profile),
		cmocka_unit_test(test_time_by_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
