#include "store_problems.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "core/sha256.h"
#include "problem/problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASELINE_MAX (16u << 20)

int store_put_problem(struct store *s, const struct problem *pr, struct buf *err)
{
	json_t *js = pr->spec, *row = NULL;
	char hex[65];
	int ret = -1;

	if (!pr->spec_text)
		return kf_err(err, "%s: no spec text", pr->id ? pr->id : "problem");
	sha256_hex(pr->spec_text, pr->spec_len, hex);
	row = json_pack("{s:s,s:I,s:I,s:s,s:s?,s:s?,s:s?,s:s,s:s,s:s?,s:f,s:f}", "id", pr->id,
			"level", (json_int_t)pr->level, "number", (json_int_t)pr->number, "name",
			pr->name, "kernelbench_file", jget_str(js, "kernelbench_file", NULL), "family",
			jget_str(js, "family", NULL), "op", jget_str(js, "op", NULL), "spec",
			pr->spec_text, "spec_sha256", hex, "torch_text", pr->torch_text, "flops",
			jget_num(js, "flops", 0), "min_bytes", jget_num(js, "min_bytes", 0));
	if (!row)
		return kf_err(err, "%s: cannot build the problems row", pr->id);
	if (store_insert(s, "problems", row, STORE_IGNORE, err) < 0)
		goto out;
	{
		/* An unchanged row is not rewritten: a store with nothing new stays
		 * byte-identical (make dataset run twice packs the same tarball). */
		json_t *prm = json_pack("[O,s,s?]", json_object_get(row, "id"), hex, pr->torch_text);
		long long same = 0;
		int r = store_query_int(s, "SELECT count(*) FROM problems WHERE id = ? AND spec_sha256 = ? "
				       "AND torch_text IS ?", prm, 0, &same, err);
		json_decref(prm);
		if (r < 0)
			goto out;
		if (same) {
			ret = 0;
			goto out;
		}
	}
	{
		/* A changed spec replaces the row's content (same key). */
		json_t *set = json_deep_copy(row), *where = json_pack("{s:O}", "id", json_object_get(row, "id"));
		json_object_del(set, "id");
		ret = store_update(s, "problems", set, where, err) < 0 ? -1 : 0;
		json_decref(set);
		json_decref(where);
	}
out:
	json_decref(row);
	return ret;
}

int problem_dir_for_file(const char *root, int level, const char *file, struct buf *out,
			 struct buf *err)
{
	char *end;
	long num = strtol(file, &end, 10);
	size_t n;
	struct buf dir = BUF_INIT;
	int ret = -1;

	n = strlen(file);
	if (end == file || *end != '_' || num < 1 || num > 9999 || n < 4 || strcmp(file + n - 3, ".py"))
		return kf_err(err, "'%s' is not a KernelBench problem file name (N_Name.py)", file);
	/* By number: KernelBench's file names keep trailing underscores that
	 * the directory names drop ("1_Square_matrix_multiplication_.py");
	 * the caller checks the spec's kernelbench_file. */
	{
		char q[32];
		struct buf e2 = BUF_INIT;
		snprintf(q, sizeof(q), "level%d/%ld", level, num);
		if (problem_find(root, q, &dir, &e2) < 0) {
			kf_err(err, "no problem directory for %s under %s/problems/level%d", file, root,
			       level);
			buf_release(&e2);
			goto out;
		}
		buf_release(&e2);
	}
	buf_reset(out);
	buf_add(out, dir.s, dir.len);
	ret = 0;
out:
	buf_release(&dir);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether the store holds `row` already (its key, with the same values in
 * every column but imported_at): then the import leaves it alone. */
static int baseline_same(struct store *s, const json_t *row, int *same, struct buf *err)
{
	static const char *const cols[] = { "mean_ms", "std_ms", "min_ms", "max_ms", "median_ms",
					    "num_trials", "hardware", "device", "source" };
	json_t *prm = json_pack("[O,O,O]", json_object_get(row, "problem_id"),
				json_object_get(row, "gpu_name"), json_object_get(row, "variant"));
	json_t *old = NULL;
	int r = store_query_one(s, "SELECT * FROM baselines WHERE problem_id = ? AND gpu_name = ? "
				"AND variant = ?", prm, &old, err);

	json_decref(prm);
	*same = 0;
	if (r < 0)
		return -1;
	if (!old)
		return 0;
	*same = 1;
	for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]) && *same; k++) {
		json_t *a = json_object_get(row, cols[k]), *b = json_object_get(old, cols[k]);
		if (json_is_null(a))
			a = NULL;
		if (json_is_null(b))
			b = NULL;
		if (!a || !b)
			*same = !a && !b;
		else if (json_is_number(a) && json_is_number(b))
			*same = json_number_value(a) == json_number_value(b);
		else
			*same = json_equal(a, b);
	}
	json_decref(old);
	return 0;
}

int store_import_baselines(struct store *s, const char *root, const char *path,
			   const char *gpu_name, const char *variant, const char *const *only,
			   size_t n_only, int *changed, struct buf *skipped, struct buf *err)
{
	json_t *doc = json_load_file_bounded(path, BASELINE_MAX, err);
	const char *lvkey;
	json_t *lv;
	struct buf dir = BUF_INIT, e2 = BUF_INIT;
	int n = 0;
	char now[32];
	const char *base;

	if (!doc)
		return -1;
	if (strcmp(variant, "eager") && strcmp(variant, "eager_notf32") && strcmp(variant, "compile")) {
		json_decref(doc);
		return kf_err(err, "variant must be eager, eager_notf32 or compile, not '%s'", variant);
	}
	*changed = 0;
	store_now(now);
	/* Only the file's name: no host paths in the store (it ships in datasets). */
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	buf_reset(skipped);
	if (store_begin(s, err) < 0)
		goto fail;
	json_object_foreach(doc, lvkey, lv) {
		int level;
		const char *file;
		json_t *m;
		if (sscanf(lvkey, "level%d", &level) != 1 || !json_is_object(lv)) {
			buf_addf(skipped, "%s (not a level)\n", lvkey);
			continue;
		}
		json_object_foreach(lv, file, m) {
			json_t *row, *spec_row = NULL, *prm;
			int same;
			double mean = jget_num(m, "mean", -1);
			if (mean <= 0 || problem_dir_for_file(root, level, file, &dir, &e2) < 0) {
				buf_addf(skipped, "%s/%s (%s)\n", lvkey, file, mean <= 0 ? "no mean" : e2.s);
				continue;
			}
			if (only) {
				const char *slash = strrchr(dir.s, '/');
				buf_reset(&e2);
				buf_addf(&e2, "level%d/%s", level, slash ? slash + 1 : dir.s);
				if (!bsearch(&e2.s, only, n_only, sizeof(*only), cmp_str))
					continue;
			}
			{
				struct problem pr;
				int r;
				problem_init(&pr);
				r = problem_load(&pr, dir.s, err) < 0 ? -1 : store_put_problem(s, &pr, err);
				problem_release(&pr);
				if (r < 0)
					goto fail;
			}
			prm = json_pack("[s,i]", file, level);
			if (store_query_one(s, "SELECT id FROM problems WHERE kernelbench_file = ? AND level = ?",
					    prm, &spec_row, err) < 0) {
				json_decref(prm);
				goto fail;
			}
			json_decref(prm);
			if (!spec_row) {
				buf_addf(skipped, "%s/%s (spec names another file)\n", lvkey, file);
				continue;
			}
			row = json_pack("{s:O,s:s,s:s,s:f,s:s,s:s}", "problem_id",
					json_object_get(spec_row, "id"), "gpu_name", gpu_name, "variant",
					variant, "mean_ms", mean, "source", base, "imported_at", now);
			{
				static const char *const num[][2] = { { "std", "std_ms" }, { "min", "min_ms" },
					{ "max", "max_ms" }, { "median", "median_ms" }, { "num_trials", "num_trials" } };
				for (size_t k = 0; k < sizeof(num) / sizeof(num[0]); k++) {
					json_t *v = json_object_get(m, num[k][0]);
					if (json_is_number(v))
						json_object_set(row, num[k][1], v);
				}
				if (json_is_string(json_object_get(m, "hardware")))
					json_object_set(row, "hardware", json_object_get(m, "hardware"));
				if (json_is_string(json_object_get(m, "device")))
					json_object_set(row, "device", json_object_get(m, "device"));
			}
			json_decref(spec_row);
			if (baseline_same(s, row, &same, err) < 0 ||
			    (!same && store_insert(s, "baselines", row, STORE_REPLACE, err) < 0)) {
				json_decref(row);
				goto fail;
			}
			json_decref(row);
			n++;
			*changed += !same;
		}
	}
	if (store_commit(s, err) < 0)
		goto fail;
	json_decref(doc);
	buf_release(&dir);
	buf_release(&e2);
	return n;
fail:
	store_rollback(s);
	json_decref(doc);
	buf_release(&dir);
	buf_release(&e2);
	return -1;
}

int store_baseline_means(struct store *s, const char *problem_id, const char *gpu, double *eager,
			 double *compile, struct buf *err)
{
	json_t *prm = json_pack("[s,s]", problem_id, gpu), *rows;
	size_t i;
	json_t *r;

	*eager = *compile = 0;
	rows = store_query_all(s, "SELECT variant, mean_ms FROM baselines WHERE problem_id = ? AND gpu_name = ?",
			       prm, err);
	json_decref(prm);
	if (!rows)
		return -1;
	json_array_foreach(rows, i, r) {
		const char *v = jget_str(r, "variant", "");
		if (!strcmp(v, "eager"))
			*eager = jget_num(r, "mean_ms", 0);
		else if (!strcmp(v, "compile"))
			*compile = jget_num(r, "mean_ms", 0);
	}
	json_decref(rows);
	return 0;
}

json_t *store_baselines_list(struct store *s, const char *gpu, struct buf *err)
{
	json_t *prm = json_pack("[s?,s?]", gpu, gpu);
	json_t *rows = store_query_all(s,
		"SELECT b.problem_id, b.gpu_name, b.variant, b.mean_ms, b.std_ms, b.median_ms, b.num_trials "
		"FROM baselines b JOIN problems p ON p.id = b.problem_id "
		"WHERE (? IS NULL OR b.gpu_name = ?) ORDER BY p.level, p.number, b.gpu_name, b.variant",
		prm, err);
	json_decref(prm);
	return rows;
}

int store_problems_each(struct store *s, store_row_cb cb, void *ctx, struct buf *err)
{
	return store_query(s, "SELECT id, name, torch_text, spec FROM problems ORDER BY id", NULL, cb,
			   ctx, err);
}
