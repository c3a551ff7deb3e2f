/* dataset/: the tarball path rule, the export of an empty store, and the
 * refusals of pack's arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/store.h"
#include "core/store_export.h"
#include "dataset/dataset.h"
#include "dataset/ds_int.h"

static void test_safe_path(void **state)
{
	static const char *const good[] = { "README.md", "data/x.jsonl", "kernels/level1/001_ReLU/ab.cu",
					    "a/b/c", "a..b", "..a", NULL };
	static const char *const bad[] = { "", "/etc/passwd", "..", "../x", "a/../b", "a/..", "./a",
					   "a/./b", "a//b", "a/", "a\\b", "a\nb", "caf\xc3\xa9", NULL };
	(void)state;
	for (int i = 0; good[i]; i++)
		assert_true(ds_safe_path(good[i]));
	for (int i = 0; bad[i]; i++)
		assert_false(ds_safe_path(bad[i]));
}

/* The spliced trial arrays must read exactly as jansson writes reals. */
static void test_fmt_real_matches_jansson(void **state)
{
	static const double v[] = { 0.0, 1.0, -1.0, 0.1, 1.0 / 3, 2.5e-7, 1e-5, 1e20, 1.5e300,
				    -4.2e-300, 123456789.0, 0.33435085502260886, 5e-324, 1e100 };
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct buf a = BUF_INIT, b = BUF_INIT;
		json_t *r = json_real(v[i]);
		store_export_fmt_real(&a, v[i]);
		json_add_compact(&b, r);
		assert_string_equal(a.s, b.s);
		json_decref(r);
		buf_release(&a);
		buf_release(&b);
	}
}

static void test_pack_empty_and_bad_args(void **state)
{
	char dir[] = "/tmp/kforge-ds-unit.XXXXXX";
	struct buf db = BUF_INIT, out = BUF_INIT, err = BUF_INIT, rep = BUF_INIT;
	struct store s;
	struct pack_result r;
	struct verify_summary sum;
	struct pack_opts o;
	(void)state;

	assert_non_null(mkdtemp(dir));
	buf_addf(&db, "%s/k.db", dir);
	buf_addf(&out, "%s/dist", dir);
	assert_int_equal(store_open(&s, db.s, STORE_CREATE, &err), 0);
	store_close(&s);
	memset(&o, 0, sizeof(o));
	o.db_path = db.s;
	o.out_dir = out.s;
	o.name = "t";
	o.license = "mit";
	o.mtime = 0;
	pack_result_init(&r);
	o.version = "1.0";
	assert_int_equal(dataset_pack(&o, &r, &err), -1);
	assert_non_null(strstr(err.s, "not X.Y.Z"));
	o.version = "1.0.0";
	o.name = "a/b";
	assert_int_equal(dataset_pack(&o, &r, &err), -1);
	o.name = "t";
	assert_int_equal(dataset_pack(&o, &r, &err), 0);
	assert_true(r.bytes > 0);
	assert_int_equal(json_integer_value(json_object_get(r.counts, "sft.jsonl")), 0);
	assert_int_equal(dataset_verify(r.path.s, &rep, &sum, &err), 0);
	assert_true(sum.files >= 18);
	assert_int_equal(sum.lines, 0);
	pack_result_release(&r);
	{
		char cmd[256];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	buf_release(&db);
	buf_release(&out);
	buf_release(&err);
	buf_release(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_safe_path),
		cmocka_unit_test(test_fmt_real_matches_jansson),
		cmocka_unit_test(test_pack_empty_and_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
