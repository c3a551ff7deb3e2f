/* Runs the official Mustache spec, vendored in tests/fixtures/mustache-spec
 * (core modules and ~inheritance; lambdas cannot be JSON data). One cmocka
 * test per spec file, every .json file there; the required modules must
 * be there. Every failing case is reported with its template, expected
 * and actual output, and fails the file's test. A missing directory is a
 * failure, never a skip. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/mustache.h"

/* $KF_ROOT/tests/fixtures/mustache-spec (run-tests.sh sets KF_ROOT), else
 * the same path from the current directory (the repository root). */
static struct buf spec_path = BUF_INIT;

static const char *spec_dir(void)
{
	const char *root = getenv("KF_ROOT");

	if (!spec_path.len)
		buf_addf(&spec_path, "%s%stests/fixtures/mustache-spec", root && *root ? root : "",
			 root && *root ? "/" : "");
	return spec_path.s;
}

static int from_json(void *ud, const char *name, struct buf *text, int *found, struct buf *err)
{
	const char *s = jget_str(ud, name, NULL);

	(void)err;
	*found = s != NULL;
	if (s)
		buf_adds(text, s);
	return 0;
}

static void print_quoted(const char *label, const char *s)
{
	struct buf b = BUF_INIT;

	json_add_string(&b, s, strlen(s));
	printf("#   %-9s %s\n", label, b.s);
	buf_release(&b);
}

static void run_file(void **state)
{
	const char *file = *state;
	struct buf path = BUF_INIT, err = BUF_INIT;
	json_t *doc, *tests, *tc;
	size_t i;
	int pass = 0, fail = 0;

	buf_addf(&path, "%s/%s", spec_dir(), file);
	doc = json_load_file_bounded(path.s, 16u << 20, &err);
	if (!doc)
		fail_msg("%s", err.s);
	tests = json_object_get(doc, "tests");
	assert_true(json_is_array(tests));
	assert_true(json_array_size(tests) > 0);
	json_array_foreach(tests, i, tc) {
		struct mustache_tpl tpl;
		struct mustache_partials parts;
		struct buf out = BUF_INIT;
		const char *tmpl = jget_str(tc, "template", "");
		const char *want = jget_str(tc, "expected", "");
		int ok;

		buf_reset(&err);
		mustache_init(&tpl);
		mustache_partials_init(&parts, from_json, json_object_get(tc, "partials"));
		ok = mustache_compile(&tpl, tmpl, strlen(tmpl), &err) == 0 &&
		     mustache_render(&tpl, json_object_get(tc, "data"), &parts, &out, &err) == 0 &&
		     !strcmp(out.s, want);
		if (ok) {
			pass++;
		} else {
			fail++;
			printf("# FAIL %s: %s\n", file, jget_str(tc, "name", "?"));
			print_quoted("template", tmpl);
			print_quoted("expected", want);
			print_quoted("got", out.s);
			if (err.len)
				printf("#   error     %s\n", err.s);
		}
		buf_release(&out);
		mustache_partials_release(&parts);
		mustache_release(&tpl);
	}
	printf("# %s: %d/%d spec cases pass\n", file, pass, pass + fail);
	json_decref(doc);
	buf_release(&path);
	buf_release(&err);
	assert_int_equal(fail, 0);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every one of these must be there and pass; any other file there (a
 * module added to the vendored copy later) is run too. */
static const char *const required[] = {
	"comments.json", "delimiters.json", "interpolation.json", "inverted.json",
	"partials.json", "sections.json", "~inheritance.json",
};
#define NREQ (sizeof(required) / sizeof(required[0]))

int main(void)
{
	DIR *d = opendir(spec_dir());
	struct dirent *de;
	char *names[64];
	struct CMUnitTest tests[64];
	size_t n = 0;
	int ret;

	if (!d) {
		printf("1..1\nnot ok 1 - the vendored mustache spec is missing: %s\n", spec_dir());
		buf_release(&spec_path);
		return 1;
	}
	for (size_t i = 0; i < NREQ; i++)
		names[n++] = strdup(required[i]);
	while ((de = readdir(d)) && n < 64) {
		size_t len = strlen(de->d_name), i;
		if (len < 6 || strcmp(de->d_name + len - 5, ".json"))
			continue;
		for (i = 0; i < NREQ && strcmp(required[i], de->d_name); i++)
			;
		if (i == NREQ)
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_names);
	for (size_t i = 0; i < n; i++) {
		memset(&tests[i], 0, sizeof(tests[i]));
		tests[i].name = names[i];
		tests[i].test_func = run_file;
		tests[i].initial_state = names[i];
	}
	ret = _cmocka_run_group_tests("mustache_spec", tests, n, NULL, NULL);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	buf_release(&spec_path);
	return ret;
}
