/* Problem and category pages, issue 41: the best kernel's profile, each
 * kernel's diff against its parent, limiters before and after ideas. */
#include "site_int.h"

#include <math.h>
#include <string.h>

#include "core/json.h"
#include "store/store_eval.h"
#include "store/store_lineage.h"
#include "store/store_profile.h"
#include "diff.h"
#include "html.h"
#include "profile.h"

#define MAX_DIFFS 40          /* kernels with a diff on a problem page */
#define MAX_DIFF_LINES 400    /* lines of one diff */
#define MAX_IDEA_SHOWN (16u << 10)

int site_problem_profile(struct site *s, json_t *bk, const char *pid, const char *gpu,
			 struct buf *err)
{
	const char *hash = jget_str(json_object_get(bk, "kernel"), "hash", "");
	json_t *prof = NULL;

	if (store_kernel_profile(&s->store, hash, pid, gpu, &prof, err) < 0)
		return -1;
	if (prof) {
		json_object_set_new(bk, "profile", profile_view(prof));
		json_decref(prof);
	}
	json_object_set_new(bk, "show_profile", json_true());
	return 0;
}

static void speed(struct buf *b, double base, double t)
{
	if (isfinite(base) && isfinite(t) && t > 0) {
		fmt_num(b, base / t);
		buf_adds(b, "×");
	} else {
		buf_adds(b, "—");
	}
}

/* The view of one diff row; 0 when its sources are missing. */
static int diff_view(struct site *s, json_t *v, struct buf *err)
{
	struct buf a = BUF_INIT, b = BUF_INIT, h = BUF_INIT;
	struct site_diff_stat st;
	double e = jnum(v, "eager_ms"), t0 = jnum(v, "parent_ms"), t1 = jnum(v, "time_ms");
	int ret = -1;

	if (store_kernel_source(&s->store, jget_str(v, "parent_hash", ""), &a, err) < 0 ||
	    store_kernel_source(&s->store, jget_str(v, "kernel_hash", ""), &b, err) < 0)
		goto out;
	if (site_diff_html(&h, a.s ? a.s : "", a.len, b.s ? b.s : "", b.len, MAX_DIFF_LINES, &st,
			   err) < 0)
		goto out;
	json_object_set_new(v, "diff_html", json_stringn(h.s ? h.s : "", h.len));
	json_object_set_new(v, "identical", json_boolean(st.lines == 0));
	json_object_set_new(v, "added", json_integer(st.added));
	json_object_set_new(v, "removed", json_integer(st.removed));
	buf_reset(&h);
	speed(&h, e, t0);
	json_object_set_new(v, "speed_before", json_string(h.s));
	buf_reset(&h);
	speed(&h, e, t1);
	json_object_set_new(v, "speed_after", json_string(h.s));
	if (isfinite(t0) && isfinite(t1) && t0 > 0 && t1 > 0) {
		/* the child's speedup relative to its parent's */
		double r = t0 / t1;
		buf_reset(&h);
		buf_addf(&h, "%+.1f%%", (r - 1) * 100);
		json_object_set_new(v, "change_s", json_string(h.s));
		json_object_set_new(v, "change_cls", json_string(r >= 1 ? "good" : "bad"));
	}
	const char *idea = jget_str(v, "idea_text", NULL);
	if (idea) {
		buf_reset(&h);
		html_markdown(&h, idea, strnlen(idea, MAX_IDEA_SHOWN));
		json_object_set_new(v, "idea_html", json_stringn(h.s, h.len));
	}
	site_set_status(v, "status");
	buf_reset(&h);
	site_kernel_path(&h, jget_str(v, "kernel_hash", ""));
	json_object_set_new(v, "link", json_sprintf("../%s", h.s));
	buf_reset(&h);
	site_kernel_path(&h, jget_str(v, "parent_hash", ""));
	json_object_set_new(v, "parent_link", json_sprintf("../%s", h.s));
	ret = 0;
out:
	buf_release(&a);
	buf_release(&b);
	buf_release(&h);
	return ret;
}

int site_problem_diffs(struct site *s, json_t *d, const char *pid, const json_t *lin,
		       struct buf *err)
{
	json_t *rows = store_problem_diffs(&s->store, pid, err), *out = json_array(), *v;
	json_t *pairs = json_object(), *by_id = json_object();
	size_t i, n;
	long more = 0;
	int ret = -1;

	if (!rows)
		goto done;
	json_array_foreach(rows, i, v)
		json_object_set(by_id, jget_str(v, "id", ""), v);
	/* the lineage of the best kernel first, best kernel first, then the
	 * rest in run and round order; one diff per (parent, kernel) pair */
	json_t *order = json_array();
	for (n = json_array_size(lin); n-- > 0;) {
		json_t *r = json_object_get(by_id, jget_str(json_array_get(lin, n), "id", ""));
		if (r) {
			json_object_set_new(r, "in_lineage", json_true());
			json_array_append(order, r);
		}
	}
	json_array_foreach(rows, i, v)
		if (!json_object_get(v, "in_lineage"))
			json_array_append(order, v);
	json_array_foreach(order, i, v) {
		char key[160];
		snprintf(key, sizeof(key), "%s>%s", jget_str(v, "parent_hash", ""),
			 jget_str(v, "kernel_hash", ""));
		if (json_object_get(pairs, key))
			continue;
		json_object_set_new(pairs, key, json_true());
		if (json_array_size(out) >= MAX_DIFFS) {
			more++;
			continue;
		}
		if (diff_view(s, v, err) < 0) {
			json_decref(order);
			goto done;
		}
		json_object_set_new(v, "n", json_integer((json_int_t)json_array_size(out) + 1));
		json_object_set_new(v, "open", json_boolean(json_array_size(out) == 0));
		json_array_append(out, v);
	}
	json_decref(order);
	json_object_set(d, "diffs", out);
	if (more)
		json_object_set_new(d, "diffs_more", json_integer(more));
	ret = 0;
done:
	json_decref(rows);
	json_decref(out);
	json_decref(pairs);
	json_decref(by_id);
	return ret;
}

int site_category_limiters(struct site *s, json_t *page, const json_t *shifts, const char *cat)
{
	long before[8] = { 0 }, after[8] = { 0 }, total = 0;
	json_t *rows = json_array(), *moves = json_array(), *v;
	size_t i;
	int nl = 0;

	(void)s;
	while (store_profile_limiters[nl] && nl < 8)
		nl++;
	json_array_foreach(shifts, i, v) {
		if (strcmp(jget_str(v, "category", ""), cat))
			continue;
		long c = (long)jget_int(v, "n", 0);
		for (int l = 0; l < nl; l++) {
			before[l] += !strcmp(jget_str(v, "before", ""), store_profile_limiters[l]) ? c : 0;
			after[l] += !strcmp(jget_str(v, "after", ""), store_profile_limiters[l]) ? c : 0;
		}
		total += c;
		json_array_append_new(moves, json_pack("{s:s,s:s,s:I}", "before", jget_str(v, "before", ""),
			"after", jget_str(v, "after", ""), "n", (json_int_t)c));
	}
	for (int l = 0; l < nl; l++)
		json_array_append_new(rows, json_pack("{s:s,s:I,s:I}", "limiter", store_profile_limiters[l],
			"before", (json_int_t)before[l], "after", (json_int_t)after[l]));
	json_object_set_new(page, "limiters", rows);
	json_object_set_new(page, "limiter_moves", moves);
	json_object_set_new(page, "limiter_pairs", json_integer(total));
	json_object_set_new(page, "has_limiters", json_boolean(total > 0));
	return 0;
}
