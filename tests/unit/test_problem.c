/* Problem specs: every committed spec loads; malformed specs fail with an
 * error naming the file and the field; lookups, memory plan, roofline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "problem/inputs.h"
#include "problem/problem.h"

static const char *root(void)
{
	const char *r = getenv("KF_ROOT");
	return r ? r : ".";
}

static void test_all_specs_load(void **state)
{
	char **dirs;
	int n, loaded = 0, prev = 0;
	struct buf err = BUF_INIT;
	(void)state;

	assert_int_equal(problem_list_dirs(root(), 1, &dirs, &n, &err), 0);
	assert_true(n >= 42);
	for (int i = 0; i < n; i++) {
		struct problem p;
		const char *base = strrchr(dirs[i], '/') + 1;
		problem_init(&p);
		if (problem_load(&p, dirs[i], &err) < 0)
			fail_msg("%s", err.s);
		/* the directory is the id; the number matches file name and dir */
		assert_string_equal(p.id + strlen("level1/"), base);
		assert_int_equal(atoi(base), p.number);
		assert_int_equal(atoi(p.kernelbench_file), p.number);
		assert_non_null(strstr(p.reference_src, "/*@launch"));
		assert_non_null(strstr(p.torch_text, "class Model"));
		assert_true(p.n_in >= 1 && p.n_out >= 1);
		assert_true(p.min_bytes > 0);
		{
			/* the struct keeps the spec's bytes as read (the store's copy) */
			struct buf t = BUF_INIT;
			assert_int_equal(problem_read_spec(dirs[i], &t, NULL, &err), 0);
			assert_int_equal(p.spec_len, t.len);
			assert_memory_equal(p.spec_text, t.s, t.len);
			buf_release(&t);
		}
		assert_true(prev < p.number);
		prev = p.number;
		problem_release(&p);
		loaded++;
		free(dirs[i]);
	}
	free(dirs);
	assert_int_equal(loaded, n);
	buf_release(&err);
}

static const char *good =
	"{\"id\":\"level1/901_T\",\"level\":1,\"number\":901,\"name\":\"T\","
	"\"kernelbench_file\":\"901_T.py\",\"family\":\"elementwise\",\"operation\":\"relu\","
	"\"sizes\":{\"n\":4,\"m\":3},\"scalars\":{\"alpha\":0.5},\"inputs\":["
	"{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],"
	"\"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1}}],"
	"\"outputs\":[{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"]}],"
	"\"tolerance\":\"fp32\",\"flops\":12,\"min_bytes\":96,\"attrs\":{\"op\":\"relu\"}}";

/* Replaces the first `from` in good with `to`. */
static char *mutate(const char *from, const char *to)
{
	const char *at = strstr(good, from);
	char *s;
	assert_non_null(at);
	s = malloc(strlen(good) + strlen(to) + 1);
	memcpy(s, good, (size_t)(at - good));
	strcpy(s + (at - good), to);
	strcat(s, at + strlen(from));
	return s;
}

/* Writes spec into a fresh problem directory and loads it; returns the error. */
static int load_dir(const char *spec, const char *torch, char *dir_out, struct buf *err)
{
	char tmpl[] = "/tmp/kf-problem-XXXXXX";
	char path[256], pdir[128];
	struct problem p;
	int rc;
	FILE *f;

	assert_non_null(mkdtemp(tmpl));
	snprintf(pdir, sizeof(pdir), "%s/901_T", tmpl);
	assert_int_equal(mkdir(pdir, 0755), 0);
	strcpy(dir_out, pdir);
	snprintf(path, sizeof(path), "%s/spec.json", pdir);
	f = fopen(path, "w");
	fputs(spec, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/reference.py", pdir);
	f = fopen(path, "w");
	fputs(torch ? torch : "class Model: pass\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/reference.cu", pdir);
	f = fopen(path, "w");
	fputs("/*@launch\n@*/\n", f);
	fclose(f);
	problem_init(&p);
	rc = problem_load(&p, pdir, err);
	problem_release(&p);
	return rc;
}

static void cleanup(const char *dir)
{
	char cmd[300];
	/* the fresh parent of the problem directory */
	snprintf(cmd, sizeof(cmd), "rm -rf '%.*s'", (int)(strrchr(dir, '/') - dir), dir);
	assert_int_equal(system(cmd), 0);
}

/* The good spec with fields added after min_bytes ("" none), loaded into
 * p from a fresh directory (dir, for cleanup). */
static void load_with(const char *fields, struct problem *p, char *dir)
{
	char add[256];
	char *spec;
	struct buf err = BUF_INIT;

	snprintf(add, sizeof(add), "\"min_bytes\":96,%s", fields);
	spec = mutate("\"min_bytes\":96,", add);
	assert_int_equal(load_dir(spec, NULL, dir, &err), 0);
	problem_init(p);
	assert_int_equal(problem_load(p, dir, &err), 0);
	free(spec);
	buf_release(&err);
}

static void expect_bad(const char *from, const char *to, const char *field, const char *what)
{
	char *spec = mutate(from, to), dir[64];
	struct buf err = BUF_INIT;

	assert_int_equal(load_dir(spec, NULL, dir, &err), -1);
	if (!strstr(err.s, "spec.json") || !strstr(err.s, field) || (what && !strstr(err.s, what)))
		fail_msg("error \"%s\" does not name spec.json, %s and %s", err.s, field,
			 what ? what : "");
	cleanup(dir);
	free(spec);
	buf_release(&err);
}

static void test_good(void **state)
{
	struct problem p;
	struct buf err = BUF_INIT, detail = BUF_INIT;
	char dir[64];
	long long v;
	double d;
	(void)state;

	assert_int_equal(load_dir(good, NULL, dir, &err), 0);
	problem_init(&p);
	assert_int_equal(problem_load(&p, dir, &err), 0);
	assert_int_equal(p.n_in, 1);
	assert_int_equal(p.n_out, 1);
	assert_int_equal(p.t[0].numel, 12);
	assert_int_equal(p.t[1].bytes, 48);
	assert_int_equal(problem_size(&p, "m", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(problem_size(&p, "q", &v), -1);
	assert_int_equal(problem_scalar(&p, "alpha", &d), 0);
	assert_true(d == 0.5);
	assert_int_equal(problem_tensor_index(&p, "y"), 1);
	assert_true(p.atol == 1e-4 && p.rtol == 1e-4);
	/* x + y_ref + y_cand + 3 buffers * 2 guards + flush */
	assert_int_equal(problem_memory_plan(&p, 1000, &detail),
			 48 + 48 + 48 + 6 * PROBLEM_GUARD_BYTES + 1000);
	assert_non_null(strstr(detail.s, "total"));
	/* 96 bytes at 1 GB/s = 96 ns; 12 flops at 1 GFLOP/s = 12 ns */
	assert_true(problem_roofline_ms(&p, 1, 1) > 0.0000959 && problem_roofline_ms(&p, 1, 1) < 0.0000961);
	problem_release(&p);
	cleanup(dir);
	buf_release(&err);
	buf_release(&detail);
}

static void test_missing_fields(void **state)
{
	(void)state;
	expect_bad("\"tolerance\":\"fp32\",", "", "tolerance", "missing");
	expect_bad("\"family\":\"elementwise\",", "", "family", "missing");
	expect_bad("\"dtype\":\"float32\",\"shape\":[\"n\",\"m\"],\"dist\"", "\"shape\":[\"n\",\"m\"],\"dist\"",
		   "inputs[0].dtype", "missing");
	expect_bad("\"dist\":{\"kind\":\"uniform\",\"low\":0,\"high\":1}", "\"dist\":{\"kind\":\"uniform\",\"low\":0}",
		   "inputs[0].dist.high", "missing");
	expect_bad("\"flops\":12,", "", "flops", "missing");
}

static void test_bad_values(void **state)
{
	(void)state;
	expect_bad("\"dtype\":\"float32\"", "\"dtype\":\"float33\"", "inputs[0].dtype", "float33");
	expect_bad("{\"name\":\"y\",\"dtype\":\"float32\"", "{\"name\":\"y\",\"dtype\":\"complex64\"",
		   "outputs[0].dtype", "complex64");
	expect_bad("\"kind\":\"uniform\"", "\"kind\":\"zipf\"", "inputs[0].dist.kind", "zipf");
	expect_bad("\"tolerance\":\"fp32\"", "\"tolerance\":\"loose\"", "tolerance", "loose");
	expect_bad("\"role\":\"input\"", "\"role\":\"weight\"", "inputs[0].role", "weight");
	expect_bad("\"level\":1", "\"level\":\"one\"", "level", "integer");
	expect_bad("\"min_bytes\":96,", "\"min_bytes\":96,\"wide_bound\":0,", "wide_bound", "[0.01, 100]");
	expect_bad("\"min_bytes\":96,", "\"min_bytes\":96,\"wide_bound\":1000,", "wide_bound", "[0.01, 100]");
	expect_bad("\"min_bytes\":96,", "\"min_bytes\":96,\"wide_bound\":\"4\",", "wide_bound", "number");
	expect_bad("\"min_bytes\":96,", "\"min_bytes\":96,\"floor_flops\":13,\"floor_flops_why\":\"w\",",
		   "floor_flops", "(0, flops]");
	expect_bad("\"min_bytes\":96,", "\"min_bytes\":96,\"floor_flops\":0,\"floor_flops_why\":\"w\",",
		   "floor_flops", "(0, flops]");
	expect_bad("\"min_bytes\":96,", "\"min_bytes\":96,\"floor_flops\":6,", "floor_flops",
		   "floor_flops_why");
}

/* A fold's fewer FLOPs: the roofline (and the engine's floor) count them. */
static void test_floor_flops(void **state)
{
	char dir[64];
	struct problem p;
	(void)state;

	load_with("\"floor_flops\":3,\"floor_flops_why\":\"a fold\",", &p, dir);
	assert_true(p.floor_flops == 3 && p.flops == 12);
	/* 3 flops at 1 GFLOP/s = 3 ns (12 without the fold); bytes free */
	assert_true(problem_roofline_ms(&p, 1e9, 1) > 0.0000029 && problem_roofline_ms(&p, 1e9, 1) < 0.0000031);
	problem_release(&p);
	cleanup(dir);
}

/* The extra draw's bound: the spec's where set, 0 (the operator's rule) otherwise. */
static void test_wide_bound(void **state)
{
	char dir[64];
	struct problem p;
	(void)state;

	load_with("\"wide_bound\":4.5,", &p, dir);
	assert_true(p.wide_bound == 4.5);
	problem_release(&p);
	cleanup(dir);
	load_with("", &p, dir);
	assert_true(p.wide_bound == 0);
	problem_release(&p);
	cleanup(dir);
}

static void test_bad_sizes(void **state)
{
	(void)state;
	expect_bad("\"n\":4", "\"n\":0", "sizes.n", "positive");
	expect_bad("\"n\":4", "\"n\":-3", "sizes.n", "positive");
	expect_bad("\"n\":4", "\"n\":1e30", "sizes.n", "integer");
	expect_bad("\"n\":4", "\"n\":2000000000000", "sizes.n", "too large");
	expect_bad("\"n\":4", "\"n\":99999999999999999999999", "invalid JSON", NULL);
	/* each size is fine, the product overflows */
	expect_bad("\"n\":4,\"m\":3", "\"n\":2000000,\"m\":2000000",
		   "inputs[0].shape", "too many");
	expect_bad("\"shape\":[\"n\",\"m\"],\"dist\"", "\"shape\":[\"n\",\"m\",\"n\",\"m\",\"n\",\"m\",\"n\",\"m\",\"n\"],\"dist\"",
		   "inputs[0].shape", "dims");
	expect_bad("\"shape\":[\"n\",\"m\"],\"dist\"", "\"shape\":[\"n\",0],\"dist\"",
		   "inputs[0].shape[1]", "positive");
}

static void test_shape_mismatch(void **state)
{
	char dir[64];
	struct buf err = BUF_INIT;
	(void)state;
	/* shape names a size the spec lacks */
	expect_bad("\"shape\":[\"n\",\"m\"],\"dist\"", "\"shape\":[\"n\",\"k\"],\"dist\"",
		   "inputs[0].shape[1]", "\"k\" is not in sizes");
	/* symmetrize needs square matrices */
	expect_bad("\"high\":1}", "\"high\":1,\"post\":\"symmetrize\"}", "inputs[0].dist.post",
		   "square");
	/* the id names another directory */
	expect_bad("\"id\":\"level1/901_T\"", "\"id\":\"level1/902_T\"", "\"id\"", "directory 901_T");
	expect_bad("\"number\":901", "\"number\":902", "\"number\"", "directory 901_T");
	/* reference.py states other sizes than the spec */
	assert_int_equal(load_dir(good, "class Model: pass\nn = 5\nm = 3\n", dir, &err), -1);
	assert_non_null(strstr(err.s, "reference.py:2"));
	assert_non_null(strstr(err.s, "sizes.n"));
	assert_non_null(strstr(err.s, "spec.json"));
	cleanup(dir);
	buf_release(&err);
}

static void test_unreadable(void **state)
{
	struct problem p;
	struct buf err = BUF_INIT;
	char dir[64], path[128];
	(void)state;

	problem_init(&p);
	assert_int_equal(problem_load(&p, "/nonexistent/kf", &err), -1);
	assert_non_null(strstr(err.s, "/nonexistent/kf/spec.json"));
	/* spec.json a directory: cannot be read */
	assert_int_equal(load_dir(good, NULL, dir, &err), 0);
	snprintf(path, sizeof(path), "%s/spec.json", dir);
	unlink(path);
	mkdir(path, 0755);
	assert_int_equal(problem_load(&p, dir, &err), -1);
	assert_non_null(strstr(err.s, "spec.json"));
	rmdir(path);
	/* missing reference.cu */
	assert_int_equal(load_dir(good, NULL, dir + 0, &err), 0);
	snprintf(path, sizeof(path), "%s/reference.cu", dir);
	unlink(path);
	assert_int_equal(problem_load(&p, dir, &err), -1);
	assert_non_null(strstr(err.s, "reference.cu"));
	cleanup(dir);
	/* garbage */
	assert_int_equal(problem_load_json(&p, "{\"id\": ", "mem.json", &err), -1);
	assert_non_null(strstr(err.s, "mem.json"));
	assert_int_equal(problem_load_json(&p, "[1,2]", "mem.json", &err), -1);
	assert_non_null(strstr(err.s, "mem.json"));
	problem_release(&p);
	buf_release(&err);
}

static void test_find(void **state)
{
	struct buf dir = BUF_INIT, err = BUF_INIT;
	const char *q[] = { "level1/023_Softmax", "23", "023", "Softmax", "level1/23", "softmax",
			    "023_Softmax" };
	(void)state;
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		if (problem_find(root(), q[i], &dir, &err) < 0)
			fail_msg("%s: %s", q[i], err.s);
		assert_non_null(strstr(dir.s, "problems/level1/023_Softmax"));
	}
	assert_int_equal(problem_find(root(), "NoSuchThing", &dir, &err), PROBLEM_UNKNOWN);
	assert_string_equal(err.s, "unknown problem 'NoSuchThing'");
	/* KernelBench's names (issue 36) */
	{
		const char *kb[] = { "19_ReLU", "19_ReLU.py", "level1/19_ReLU", "level1/19_relu.py",
				     "level1:19" };
		for (size_t i = 0; i < sizeof(kb) / sizeof(kb[0]); i++) {
			if (problem_find(root(), kb[i], &dir, &err) < 0)
				fail_msg("%s: %s", kb[i], err.s);
			assert_non_null(strstr(dir.s, "problems/level1/019_ReLU"));
		}
		assert_int_equal(problem_find(root(), "level2/12_Gemm_Multiply_LeakyReLU.py", &dir, &err), 0);
		assert_non_null(strstr(dir.s, "problems/level2/012_Gemm_Multiply_LeakyReLU"));
		assert_int_equal(problem_find(root(), "1_Square_matrix_multiplication_.py", &dir, &err), 0);
		assert_non_null(strstr(dir.s, "problems/level1/001_Square_matrix_multiplication"));
	}
	/* a number that is not its name's is no problem, not silently 19 */
	assert_int_equal(problem_find(root(), "19_Softmax", &dir, &err), PROBLEM_UNKNOWN);
	assert_string_equal(err.s, "unknown problem '19_Softmax'; did you mean 'level1/023_Softmax'?");
	assert_int_equal(problem_find(root(), "level2/19_ReLU.py", &dir, &err), PROBLEM_UNKNOWN);
	assert_string_equal(err.s, "unknown problem 'level2/19_ReLU.py'; did you mean 'level1/019_ReLU'?");
	/* level 2 has a problem 23 too: a bare number still means level 1 (as in
	 * PROBLEMS lists), levelN/ or a name reaches the others */
	{
		const char *q2[] = { "level2/23", "level2/023", "Conv3d_GroupNorm_Mean",
				     "level2/023_Conv3d_GroupNorm_Mean" };
		for (size_t i = 0; i < sizeof(q2) / sizeof(q2[0]); i++) {
			if (problem_find(root(), q2[i], &dir, &err) < 0)
				fail_msg("%s: %s", q2[i], err.s);
			assert_non_null(strstr(dir.s, "problems/level2/023_Conv3d_GroupNorm_Mean"));
		}
	}
	assert_int_equal(problem_find(root(), "level3/99", &dir, &err), PROBLEM_UNKNOWN);
	buf_release(&dir);
	buf_release(&err);
}

/* A spec of `total` tensors: x, total - 2 params of 4 floats, y; `pad`
 * bytes of notes. The params of index % 16 == 1 are softmax rows. */
static char *many_spec(int total, size_t pad)
{
	struct buf b = BUF_INIT;
	buf_adds(&b, "{\"id\":\"level3/901_M\",\"level\":3,\"number\":901,\"name\":\"M\","
		 "\"kernelbench_file\":\"901_M.py\",\"family\":\"elementwise\",\"operation\":\"relu\","
		 "\"sizes\":{\"n\":4},\"inputs\":[{\"name\":\"x\",\"role\":\"input\","
		 "\"dtype\":\"float32\",\"shape\":[\"n\"],\"dist\":{\"kind\":\"uniform\",\"low\":0,"
		 "\"high\":1}}");
	for (int i = 1; i < total - 1; i++)
		buf_addf(&b, ",{\"name\":\"p%d\",\"role\":\"param\",\"dtype\":\"float32\","
			 "\"shape\":[2,4],\"dist\":{\"kind\":\"normal\",\"mean\":0,\"std\":1%s}}", i,
			 i % 16 == 1 ? ",\"post\":\"softmax_lastdim\"" : "");
	buf_adds(&b, "],\"outputs\":[{\"name\":\"y\",\"dtype\":\"float32\",\"shape\":[\"n\"]}],"
		 "\"tolerance\":\"fp32\",\"flops\":4,\"min_bytes\":32,\"attrs\":{\"op\":\"relu\"},"
		 "\"notes\":\"");
	for (size_t i = 0; i < pad; i++)
		buf_addc(&b, 'n');
	buf_adds(&b, "\"}");
	return buf_detach(&b, NULL);
}

/* Level-3 models carry hundreds of params: up to PROBLEM_MAX_TENSORS
 * load, one more is refused by name; specs up to PROBLEM_SPEC_MAX. */
/* The index lists directories with a spec only: find and list agree. */
static void test_index(void **state)
{
	char tmpl[] = "/tmp/kf-index-XXXXXX", path[256], cmd[300];
	const char *dirs[] = { "level1/001_A", "level1/002_B", "level1/010_C", "level1/x_D",
			       "level2/003_E" };
	struct problem_index ix;
	struct buf dir = BUF_INIT, err = BUF_INIT;
	char **ld;
	int n;
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(tmpl));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s/problems/%s'", tmpl, dirs[i]);
		assert_int_equal(system(cmd), 0);
		if (i == 1)
			continue; /* 002_B: no spec */
		snprintf(path, sizeof(path), "%s/problems/%s/spec.json", tmpl, dirs[i]);
		assert_non_null(f = fopen(path, "w"));
		fputs("{}", f);
		fclose(f);
	}
	assert_int_equal(problem_index_load(&ix, tmpl, 0, &err), 0);
	assert_int_equal(ix.n, 3);
	assert_string_equal(ix.v[0].id, "level1/001_A");
	assert_string_equal(ix.v[1].id, "level1/010_C");
	assert_int_equal(ix.v[1].number, 10);
	assert_string_equal(ix.v[2].id, "level2/003_E");
	assert_int_equal(ix.v[2].level, 2);
	assert_non_null(strstr(ix.dirs[2], "/problems/level2/003_E"));
	problem_index_release(&ix);
	assert_int_equal(problem_list_dirs(tmpl, 1, &ld, &n, &err), 0);
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++)
		free(ld[i]);
	free(ld);
	assert_int_equal(problem_find(tmpl, "10", &dir, &err), 0);
	assert_non_null(strstr(dir.s, "level1/010_C"));
	assert_int_equal(problem_find(tmpl, "2", &dir, &err), PROBLEM_UNKNOWN);
	assert_int_equal(problem_find(tmpl, "B", &dir, &err), PROBLEM_UNKNOWN);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpl);
	assert_int_equal(system(cmd), 0);
	buf_release(&dir);
	buf_release(&err);
}

static void test_many_tensors(void **state)
{
	struct problem p;
	struct buf err = BUF_INIT;
	char *s;
	(void)state;

	problem_init(&p);
	s = many_spec(PROBLEM_MAX_TENSORS, 0);
	if (problem_load_json(&p, s, "many.json", &err) < 0)
		fail_msg("%s", err.s);
	free(s);
	assert_int_equal(p.n_in + p.n_out, 4096);
	assert_string_equal(p.t[4094].name, "p4094");
	assert_string_equal(p.t[4095].name, "y");
	assert_int_equal(problem_tensor_index(&p, "p4000"), 4000);
	{
		/* every param its own values; softmax rows (memo shared by tensor
		 * index mod INPUTS_MEMO) right when read interleaved */
		struct inputs_gen g, f;
		double a[2][8], r;
		inputs_gen_init(&g, &p, 77);
		for (int k = 0; k < 8; k++) {
			a[0][k] = inputs_value(&g, 1, k);
			a[1][k] = inputs_value(&g, 17, k);
			assert_true(a[0][k] != a[1][k]);
		}
		for (int t = 1; t < 4095; t += 1000)
			assert_true(inputs_value(&g, t, 3) != inputs_value(&g, t + 1, 3));
		inputs_gen_fork(&f, &g);
		for (int k = 7; k >= 0; k--) {
			assert_true(inputs_value(&f, 17, k) == a[1][k]);
			assert_true(inputs_value(&f, 1, k) == a[0][k]);
		}
		inputs_gen_release(&f);
		for (int row = 0; row < 2; row++) {
			r = 0;
			for (int k = 0; k < 4; k++)
				r += a[0][4 * row + k];
			assert_true(r > 0.999 && r < 1.001);
		}
		inputs_gen_release(&g);
	}
	problem_release(&p);

	s = many_spec(PROBLEM_MAX_TENSORS + 1, 0);
	assert_int_equal(problem_load_json(&p, s, "many.json", &err), -1);
	free(s);
	assert_non_null(strstr(err.s, "many.json: fields \"inputs\" and \"outputs\": 4097 tensors, "
				      "more than 4096 in all"));

	/* a level-3 graph's spec is several MiB: 7 MiB loads, 9 MiB is refused */
	s = many_spec(700, 7u << 20);
	if (problem_load_json(&p, s, "big.json", &err) < 0)
		fail_msg("%s", err.s);
	free(s);
	assert_int_equal(p.n_in, 699);
	problem_release(&p);
	s = many_spec(3, 9u << 20);
	assert_int_equal(problem_load_json(&p, s, "big.json", &err), -1);
	free(s);
	assert_non_null(strstr(err.s, "big.json"));
	buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_specs_load), cmocka_unit_test(test_good),
		cmocka_unit_test(test_missing_fields), cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_wide_bound),
		cmocka_unit_test(test_floor_flops),
		cmocka_unit_test(test_bad_sizes),      cmocka_unit_test(test_shape_mismatch),
		cmocka_unit_test(test_unreadable),     cmocka_unit_test(test_find),
		cmocka_unit_test(test_many_tensors),   cmocka_unit_test(test_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
