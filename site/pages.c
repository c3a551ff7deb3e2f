/* Index, problem and category pages. */
#include "site_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "html.h"
#include "store/store_lineage.h"
#include "svg.h"
#include "core/xalloc.h"


static const double fast_ps[] = { 0, 0.5, 0.8, 1, 1.5, 2 };
#define N_PS (sizeof(fast_ps) / sizeof(fast_ps[0]))

static const struct { const char *id, *label; } cats[] = {
	{ "memory", "Memory access optimization" },
	{ "async", "Asynchronous operations and latency hiding" },
	{ "precision", "Data type and precision optimization" },
	{ "compute", "Compute and instruction optimization" },
	{ "parallelism", "Parallelism and occupancy enhancement" },
	{ "control", "Control flow and loop optimization" },
};
#define N_CATS (sizeof(cats) / sizeof(cats[0]))

static int cat_index(const char *id)
{
	for (size_t i = 0; i < N_CATS; i++)
		if (!strcmp(cats[i].id, id))
			return (int)i;
	return -1;
}

static const json_t *best_of(struct site *s, const char *pid, const char *gpu)
{
	size_t i;
	json_t *b;

	json_array_foreach(s->best, i, b)
		if (!strcmp(jget_str(b, "problem_id", ""), pid) &&
		    !strcmp(jget_str(b, "gpu_name", ""), gpu))
			return b;
	return NULL;
}

/* Compiled candidates that no GPU checked (compile-only runs): their
 * correctness is unknown, not 0%. */
static int not_checked(const json_t *o)
{
	return jnum(o, "checked") == 0 && jnum(o, "compiled") > 0;
}

static void rates(json_t *o)
{
	double n = jnum(o, "candidates");

	jset_pct(o, "compiled_pct", n > 0 ? jnum(o, "compiled") / n : NAN);
	if (not_checked(o)) {
		json_object_set_new(o, "correct_pct", json_string("not checked"));
		json_object_set_new(o, "correct_s", json_string("not checked"));
		json_object_set_new(o, "not_checked", json_true());
		return;
	}
	jset_pct(o, "correct_pct", n > 0 ? jnum(o, "correct") / n : NAN);
	if (n > 0)
		json_object_set_new(o, "correct_v", json_real(jnum(o, "correct") / n));
	json_object_set(o, "correct_s", json_object_get(o, "correct"));
}

/* A degenerate problem (its output does not depend on its inputs, or a
 * constant passes: docs/graph-ir.md) is reported apart from fast_p. */
static int degenerate(struct site *s, const char *pid)
{
	size_t i;
	json_t *p;

	json_array_foreach(s->problems, i, p)
		if (!strcmp(jget_str(p, "id", ""), pid))
			return json_is_string(json_object_get(p, "degenerate"));
	return 0;
}

/* The level of a problem id ("level2/009_..."), 0 if none. */
static int level_of(const char *pid)
{
	return !strncmp(pid, "level", 5) && pid[5] >= '1' && pid[5] <= '9' && pid[6] == '/' ? pid[5] - '0' : 0;
}

/* GPU g's table over the problems of level lv (0: every level); np
 * problems count, apart more are degenerate. NULL when g has no best
 * kernel there and skip_empty. */
static json_t *fastp_table(struct site *s, const char *g, int lv, double np, int apart, int skip_empty)
{
	int ne[N_PS] = { 0 }, nc[N_PS] = { 0 }, nbest = 0, nle = 0, nlc = 0;
	double le = 0, lc = 0;
	size_t i;
	json_t *b, *t, *rows;

	json_array_foreach(s->best, i, b) {
		if (strcmp(jget_str(b, "gpu_name", ""), g) || degenerate(s, jget_str(b, "problem_id", "")) ||
		    (lv && level_of(jget_str(b, "problem_id", "")) != lv))
			continue;
		double se = jnum(b, "speedup_eager"), sc = jnum(b, "speedup_compile");
		nbest++;
		for (size_t p = 0; p < N_PS; p++) {
			/* fast_0 is the correct fraction (KernelBench). */
			ne[p] += fast_ps[p] == 0 || (isfinite(se) && se > fast_ps[p]);
			nc[p] += fast_ps[p] == 0 || (isfinite(sc) && sc > fast_ps[p]);
		}
		if (isfinite(se) && se > 0) {
			le += log(se);
			nle++;
		}
		if (isfinite(sc) && sc > 0) {
			lc += log(sc);
			nlc++;
		}
	}
	if (!nbest && skip_empty)
		return NULL;
	t = json_object();
	rows = json_array();
	for (size_t p = 0; p < N_PS; p++) {
		json_t *r = json_object();
		json_object_set_new(r, "p", json_real(fast_ps[p]));
		json_object_set_new(r, "p_s", json_sprintf("fast_%g", fast_ps[p]));
		json_object_set_new(r, "eager_v", json_real(np > 0 ? ne[p] / np : 0));
		json_object_set_new(r, "compile_v", json_real(np > 0 ? nc[p] / np : 0));
		/* No baseline of a kind on this GPU: "—", not 0% (nor 100% at p = 0). */
		jset_pct(r, "eager_s", np > 0 && nle ? ne[p] / np : NAN);
		jset_pct(r, "compile_s", np > 0 && nlc ? nc[p] / np : NAN);
		json_array_append_new(rows, r);
	}
	json_object_set_new(t, "gpu", json_string(g));
	if (lv) {
		json_object_set_new(t, "level", json_integer(lv));
		json_object_set_new(t, "level_s", json_sprintf("level %d", lv));
		json_object_set_new(t, "label", json_sprintf("%s, level %d", g, lv));
	} else {
		json_object_set_new(t, "label", json_string(g));
	}
	json_object_set_new(t, "rows", rows);
	json_object_set_new(t, "solved", json_integer(nbest));
	if (apart)
		json_object_set_new(t, "apart_s", json_sprintf("%d degenerate problem%s", apart, apart > 1 ? "s" : ""));
	if (nle) {
		json_object_set_new(t, "geo_eager_v", json_real(exp(le / nle)));
		jset_num(t, "geo_eager_s", exp(le / nle));
	}
	if (nlc) {
		json_object_set_new(t, "geo_compile_v", json_real(exp(lc / nlc)));
		jset_num(t, "geo_compile_s", exp(lc / nlc));
	}
	json_object_set_new(t, "geo_n", json_integer(nle));
	return t;
}

/* One table per GPU; per GPU and level where the store holds several
 * levels (fast_p over a mix of levels says little about any). */
static json_t *fastp_tables(struct site *s)
{
	json_t *arr = json_array(), *gname, *pr;
	size_t gi, pi;
	int nlev[10] = { 0 }, napart[10] = { 0 }, nlevels = 0, all = 0, all_apart = 0;

	json_array_foreach(s->problems, pi, pr) {
		int l = level_of(jget_str(pr, "id", ""));
		nlev[l]++;
		napart[l] += json_is_string(json_object_get(pr, "degenerate"));
	}
	for (int l = 0; l < 10; l++) {
		nlevels += nlev[l] > 0;
		all += nlev[l];
		all_apart += napart[l];
	}
	json_array_foreach(s->gpus, gi, gname) {
		const char *g = json_string_value(gname);
		json_t *t;
		if (nlevels <= 1) {
			/* the first GPU's table even when empty: the page has one */
			if ((t = fastp_table(s, g, 0, all - all_apart, all_apart, gi > 0)))
				json_array_append_new(arr, t);
			continue;
		}
		for (int l = 1; l < 10; l++)
			if (nlev[l] && (t = fastp_table(s, g, l, nlev[l] - napart[l], napart[l],
							json_array_size(arr) > 0)))
				json_array_append_new(arr, t);
	}
	return arr;
}

/* fast_p against eager as p grows, one line per table (GPU, or GPU and level). */
static void fastp_chart(json_t *d, const json_t *fp)
{
	double xs[8][N_PS], ys[8][N_PS];
	struct svg_series se[8];
	int ns = 0;
	size_t i;
	const json_t *t;
	struct buf b = BUF_INIT;

	json_array_foreach(fp, i, t) {
		if (ns == 8)
			break;
		const json_t *rows = json_object_get(t, "rows");
		for (size_t p = 0; p < N_PS; p++) {
			xs[ns][p] = fast_ps[p];
			ys[ns][p] = jnum(json_array_get(rows, p), "eager_v") * 100.0;
		}
		se[ns] = (struct svg_series){ jget_str(t, "label", ""), xs[ns], ys[ns], (int)N_PS, 0, 1,
					      ns, NULL };
		ns++;
	}
	struct svg_chart c = { "fastp-chart", "fast_p against PyTorch eager",
			       "p (speedup threshold)", "% of problems", 0, 0.0, "%", 100,
			       "no GPU evaluation: nothing to measure" };
	svg_lines(&b, &c, se, ns);
	json_object_set_new(d, "fastp_svg", json_stringn(b.s, b.len));
	buf_release(&b);
}

static int by_speed_desc(const void *a, const void *b)
{
	const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
	double u = jnum(x, "sort_v"), v = jnum(y, "sort_v");

	if (!isfinite(u))
		u = -1;
	if (!isfinite(v))
		v = -1;
	if (u != v)
		return u < v ? 1 : -1;
	return strcmp(jget_str(x, "id", ""), jget_str(y, "id", ""));
}

static json_t *leaderboard(struct site *s)
{
	size_t i, n = json_array_size(s->problems);
	json_t **rows = xcalloc(n ? n : 1, sizeof(*rows)), *p, *arr = json_array();
	const char *g0 = json_string_value(json_array_get(s->gpus, 0));

	json_array_foreach(s->problems, i, p) {
		json_t *r = json_deep_copy(p), *cells = json_array(), *gname;
		size_t gi;
		rates(r);
		json_array_foreach(s->gpus, gi, gname) {
			const json_t *b = best_of(s, jget_str(p, "id", ""), json_string_value(gname));
			json_t *c = json_object();
			json_object_set_new(c, "gpu", json_copy(gname));
			if (b) {
				jset_speed(c, "speedup_eager", jnum(b, "eager_ms"), jnum(b, "time_ms"));
				jset_speed(c, "speedup_compile", jnum(b, "compile_ms"), jnum(b, "time_ms"));
				json_object_set_new(c, "verified",
					json_boolean(!strcmp(jget_str(b, "verdict", ""), "verified")));
				struct buf l = BUF_INIT;
				site_kernel_path(&l, jget_str(b, "kernel_hash", ""));
				json_object_set_new(c, "link", json_string(l.s));
				buf_release(&l);
			} else {
				json_object_set_new(c, "speedup_eager", json_string("—"));
				json_object_set_new(c, "speedup_compile", json_string("—"));
			}
			json_array_append_new(cells, c);
		}
		json_object_set_new(r, "cells", cells);
		/* long KernelBench names wrap at '/' and '_' (full name in the title) */
		struct buf nm = BUF_INIT;
		const char *id = jget_str(p, "id", "");
		for (const char *q = id, *seg = id; ; q++) {
			if (!*q || ((*q == '_' || *q == '/') && q[1])) {
				html_escape(&nm, seg, (size_t)(q - seg) + (*q ? 1 : 0));
				if (!*q)
					break;
				buf_adds(&nm, "<wbr>");
				seg = q + 1;
			}
		}
		json_object_set_new(r, "id_html", json_stringn(nm.s, nm.len));
		buf_release(&nm);
		const json_t *b0 = g0 ? best_of(s, jget_str(p, "id", ""), g0) : NULL;
		json_object_set_new(r, "sort_v", json_real(b0 ? jnum(b0, "speedup_eager") : NAN));
		rows[i] = r;
	}
	qsort(rows, n, sizeof(*rows), by_speed_desc);
	for (i = 0; i < n; i++) {
		json_object_set_new(rows[i], "rank", json_integer((json_int_t)i + 1));
		json_array_append_new(arr, rows[i]);
	}
	free(rows);
	return arr;
}

/* Speedup histogram bins (log scale). */
static const double bin_edges[] = { 0, 0.25, 0.5, 1, 1.5, 2, 4, 8, INFINITY };
static const char *const bin_labels[] = { "<0.25×", "0.25–0.5×", "0.5–1×", "1–1.5×",
					  "1.5–2×", "2–4×", "4–8×", "≥8×" };
#define N_BINS 8

struct cat_hist {
	double h[N_CATS][N_BINS];
	double n[N_CATS];
};

static int hist_cb(void *ctx, const char *cat, double sp)
{
	struct cat_hist *ch = ctx;
	int c = cat_index(cat);

	if (c < 0 || !isfinite(sp))
		return 0;
	for (int b = 0; b < N_BINS; b++)
		if (sp >= bin_edges[b] && sp < bin_edges[b + 1]) {
			ch->h[c][b]++;
			break;
		}
	ch->n[c]++;
	return 0;
}

int site_pages_categories(struct site *s, json_t *index, struct buf *err)
{
	json_t *rows = store_site_categories(&s->ss, err), *r, *list = json_array();
	json_t *all_ideas = NULL, *shifts = NULL;
	struct cat_hist ch;
	struct buf svg = BUF_INIT, rel = BUF_INIT;
	double rate[N_CATS], bests[N_CATS];
	const char *labels[N_CATS];
	int ret = -1;
	size_t i;

	memset(&ch, 0, sizeof(ch));
	if (!rows)
		goto out;
	if (store_site_each_category_speedup(&s->ss, hist_cb, &ch, err) < 0)
		goto out;
	if (!(all_ideas = store_site_category_ideas(&s->ss, 200, err)))
		goto out;
	if (!(shifts = store_limiter_shifts(&s->store, err)))
		goto out;
	for (size_t c = 0; c < N_CATS; c++) {
		json_t *o = NULL;
		json_array_foreach(rows, i, r)
			if (!strcmp(jget_str(r, "category", ""), cats[c].id))
				o = json_incref(r);
		if (!o) {
			o = json_object();
			json_object_set_new(o, "category", json_string(cats[c].id));
			json_object_set_new(o, "ideas", json_integer(0));
			json_object_set_new(o, "candidates", json_integer(0));
			json_object_set_new(o, "compiled", json_integer(0));
			json_object_set_new(o, "correct", json_integer(0));
			json_object_set_new(o, "round_bests", json_integer(0));
		}
		json_object_set_new(o, "label", json_string(cats[c].label));
		rates(o);
		double n = jnum(o, "candidates");
		rate[c] = n > 0 && !not_checked(o) ? jnum(o, "correct") / n * 100 : NAN;
		bests[c] = jnum(o, "round_bests");
		labels[c] = cats[c].id;

		/* the category's own page */
		json_t *page = json_deep_copy(o);
		struct svg_chart hc = { "hist", "Speedup over eager of correct candidates",
					"speedup vs PyTorch eager", "candidates", 0, NAN, NULL, 0,
					"no correct candidate with a timing" };
		buf_reset(&svg);
		svg_bars(&svg, &hc, bin_labels, ch.h[c], N_BINS);
		json_object_set_new(page, "hist_svg", json_stringn(svg.s, svg.len));
		json_t *bins = json_array();
		for (int b = 0; b < N_BINS; b++) {
			json_t *x = json_object();
			json_object_set_new(x, "label", json_string(bin_labels[b]));
			json_object_set_new(x, "count", json_integer((json_int_t)ch.h[c][b]));
			json_array_append_new(bins, x);
		}
		json_object_set_new(page, "bins", bins);
		json_object_set_new(page, "with_speedup", json_integer((json_int_t)ch.n[c]));
		json_t *ideas = json_array(), *idea;
		json_array_foreach(all_ideas, i, idea)
			if (!strcmp(jget_str(idea, "category", ""), cats[c].id))
				json_array_append(ideas, idea);
		json_array_foreach(ideas, i, idea) {
			struct buf h = BUF_INIT;
			const char *t = jget_str(idea, "text", "");
			html_markdown(&h, t, strlen(t));
			json_object_set_new(idea, "text_html", json_stringn(h.s, h.len));
			buf_release(&h);
			jset_num(idea, "best_s", jnum(idea, "best_speedup"));
			json_object_set_new(idea, "problem_link", json_sprintf("../problems/%s.html",
					    problem_slug(s, jget_str(idea, "problem_id", ""))));
		}
		json_object_set_new(page, "ideas_list", ideas);
		site_category_limiters(s, page, shifts, cats[c].id);
		json_object_set_new(page, "title", json_string(cats[c].label));
		buf_reset(&rel);
		buf_addf(&rel, "categories/%s.html", cats[c].id);
		if (site_write_page(s, T_CATEGORY, page, rel.s, 1, err) < 0) {
			json_decref(page);
			json_decref(o);
			goto out;
		}
		json_decref(page);
		json_array_append_new(list, o);
	}
	struct svg_chart c1 = { "cat-correct", "Correct candidates by idea category",
				"idea category", "% correct", 0, NAN, "%", 100,
				"not checked: no GPU evaluation" };
	buf_reset(&svg);
	svg_bars(&svg, &c1, labels, rate, N_CATS);
	json_object_set_new(index, "cat_correct_svg", json_stringn(svg.s, svg.len));
	struct svg_chart c2 = { "cat-bests", "Rounds whose best kernel came from the category",
				"idea category", "rounds", 0, NAN, NULL, 0, "no round has a correct kernel" };
	buf_reset(&svg);
	svg_bars(&svg, &c2, labels, bests, N_CATS);
	json_object_set_new(index, "cat_bests_svg", json_stringn(svg.s, svg.len));
	json_object_set(index, "categories", list);
	ret = 0;
out:
	json_decref(rows);
	json_decref(all_ideas);
	json_decref(shifts);
	json_decref(list);
	buf_release(&svg);
	buf_release(&rel);
	return ret;
}

/* Kernels whose verification passed with review flags: no verified result
 * (left out of the best kernels, fast_p and the geomeans), each with its
 * flags as the reason. NULL when there are none (the section is omitted). */
static json_t *flagged_list(struct site *s)
{
	json_t *out = json_array(), *f;
	size_t i;

	json_array_foreach(s->flagged, i, f) {
		json_t *fl = json_loads(jget_str(f, "review_flags", "[]"), 0, NULL), *x;
		struct buf why = BUF_INIT;
		size_t j;
		const char *slug = json_string_value(json_object_get(s->slugs, jget_str(f, "problem_id", "")));
		json_array_foreach(fl, j, x)
			buf_addf(&why, "%s%s", j ? ", " : "", json_string_value(x) ? json_string_value(x) : "");
		json_decref(fl);
		char kshort[13];
		snprintf(kshort, sizeof(kshort), "%s", jget_str(f, "kernel_hash", ""));
		json_array_append_new(out, json_pack("{s:s,s:s?,s:s,s:s,s:s,s:s}", "problem_id",
			jget_str(f, "problem_id", ""), "slug", slug, "gpu", jget_str(f, "gpu_name", ""),
			"kernel", jget_str(f, "kernel_hash", ""), "kernel_short", kshort,
			"reason", why.s ? why.s : ""));
		buf_release(&why);
	}
	if (!json_array_size(out)) {
		json_decref(out);
		return json_null();
	}
	return out;
}

int site_pages_index(struct site *s, struct buf *err)
{
	json_t *d = json_object(), *ov = store_site_overview(&s->ss, err), *v;
	size_t i;
	int ret = -1;

	if (!ov)
		goto out;
	rates(ov);
	static const char *const ints[] = { "problems", "kernels", "candidates", "ideas", "rounds",
		"llm_calls", "prompt_tokens", "completion_tokens", "verifications", "verified" };
	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		char k[64];
		snprintf(k, sizeof(k), "%s_s", ints[i]);
		jset_int(ov, k, (long long)jnum(ov, ints[i]));
	}
	json_array_foreach(json_object_get(ov, "proposers"), i, v)
		rates(v);
	json_array_foreach(json_object_get(ov, "gpus"), i, v) {
		jset_int(v, "evals_s", (long long)jnum(v, "evals"));
	}
	json_object_set_new(d, "overview", ov);
	json_t *fp = fastp_tables(s);
	json_object_set_new(d, "fastp", fp);
	fastp_chart(d, fp);
	json_object_set_new(d, "leaderboard", leaderboard(s));
	json_object_set_new(d, "flagged", flagged_list(s));
	json_object_set_new(d, "has_flagged", json_boolean(json_array_size(json_object_get(d, "flagged")) > 0));
	json_object_set(d, "gpu_names", s->gpus);
	json_object_set_new(d, "title", json_string("kforge results"));
	json_object_set_new(d, "is_index", json_true());
	if (site_pages_categories(s, d, err) < 0)
		goto out;
	ret = site_write_page(s, T_INDEX, d, "index.html", 0, err);
out:
	json_decref(d);
	return ret;
}

/* Lineage of a candidate: itself, its first parent, that one's... */
static json_t *lineage(json_t *by_id, const char *start)
{
	json_t *chain = json_array(), *seen = json_object();
	const char *id = start;

	for (int n = 0; id && n < 256 && !json_object_get(seen, id); n++) {
		json_t *c = json_object_get(by_id, id);
		if (!c)
			break;
		json_object_set_new(seen, id, json_true());
		json_array_insert(chain, 0, c);
		json_t *parents = json_loads(jget_str(c, "parent_ids", "[]"), 0, NULL);
		const char *next = json_string_value(json_array_get(parents, 0));
		id = next ? json_string_value(json_object_get(json_object_get(by_id, next), "id")) : NULL;
		json_decref(parents);
	}
	json_decref(seen);
	return chain;
}

static int one_problem(struct site *s, json_t *p, struct buf *err)
{
	const char *pid = jget_str(p, "id", "");
	json_t *d = json_deep_copy(p), *rounds = NULL, *cands = NULL, *by_id = json_object();
	json_t *best = json_array(), *v, *gname, *bk = NULL, *full = NULL;
	double *xs = NULL, *ys = NULL, *bs = NULL, *lx = NULL, *ly = NULL;
	const char **ll = NULL;
	struct buf b = BUF_INIT, rel = BUF_INIT;
	size_t i, n;
	int ret = -1;

	rates(d);
	json_object_set(d, "rounds_n", json_object_get(p, "rounds"));
	if (!(full = store_site_report(&s->ss, pid, err)) && err->len)
		goto out;
	if (full && site_report_problem(s, pid, full, err) < 0)
		goto out;
	json_t *prow = json_object_get(full, "problem");
	const char *torch = jget_str(prow, "torch_text", NULL);
	if (torch)
		json_object_set_new(d, "torch_text", json_string(torch));
	json_object_set_new(d, "spec", json_string(jget_str(prow, "spec", "")));
	if (jnum(p, "flops") > 0)
		jset_num(d, "gflop_s", jnum(p, "flops") / 1e9);
	if (jnum(p, "min_bytes") > 0) {
		fmt_bytes(&b, jnum(p, "min_bytes"));
		json_object_set_new(d, "min_bytes_s", json_stringn(b.s, b.len));
		buf_reset(&b);
	}

	rounds = json_incref(json_object_get(full, "rounds"));
	if (!(cands = store_site_candidates(&s->ss, pid, err)))
		goto out;
	json_array_foreach(cands, i, v) {
		json_object_set(by_id, jget_str(v, "id", ""), v);
		site_set_status(v, "status");
		jset_speed(v, "speed_s", jnum(v, "eager_ms"), jnum(v, "time_ms"));
		if (jget_str(v, "kernel_hash", NULL)) {
			site_kernel_path(&b, jget_str(v, "kernel_hash", ""));
			json_object_set_new(v, "link", json_sprintf("../%s", b.s));
		}
	}

	/* rounds: best so far per run; chart series per run */
	n = json_array_size(rounds);
	xs = xcalloc(n + 1, sizeof(double));
	ys = xcalloc(n + 1, sizeof(double));
	bs = xcalloc(n + 1, sizeof(double));
	struct svg_series se[8];
	int ns = 0;
	const char *run = NULL;
	size_t start = 0;
	double so_far = NAN;
	for (i = 0; i <= n; i++) {
		v = i < n ? json_array_get(rounds, i) : NULL;
		const char *r = v ? jget_str(v, "run_id", "") : NULL;
		if (run && (!r || strcmp(r, run)) && ns < 6) {
			se[ns] = (struct svg_series){ run, xs + start, bs + start, (int)(i - start), 1, 0,
						      ns, NULL };
			ns++;
			se[ns] = (struct svg_series){ "round best", xs + start, ys + start,
						      (int)(i - start), 0, 1, ns - 1, NULL };
			se[ns].cls = 5;
			ns++;
		}
		if (!v)
			break;
		if (!run || strcmp(r, run)) {
			run = r;
			start = i;
			so_far = NAN;
		}
		double sp = jnum(v, "eager_ms") / jnum(v, "best_ms");
		if (isfinite(sp) && (!isfinite(so_far) || sp > so_far))
			so_far = sp;
		xs[i] = jnum(v, "round");
		ys[i] = sp;
		bs[i] = so_far;
		jset_speed(v, "best_s", jnum(v, "eager_ms"), jnum(v, "best_ms"));
		if (isfinite(so_far)) {
			json_object_set_new(v, "so_far_v", json_real(so_far));
			jset_num(v, "so_far_s", so_far);
		} else {
			json_object_set_new(v, "so_far_s", json_string("—"));
		}
		rates(v);
		const char *bc = jget_str(v, "best_candidate", NULL);
		json_t *bcand = bc ? json_object_get(by_id, bc) : NULL;
		/* a round's best is a kernel only when it is correct */
		if (bcand && json_object_get(bcand, "link") &&
		    !strcmp(jget_str(bcand, "status", ""), "correct"))
			json_object_set(v, "best_link", json_object_get(bcand, "link"));
	}

	/* best per GPU and the best kernel's detail (first GPU with one) */
	json_array_foreach(s->gpus, i, gname) {
		const json_t *bb = best_of(s, pid, json_string_value(gname));
		if (!bb)
			continue;
		json_t *o = json_deep_copy(bb);
		jset_ms(o, "time_s", jnum(bb, "time_ms"));
		jset_speed(o, "speedup_eager", jnum(bb, "eager_ms"), jnum(bb, "time_ms"));
		jset_speed(o, "speedup_compile", jnum(bb, "compile_ms"), jnum(bb, "time_ms"));
		json_object_set_new(o, "verified",
				    json_boolean(!strcmp(jget_str(bb, "verdict", ""), "verified")));
		site_kernel_path(&b, jget_str(bb, "kernel_hash", ""));
		json_object_set_new(o, "link", json_sprintf("../%s", b.s));
		json_array_append_new(best, o);
		if (!bk) {
			bk = store_site_kernel(&s->ss, jget_str(bb, "kernel_hash", ""), err);
			if (!bk && err->len)
				goto out;
			if (bk) {
				site_kernel_view(s, bk, 1);
				json_object_set_new(bk, "gpu", json_copy(gname));
				if (site_problem_profile(s, bk, pid, json_string_value(gname), err) < 0)
					goto out;
				json_object_set_new(bk, "embedded", json_true());
				json_object_set_new(bk, "verified", json_boolean(
					!strcmp(jget_str(bb, "verdict", ""), "verified")));
			}
		}
	}

	/* lineage of the best kernel: its first candidate here, then parents */
	json_t *lin = json_array();
	if (bk) {
		const char *h = jget_str(json_object_get(bk, "kernel"), "hash", "");
		json_array_foreach(cands, i, v)
			if (!strcmp(jget_str(v, "kernel_hash", ""), h)) {
				json_decref(lin);
				lin = lineage(by_id, jget_str(v, "id", ""));
				break;
			}
	}
	size_t nl = json_array_size(lin);
	lx = xcalloc(nl + 1, sizeof(double));
	ly = xcalloc(nl + 1, sizeof(double));
	ll = xcalloc(nl + 1, sizeof(char *));
	json_array_foreach(lin, i, v) {
		lx[i] = jnum(v, "round");
		ly[i] = jnum(v, "eager_ms") / jnum(v, "time_ms");
		ll[i] = jget_str(v, "id", "");
		json_object_set_new(v, "step", json_integer((json_int_t)i + 1));
		const char *idea = jget_str(v, "idea_text", NULL);
		if (idea) {
			buf_reset(&b);
			html_markdown(&b, idea, strlen(idea));
			json_object_set_new(v, "idea_html", json_stringn(b.s, b.len));
		}
	}
	if (site_problem_diffs(s, d, pid, lin, err) < 0) {
		json_decref(lin);
		goto out;
	}
	if (nl && ns < 8) {
		se[ns] = (struct svg_series){ "lineage of the best kernel", lx, ly, (int)nl, 0, 1, 2,
					      ll };
		ns++;
	}
	struct svg_chart ch = { "trajectory", "Best speedup by round", "round",
				"speedup vs PyTorch eager (log scale)", 1, 1.0, "×", 0,
				"no correct kernel with a timing" };
	buf_reset(&b);
	svg_lines(&b, &ch, se, ns);
	json_object_set_new(d, "trajectory_svg", json_stringn(b.s, b.len));
	json_object_set_new(d, "lineage", lin);
	json_object_set_new(d, "rounds", json_incref(rounds));
	json_object_set_new(d, "candidates_list", json_incref(cands));
	json_object_set_new(d, "best", json_incref(best));
	if (bk)
		json_object_set_new(d, "best_kernel", json_incref(bk));
	json_object_set_new(d, "title", json_string(pid));
	buf_reset(&rel);
	buf_addf(&rel, "problems/%s.html", problem_slug(s, pid));
	ret = site_write_page(s, T_PROBLEM, d, rel.s, 1, err);
	s->st->problems++;
out:
	free(xs);
	free(ys);
	free(bs);
	free(lx);
	free(ly);
	free(ll);
	json_decref(d);
	json_decref(rounds);
	json_decref(cands);
	json_decref(by_id);
	json_decref(best);
	json_decref(bk);
	json_decref(full);
	buf_release(&b);
	buf_release(&rel);
	return ret;
}

int site_pages_problems(struct site *s, struct buf *err)
{
	size_t i;
	json_t *p;

	json_array_foreach(s->problems, i, p)
		if (one_problem(s, p, err) < 0)
			return -1;
	return 0;
}
