/* kforge's own Mustache tests: hostile strings in HTML output, the partial
 * directory loader and its name checks, recursion and size bounds, error
 * positions, value formatting. Needs no external files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/json.h"
#include "core/mustache.h"

/* Renders tmpl with the JSON text data; returns the output (static buffer
 * reused) or NULL with the error in last_err. */
static struct buf last_err = BUF_INIT;
static struct buf last_out = BUF_INIT;

static const char *render_p(const char *tmpl, const char *data, const struct mustache_partials *p)
{
	struct mustache_tpl t;
	json_t *d = NULL;
	int ret;

	buf_reset(&last_err);
	buf_reset(&last_out);
	mustache_init(&t);
	if (data) {
		d = json_loads(data, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
		assert_non_null(d);
	}
	ret = mustache_compile(&t, tmpl, strlen(tmpl), &last_err);
	if (!ret)
		ret = mustache_render(&t, d, p, &last_out, &last_err);
	mustache_release(&t);
	json_decref(d);
	return ret ? NULL : last_out.s;
}

static const char *render(const char *tmpl, const char *data)
{
	return render_p(tmpl, data, NULL);
}

static void test_escape_hostile(void **state)
{
	(void)state;
	assert_string_equal(render("<p>{{x}}</p>", "{\"x\": \"</script><script>alert(1)</script>\"}"),
			    "<p>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</p>");
	assert_string_equal(render("{{x}}", "{\"x\": \"<img src=x onerror=alert(1)>\"}"),
			    "&lt;img src=x onerror=alert(1)&gt;");
	assert_string_equal(render("<a title=\"{{x}}\">", "{\"x\": \"\\\" onmouseover='a' &\"}"),
			    "<a title=\"&quot; onmouseover=&#39;a&#39; &amp;\">");
	/* data is never parsed as a template */
	assert_string_equal(render("{{x}}|{{{x}}}", "{\"x\": \"{{y}}\", \"y\": \"BAD\"}"),
			    "{{y}}|{{y}}");
	/* C0 controls other than \t \n \r, and DEL, become U+FFFD when escaped */
	assert_string_equal(render("[{{x}}]", "{\"x\": \"a\\u0000b\\u0001c\\u001bd\\u007fe\\tf\\ng\\rh\"}"),
			    "[a&#xFFFD;b&#xFFFD;c&#xFFFD;d&#xFFFD;e\tf\ng\rh]");
	/* unescaped output writes the bytes as they are */
	assert_string_equal(render("{{{x}}}{{&x}}", "{\"x\": \"<&>\"}"), "<&><&>");
	/* UTF-8 passes through */
	assert_string_equal(render("{{x}}", "{\"x\": \"h\\u00e9 \\u2603\"}"), "h\xc3\xa9 \xe2\x98\x83");
}

static void test_values(void **state)
{
	(void)state;
	assert_string_equal(render("{{a}} {{b}} {{c}} {{d}} {{e}} {{f}}",
				   "{\"a\": 1.21, \"b\": 3, \"c\": -0.5, \"d\": 0.1, \"e\": 9007199254740993, \"f\": 1e300}"),
			    "1.21 3 -0.5 0.1 9007199254740993 1e+300");
	assert_string_equal(render("{{t}} {{f}} [{{n}}] [{{o}}] [{{l}}]",
				   "{\"t\": true, \"f\": false, \"n\": null, \"o\": {}, \"l\": [1]}"),
			    "true false [] [] []");
	/* falsey: false, null, missing, [], ""; numbers are truthy, 0 too */
	assert_string_equal(render("{{#a}}A{{/a}}{{#b}}B{{/b}}{{#c}}C{{/c}}{{#d}}D{{/d}}{{#e}}E{{/e}}"
				   "{{#z}}Z{{/z}}{{#m}}M{{/m}}",
				   "{\"a\": false, \"b\": null, \"c\": [], \"d\": \"\", \"e\": 0, \"z\": \"0\"}"),
			    "EZ");
	assert_string_equal(render("{{^d}}empty{{/d}}", "{\"d\": \"\"}"), "empty");
	assert_string_equal(render("x{{a}}y", NULL), "xy");
	assert_string_equal(render("{{#l}}{{.}},{{/l}}", "{\"l\": [1, \"two\", 3.5]}"), "1,two,3.5,");
	assert_string_equal(render("{{a.b.c}}|{{#a}}{{b.c}}{{/a}}", "{\"a\": {\"b\": {\"c\": \"deep\"}}}"),
			    "deep|deep");
}

static void test_compile_once(void **state)
{
	struct mustache_tpl t;
	struct buf out = BUF_INIT, err = BUF_INIT;
	json_t *d1 = json_pack("{s:s}", "n", "one"), *d2 = json_pack("{s:s}", "n", "two");
	const char *src = "<{{n}}>";

	(void)state;
	mustache_init(&t);
	assert_int_equal(mustache_compile(&t, src, strlen(src), &err), 0);
	assert_int_equal(mustache_render(&t, d1, NULL, &out, &err), 0);
	assert_int_equal(mustache_render(&t, d2, NULL, &out, &err), 0);
	assert_string_equal(out.s, "<one><two>");
	mustache_release(&t);
	mustache_release(&t);   /* released twice is harmless */
	json_decref(d1);
	json_decref(d2);
	buf_release(&out);
	buf_release(&err);
}

static void expect_error(const char *tmpl, const char *msg)
{
	const char *r = render(tmpl, "{}");

	if (r)
		fail_msg("'%s' compiled and rendered '%s'", tmpl, r);
	if (!strstr(last_err.s, msg))
		fail_msg("'%s': error '%s' lacks '%s'", tmpl, last_err.s, msg);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("a\nb {{#x}}\nc", "template:2:3: unclosed section 'x'");
	expect_error("{{#a}}\n  {{/b}}", "template:2:3: closing tag 'b' does not match 'a' opened at template:1:1");
	expect_error("x\n\n  y {{z", "template:3:5: unclosed tag");
	expect_error("{{{z}}", "template:1:1: unclosed tag");
	expect_error("ok\n{{=<% =}}", "template:2:1: bad delimiter change");
	expect_error("{{=a b c=}}", "bad delimiter change");
	expect_error("{{/x}}", "template:1:1: closing tag 'x' has no open section");
	expect_error("a {{}}", "template:1:3: empty tag");
	expect_error("{{a b}}", "whitespace");
	expect_error("{{<p}}{{$b}}x{{/p}}", "closing tag 'p' does not match 'b'");
	/* custom delimiters are used for the error position too */
	expect_error("{{=<% %>=}}\n<%#s%>", "template:2:1: unclosed section 's'");
}

static void test_bounds(void **state)
{
	struct mustache_tpl t;
	struct buf b = BUF_INIT, err = BUF_INIT, out = BUF_INIT;
	json_t *d;

	(void)state;
	mustache_init(&t);
	/* template size */
	buf_grow(&b, MUSTACHE_MAX_TEMPLATE + 1);
	memset(b.s, 'x', MUSTACHE_MAX_TEMPLATE + 1);
	assert_int_equal(mustache_compile(&t, b.s, MUSTACHE_MAX_TEMPLATE + 1, &err), -1);
	assert_non_null(strstr(err.s, "over the limit"));
	/* nesting depth */
	buf_reset(&b);
	for (int i = 0; i < MUSTACHE_MAX_NESTING + 1; i++)
		buf_adds(&b, "{{#a}}");
	for (int i = 0; i < MUSTACHE_MAX_NESTING + 1; i++)
		buf_adds(&b, "{{/a}}");
	assert_int_equal(mustache_compile(&t, b.s, b.len, &err), -1);
	assert_non_null(strstr(err.s, "nested too deeply"));
	/* output cap: 100 items of 10 bytes against a 500 byte cap */
	buf_reset(&err);
	assert_int_equal(mustache_compile(&t, "{{#l}}0123456789{{/l}}", 22, &err), 0);
	d = json_array();
	for (int i = 0; i < 100; i++)
		json_array_append_new(d, json_true());
	d = json_pack("{s:o}", "l", d);
	assert_int_equal(mustache_render_capped(&t, d, NULL, &out, 500, &err), -1);
	assert_non_null(strstr(err.s, "over the limit of 500 bytes"));
	assert_true(out.len <= 500);
	buf_reset(&out);
	assert_int_equal(mustache_render_capped(&t, d, NULL, &out, 1000, &err), 0);
	assert_int_equal(out.len, 1000);
	json_decref(d);
	mustache_release(&t);
	buf_release(&b);
	buf_release(&err);
	buf_release(&out);
}

static char tmpdir[64];

static void put_file(const char *rel, const char *text)
{
	struct buf p = BUF_INIT, err = BUF_INIT;

	buf_addf(&p, "%s/%s", tmpdir, rel);
	if (write_file_atomic(p.s, text, strlen(text), &err) < 0)
		fail_msg("%s", err.s);
	buf_release(&p);
	buf_release(&err);
}

static int setup_dir(void **state)
{
	struct buf p = BUF_INIT, err = BUF_INIT;

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/kf-mustache.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	buf_addf(&p, "%s/parts/sub", tmpdir);
	if (mkdir_p(p.s, &err) < 0)
		return -1;
	put_file("secret.mustache", "SECRET");
	put_file("parts/item.mustache", "<li>{{name}}</li>\n");
	put_file("parts/sub/list.mustache", "<ul>\n  {{#items}}\n  {{>item}}\n  {{/items}}\n</ul>\n");
	put_file("parts/self.mustache", "x{{>self}}");
	put_file("parts/broken.mustache", "line one\n  {{#open}}\n");
	put_file("parts/layout.mustache", "<title>{{$title}}Default{{/title}}</title>");
	buf_release(&p);
	buf_release(&err);
	return 0;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_partials_dir(void **state)
{
	struct mustache_partials p;
	struct buf d = BUF_INIT;
	const char *items = "{\"items\": [{\"name\": \"a<b\"}, {\"name\": \"c\"}]}";

	(void)state;
	buf_addf(&d, "%s/parts", tmpdir);
	mustache_partials_dir(&p, d.s);
	assert_string_equal(render_p("{{>sub/list}}", items, &p),
			    "<ul>\n  <li>a&lt;b</li>\n  <li>c</li>\n</ul>\n");
	/* cached: the same result a second time */
	assert_string_equal(render_p("  {{>item}}\n", "{\"name\": \"z\"}", &p), "  <li>z</li>\n");
	assert_string_equal(render_p("[{{>missing}}]", "{}", &p), "[]");
	assert_string_equal(render_p("{{<layout}}{{$title}}Mine{{/title}}{{/layout}}", "{}", &p),
			    "<title>Mine</title>");
	/* names that could leave the directory are refused */
	assert_null(render_p("{{>../secret}}", "{}", &p));
	assert_non_null(strstr(last_err.s, "refused"));
	assert_null(render_p("{{>sub/../../secret}}", "{}", &p));
	assert_null(render_p("{{>/etc/passwd}}", "{}", &p));
	assert_null(render_p("{{>a\\b}}", "{}", &p));
	assert_false(mustache_partial_name_ok(".."));
	assert_false(mustache_partial_name_ok("a..b"));
	assert_false(mustache_partial_name_ok("a b"));
	assert_false(mustache_partial_name_ok(""));
	assert_true(mustache_partial_name_ok("site/kernel-page_v2.html"));
	/* recursion is bounded */
	assert_null(render_p("{{>self}}", "{}", &p));
	assert_non_null(strstr(last_err.s, "nested deeper than 64"));
	/* a broken partial names its file, line and column */
	assert_null(render_p("{{>broken}}", "{}", &p));
	assert_non_null(strstr(last_err.s, "parts/broken.mustache:2:3: unclosed section 'open'"));
	mustache_partials_release(&p);
	buf_release(&d);
}

static int from_obj(void *ud, const char *name, struct buf *text, int *found, struct buf *err)
{
	const char *s = jget_str(ud, name, NULL);

	if (!strcmp(name, "fail"))
		return kf_err(err, "cannot load");
	*found = s != NULL;
	if (s)
		buf_adds(text, s);
	return 0;
}

static void test_partials_callback(void **state)
{
	struct mustache_partials p;
	json_t *src = json_pack("{s:s, s:s}", "row", "| {{.}}\n", "rec", "{{#n}}({{>rec}}){{/n}}");

	(void)state;
	mustache_partials_init(&p, from_obj, src);
	/* standalone partials are indented line by line; data is not */
	assert_string_equal(render_p("t:\n    {{>row}}\nend\n", "\"a\\nb\"", &p), "t:\n    | a\nb\nend\n");
	assert_string_equal(render_p("{{#l}}\n  {{>row}}\n{{/l}}", "{\"l\": [1, 2]}", &p), "  | 1\n  | 2\n");
	/* recursion that ends is fine */
	assert_string_equal(render_p("{{>rec}}", "{\"n\": {\"n\": {\"n\": false}}}", &p), "(())");
	/* sections inside recursive partials are bounded as a whole */
	{
		struct buf deep = BUF_INIT;
		json_t *src2;
		struct mustache_partials p2;
		for (int i = 0; i < 200; i++)
			buf_adds(&deep, "{{#a}}");
		buf_adds(&deep, "{{>deep}}");
		for (int i = 0; i < 200; i++)
			buf_adds(&deep, "{{/a}}");
		src2 = json_pack("{s:s}", "deep", deep.s);
		mustache_partials_init(&p2, from_obj, src2);
		assert_null(render_p("{{>deep}}", "{\"a\": true}", &p2));
		assert_non_null(strstr(last_err.s, "nested deeper than 2048"));
		mustache_partials_release(&p2);
		json_decref(src2);
		buf_release(&deep);
	}
	assert_null(render_p("{{>fail}}", "{}", &p));
	assert_non_null(strstr(last_err.s, "partial 'fail': cannot load"));
	mustache_partials_release(&p);
	json_decref(src);
}

/* Random templates from mustache-heavy bytes: compiling and rendering
 * must either work or fail with a positioned message, never crash (run
 * under SANITIZE=address,undefined and valgrind). */
static void test_random_templates(void **state)
{
	static const char alpha[] = "{{}}#^/>$<=!&.ab \n\t%";
	json_t *parts = json_pack("{s:s, s:s}", "a", "{{>b}}{{$a}}x{{/a}}", "b", "{{<a}}{{$a}}y{{/a}}{{/a}}");
	json_t *data = json_pack("{s:[i,i], s:{s:s}}", "a", 1, 2, "b", "a", "<&>");
	struct mustache_partials p;
	unsigned seed = 12345;
	int compiled = 0;

	(void)state;
	mustache_partials_init(&p, from_obj, parts);
	for (int i = 0; i < 20000; i++) {
		char tmpl[80];
		int n = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 79;
		struct mustache_tpl t;
		struct buf out = BUF_INIT, err = BUF_INIT;

		for (int k = 0; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			tmpl[k] = alpha[(seed >> 16) % (sizeof(alpha) - 1)];
		}
		tmpl[n] = 0;
		mustache_init(&t);
		if (mustache_compile(&t, tmpl, (size_t)n, &err) == 0) {
			compiled++;
			if (mustache_render_capped(&t, data, &p, &out, 1 << 16, &err) < 0 && !err.len)
				fail_msg("render of '%s' failed without a message", tmpl);
		} else if (!strstr(err.s, "template:")) {
			fail_msg("compile error for '%s' has no position: %s", tmpl, err.s);
		}
		mustache_release(&t);
		buf_release(&out);
		buf_release(&err);
	}
	assert_true(compiled > 100);
	mustache_partials_release(&p);
	json_decref(parts);
	json_decref(data);
}

/* mustache_data_parse: any JSON value is a root context, as in the spec
 * (jansson's default decoder takes only objects and arrays). */
static const char *render_data(const char *tmpl, const char *data)
{
	struct mustache_tpl t;
	json_t *d;
	int ret;

	buf_reset(&last_err);
	buf_reset(&last_out);
	d = mustache_data_parse(data, strlen(data), 1 << 20, &last_err);
	if (!d)
		return NULL;
	mustache_init(&t);
	ret = mustache_compile(&t, tmpl, strlen(tmpl), &last_err);
	if (!ret)
		ret = mustache_render(&t, d, NULL, &last_out, &last_err);
	mustache_release(&t);
	json_decref(d);
	return ret ? NULL : last_out.s;
}

static void test_data_any_value(void **state)
{
	const char *it = "{{.}}|{{#.}}<{{.}}>{{/.}}|{{^.}}none{{/.}}";

	(void)state;
	assert_string_equal(render_data("Hello, {{.}}!", "\"world\""), "Hello, world!");
	assert_string_equal(render_data(it, "\"a&b\""), "a&amp;b|<a&amp;b>|");
	assert_string_equal(render_data(it, "42"), "42|<42>|");
	assert_string_equal(render_data(it, "0.5"), "0.5|<0.5>|");
	assert_string_equal(render_data(it, "true"), "true|<true>|");
	assert_string_equal(render_data(it, "false"), "false||none");
	assert_string_equal(render_data(it, "null"), "||none");
	assert_string_equal(render_data(it, "[1, \"x\", [2]]"), "|<1><x><>|");
	assert_string_equal(render_data("{{#.}}{{n}},{{/.}}", "[{\"n\": 1}, {\"n\": 2}]"), "1,2,");
	assert_string_equal(render_data("{{a}}", "{\"a\": \"obj\"}"), "obj");
	assert_string_equal(render_data("[{{name}}]", "\"no names in a string\""), "[]");
	/* still JSON, still bounded, duplicates still refused */
	assert_null(render_data("x", "{\"a\": 1, \"a\": 2}"));
	assert_non_null(strstr(last_err.s, "duplicate"));
	assert_null(render_data("x", "\"a\" \"b\""));
	assert_null(render_data("x", ""));
	assert_null(mustache_data_parse("[1]", 3, 2, &last_err));
	assert_non_null(strstr(last_err.s, "over the limit"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_hostile),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_compile_once),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test_setup_teardown(test_partials_dir, setup_dir, teardown_dir),
		cmocka_unit_test(test_partials_callback),
		cmocka_unit_test(test_random_templates),
		cmocka_unit_test(test_data_any_value),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL);

	buf_release(&last_err);
	buf_release(&last_out);
	return ret;
}
