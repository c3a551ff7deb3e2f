/* dataset/: the tarball path rule, the bounds on reading a tarball, the
 * export of an empty store, and the refusals of pack's arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <archive_entry.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/json.h"
#include "store/store.h"
#include "store/store_export.h"
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

static struct archive_entry *entry(const char *name, int64_t size)
{
	struct archive_entry *e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_size(e, size);
	return e;
}

/* One entry through fresh limits: 0 or -1, the message in err. */
static int one(int64_t archive_bytes, int64_t cap, struct archive_entry *e, struct buf *err)
{
	struct ds_limits l;
	int r;
	ds_limits_init(&l, archive_bytes, cap);
	buf_reset(err);
	r = ds_limits_entry(&l, e, archive_entry_pathname(e), err);
	archive_entry_free(e);
	return r;
}

static void test_limits(void **state)
{
	const int64_t cap = DATASET_MAX_EXTRACT;
	struct buf err = BUF_INIT;
	struct ds_limits l;
	struct archive_entry *e;
	char longname[DS_MAX_PATH + 2];

	(void)state;
	/* bytes: 200 times the tarball, at least 1 MiB, at most the cap */
	ds_limits_init(&l, 1000, cap);
	assert_int_equal(l.max_total, DS_EXPAND_FLOOR);
	ds_limits_init(&l, 1 << 20, cap);
	assert_int_equal(l.max_total, (int64_t)DS_EXPAND_RATIO << 20);
	ds_limits_init(&l, (int64_t)1 << 40, cap);
	assert_int_equal(l.max_total, cap);
	ds_limits_init(&l, INT64_MAX / 2, INT64_MAX);
	assert_int_equal(l.max_total, INT64_MAX);
	ds_limits_init(&l, 1 << 20, 5000);
	assert_int_equal(l.max_total, 5000);
	assert_int_equal(one(1 << 20, cap, entry("a", (int64_t)DS_EXPAND_RATIO << 20), &err), 0);
	assert_int_equal(one(1 << 20, cap, entry("a", ((int64_t)DS_EXPAND_RATIO << 20) + 1), &err), -1);
	assert_string_equal(err.s, "refused: a would take the extracted size over 209715200 bytes "
				   "(the bound for a tarball of 1048576 bytes: 200 times its size, "
				   "at least 1 MiB)");
	assert_int_equal(one(1 << 20, 5000, entry("a", 5001), &err), -1);
	assert_string_equal(err.s, "refused: a would take the extracted size over 5000 bytes");
	/* the total is over all entries */
	ds_limits_init(&l, 1000, cap);
	e = entry("a", DS_EXPAND_FLOOR / 2);
	assert_int_equal(ds_limits_entry(&l, e, "a", &err), 0);
	assert_int_equal(ds_limits_entry(&l, e, "b", &err), 0);
	archive_entry_set_size(e, 1);
	assert_int_equal(ds_limits_entry(&l, e, "c", &err), -1);
	archive_entry_free(e);
	/* one file: DATASET_MAX_ENTRY, whatever the other bounds */
	assert_int_equal(one((int64_t)1 << 40, INT64_MAX, entry("big", DATASET_MAX_ENTRY), &err), 0);
	assert_int_equal(one((int64_t)1 << 40, INT64_MAX, entry("big", DATASET_MAX_ENTRY + 1), &err), -1);
	assert_non_null(strstr(err.s, "refused: big has 17179869185 bytes (the limit is 17179869184 per file)"));
	/* sparse files, files without a size, negative sizes, long names */
	e = entry("holes", 1 << 20);
	archive_entry_sparse_add_entry(e, (1 << 20) - 1, 1);
	assert_int_equal(one(1 << 20, cap, e, &err), -1);
	assert_string_equal(err.s, "refused: holes is a sparse file");
	e = entry("nosize", 0);
	archive_entry_unset_size(e);
	assert_int_equal(one(1 << 20, cap, e, &err), -1);
	assert_string_equal(err.s, "refused: nosize has no size");
	e = entry("dir", 0);
	archive_entry_set_filetype(e, AE_IFDIR);
	archive_entry_unset_size(e);
	assert_int_equal(one(1 << 20, cap, e, &err), 0);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(one(1 << 20, cap, entry(longname, 0), &err), -1);
	assert_non_null(strstr(err.s, "an entry name of 1025 bytes"));
	longname[DS_MAX_PATH] = 0;
	assert_int_equal(one(1 << 20, cap, entry(longname, 0), &err), 0);
	/* entries, empty ones included: one per 16 bytes, at least 1000, at most DS_MAX_ENTRIES */
	ds_limits_init(&l, 100, cap);
	assert_int_equal(l.max_entries, 1000);
	ds_limits_init(&l, 160000, cap);
	assert_int_equal(l.max_entries, 10000);
	ds_limits_init(&l, (int64_t)1 << 40, INT64_MAX);
	assert_int_equal(l.max_entries, DS_MAX_ENTRIES);
	e = entry("empty", 0);
	for (int i = 0; i < DS_MAX_ENTRIES; i++)
		if (ds_limits_entry(&l, e, "empty", &err) < 0)
			fail_msg("entry %d: %s", i, err.s);
	assert_int_equal(ds_limits_entry(&l, e, "empty", &err), -1);
	assert_string_equal(err.s, "refused: more than 500000 entries");
	ds_limits_init(&l, 160000, cap);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(ds_limits_entry(&l, e, "empty", &err), 0);
	assert_int_equal(ds_limits_entry(&l, e, "empty", &err), -1);
	assert_string_equal(err.s, "refused: more than 10000 entries for a tarball of 160000 bytes "
				   "(one per 16 bytes)");
	archive_entry_free(e);
	buf_release(&err);
}

/* Reals: the shortest text that reads back to the same double (Python's
 * repr), always with a '.' or an exponent; the spliced trial arrays and
 * the canonical dump agree. */
static void test_fmt_real_shortest(void **state)
{
	static const struct {
		double v;
		const char *text;
	} c[] = {
		{ 0.0, "0.0" }, { 1.0, "1.0" }, { -1.0, "-1.0" }, { 0.1, "0.1" },
		{ 1.0 / 3, "0.3333333333333333" }, { 2.5e-7, "2.5e-7" }, { 1e-5, "1e-5" },
		{ 1e20, "1e20" }, { 1.5e300, "1.5e300" }, { -4.2e-300, "-4.2e-300" },
		{ 123456789.0, "123456789.0" }, { 0.33435085502260886, "0.33435085502260886" },
		{ 5e-324, "5e-324" }, { 1e100, "1e100" }, { 3.8798629999999998, "3.879863" },
		{ 5.9604644775390625e-8, "5.960464477539063e-8" },   /* a tie beside 2^-24 */
		{ 1e16, "1e16" }, { 1e15, "1000000000000000.0" }, { 0.0001, "0.0001" },
		{ 1.7976931348623157e308, "1.7976931348623157e308" }, { 12.0, "12.0" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct buf a = BUF_INIT, b = BUF_INIT;
		json_t *r = json_real(c[i].v);
		store_export_fmt_real(&a, c[i].v);
		json_add_canonical(&b, r);
		assert_string_equal(a.s, c[i].text);
		assert_string_equal(b.s, c[i].text);
		assert_true(strtod(a.s, NULL) == c[i].v);
		json_decref(r);
		buf_release(&a);
		buf_release(&b);
	}
}

/* The canonical dump is jansson's compact and indented layout, sorted. */
static void test_canonical_layout(void **state)
{
	json_t *v = json_pack("{s:[i,f,s,b,n,{}], s:{s:f}, s:[]}", "b", 1, 2.0, "x\"\n\xc3\xa9", 1,
			      "a", "z", 3.8798629999999998, "c");
	struct buf a = BUF_INIT, b = BUF_INIT, p = BUF_INIT, q = BUF_INIT;
	json_t *w = json_pack("{s:[i,s,b,n,{}], s:{s:i}, s:[]}", "b", 1, "x", 1, "a", "z", 3, "c");
	(void)state;
	json_add_canonical(&a, v);
	assert_string_equal(a.s, "{\"a\":{\"z\":3.879863},\"b\":[1,2.0,\"x\\\"\\n\xc3\xa9\",true,null,{}],"
				 "\"c\":[]}");
	/* without reals, byte for byte what jansson writes */
	json_add_canonical(&b, w);
	json_add_compact(&q, w);
	assert_string_equal(b.s, q.s);
	buf_reset(&q);
	json_add_canonical_pretty(&p, w);
	json_add_pretty(&q, w);
	assert_string_equal(p.s, q.s);
	json_decref(v);
	json_decref(w);
	buf_release(&a);
	buf_release(&b);
	buf_release(&p);
	buf_release(&q);
}

/* One JSON shape per field: the rules of docs/dataset.md on a spec. */
static void test_spec_shape(void **state)
{
	static const char *const in[] = {
		"{\"id\":\"a\",\"spec\":{\"init_args\":{\"kernel_size\":3,\"stride\":null,\"pad\":[1,2],"
		"\"bias\":true,\"scale\":2},\"scalars\":{\"alpha\":1},"
		"\"inputs\":[{\"shape\":[\"n\",11],\"dist\":{\"post\":\"softmax\",\"low\":-1,\"high\":1}}],"
		"\"outputs\":[{\"shape\":[11]}],"
		"\"attrs\":{\"graph\":[{\"dims\":1,\"value\":0.5},{\"dims\":[1,2],\"value\":\"-inf\"}]}},"
		"\"gpu_name\":\"\"}",
		"{\"id\":\"b\",\"spec\":{\"init_args\":{\"scale\":0.5}},\"gpu_name\":\"H100\"}",
	};
	static const char *const want[] = {
		"{\"gpu_name\":null,\"id\":\"a\",\"spec\":{\"attrs\":{\"graph\":[{\"dims\":[1],\"value\":\"0.5\"},"
		"{\"dims\":[1,2],\"value\":\"-inf\"}]},\"init_args\":{\"bias\":[true],\"kernel_size\":[3],"
		"\"pad\":[1,2],\"scale\":[2.0],\"stride\":null},\"inputs\":[{\"dist\":{\"high\":1.0,\"low\":-1.0,"
		"\"post\":[\"softmax\"]},\"shape\":[\"n\",\"11\"]}],\"outputs\":[{\"shape\":[\"11\"]}],"
		"\"scalars\":{\"alpha\":1.0}}}",
		"{\"gpu_name\":\"H100\",\"id\":\"b\",\"spec\":{\"init_args\":{\"scale\":[0.5]}}}",
	};
	json_t *rows[2], *reals = json_object();
	(void)state;
	for (int i = 0; i < 2; i++) {
		rows[i] = json_loads(in[i], 0, NULL);
		assert_non_null(rows[i]);
		ds_row_shape("problems", rows[i], NULL);
		ds_reals_collect(rows[i], reals);
	}
	for (int i = 0; i < 2; i++) {
		struct buf b = BUF_INIT;
		ds_row_shape("problems", rows[i], reals);
		json_add_canonical(&b, rows[i]);
		assert_string_equal(b.s, want[i]);
		buf_release(&b);
		json_decref(rows[i]);
	}
	json_decref(reals);
}

/* A profiles row: every field present and of its one type (a store
 * column is typeless: 2 in a REAL column, 3.0 or text in an INTEGER one). */
static void test_profile_shape(void **state)
{
	static const char in[] =
		"{\"eval_id\":\"e\",\"kernel_hash\":\"h\",\"problem_id\":\"p\",\"gpu_name\":\"G\","
		"\"limiter\":\"memory\",\"launches\":2.0,\"kernel_ms\":3,\"dram_read_bytes\":1024,"
		"\"dram_write_bytes\":\"x\",\"dram_pct\":80,\"l2_hit_pct\":null,\"sm_pct\":12.5,"
		"\"cost_ms\":100,\"tool\":\"t\",\"created_at\":\"c\","
		"\"kernels\":[{\"idx\":0,\"name\":\"k\",\"duration_ms\":1,\"registers\":32.0,"
		"\"shared_bytes\":1.5,\"limiter\":\"memory\"}]}";
	static const char want[] =
		"{\"cost_ms\":100.0,\"created_at\":\"c\",\"dram_pct\":80.0,\"dram_read_bytes\":1024,"
		"\"dram_write_bytes\":null,\"eval_id\":\"e\",\"gpu_name\":\"G\",\"kernel_hash\":\"h\","
		"\"kernel_ms\":3.0,\"kernels\":[{\"block_threads\":null,\"dram_pct\":null,"
		"\"dram_read_bytes\":null,\"dram_write_bytes\":null,\"duration_ms\":1.0,"
		"\"grid_blocks\":null,\"idx\":0,\"l2_hit_pct\":null,\"limiter\":\"memory\","
		"\"name\":\"k\",\"occupancy_pct\":null,\"registers\":32,\"shared_bytes\":null,"
		"\"sm_pct\":null,\"tensor_pct\":null}],\"l2_hit_pct\":null,\"launches\":2,"
		"\"limiter\":\"memory\",\"occupancy_pct\":null,\"problem_id\":\"p\",\"sm_pct\":12.5,"
		"\"tensor_pct\":null,\"tool\":\"t\"}";
	json_t *row = json_loads(in, 0, NULL), *bare = json_pack("{s:s}", "eval_id", "e");
	struct buf b = BUF_INIT;
	(void)state;
	assert_non_null(row);
	ds_row_shape("profiles", row, NULL);
	json_add_canonical(&b, row);
	assert_string_equal(b.s, want);
	/* no kernels at all: an empty list, not null */
	ds_row_shape("profiles", bare, NULL);
	assert_true(json_is_array(json_object_get(bare, "kernels")));
	assert_true(json_is_null(json_object_get(bare, "launches")));
	json_decref(row);
	json_decref(bare);
	buf_release(&b);
}

/* The Arrow type of a file's rows as the card's dataset_info features. */
static void test_features_yaml(void **state)
{
	static const char *const rows[] = {
		"{\"a\":1,\"l\":[],\"o\":{\"x\":null},\"n\":null,\"t\":[{\"k\":true}],\"e\":{}}",
		"{\"a\":2.5,\"l\":[[1]],\"o\":{\"y\":\"s\"},\"t\":[],\"e\":{},\"q\\\"\":[\"x\"]}",
	};
	json_t *t = NULL, *bad = NULL;
	struct buf b = BUF_INIT;
	(void)state;
	for (int i = 0; i < 2; i++) {
		json_t *r = json_loads(rows[i], 0, NULL);
		assert_non_null(r);
		ds_type_row(&t, r);
		json_decref(r);
	}
	assert_int_equal(ds_features_yaml(&b, t, 2), 0);
	assert_string_equal(b.s,
		"  features:\n"
		"  - name: \"a\"\n    dtype: float64\n"
		"  - name: \"e\"\n    struct: []\n"
		"  - name: \"l\"\n    sequence:\n      sequence: int64\n"
		"  - name: \"n\"\n    dtype: 'null'\n"
		"  - name: \"o\"\n    struct:\n    - name: \"x\"\n      dtype: 'null'\n"
		"    - name: \"y\"\n      dtype: string\n"
		"  - name: \"q\\\"\"\n    sequence: string\n"
		"  - name: \"t\"\n    list:\n    - name: \"k\"\n      dtype: bool\n");
	/* a string and a number in one field: no features */
	{
		json_t *r1 = json_pack("{s:s}", "a", "x"), *r2 = json_pack("{s:[i]}", "a", 1);
		ds_type_row(&bad, r1);
		ds_type_row(&bad, r2);
		buf_reset(&b);
		assert_int_equal(ds_features_yaml(&b, bad, 2), -1);
		json_decref(r1);
		json_decref(r2);
	}
	json_decref(t);
	json_decref(bad);
	buf_release(&b);
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
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_fmt_real_shortest),
		cmocka_unit_test(test_canonical_layout),
		cmocka_unit_test(test_spec_shape),
		cmocka_unit_test(test_profile_shape),
		cmocka_unit_test(test_features_yaml),
		cmocka_unit_test(test_pack_empty_and_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
