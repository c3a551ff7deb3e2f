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
#include "core/store.h"
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
		cmocka_unit_test(test_pack_empty_and_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
