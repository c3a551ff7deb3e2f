#include "report_md.h"

#include <math.h>
#include <string.h>

#include "core/json.h"
#include "core/termsafe.h"
#include "store/store_site.h"
#include "html.h"
#include "profile.h"

void md_escape(struct buf *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': buf_adds(out, "&amp;"); break;
		case '<': buf_adds(out, "&lt;"); break;
		case '>': buf_adds(out, "&gt;"); break;
		case '\n': case '\r': case '\t': buf_addc(out, ' '); break;
		case '\\': case '`': case '*': case '_': case '{': case '}': case '[': case ']':
		case '(': case ')': case '#': case '+': case '-': case '!': case '|': case '~':
		case '"': case '\'':
			buf_addc(out, '\\');
			buf_addc(out, (char)c);
			break;
		default: {
			/* controls (C0, C1, bidi overrides) reach no reader or terminal */
			size_t k = text_control_len(s, 4);
			if (k) {
				buf_adds(out, "\xEF\xBF\xBD");
				s += k - 1;
			} else {
				buf_addc(out, (char)c);
			}
		}
		}
	}
}

void md_code(struct buf *out, const char *lang, const char *code)
{
	int run = 0, longest = 0;
	size_t n = strlen(code);

	for (const char *p = code; *p; p++) {
		run = *p == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	int fence = longest >= 3 ? longest + 1 : 3;
	for (int i = 0; i < fence; i++)
		buf_addc(out, '`');
	buf_adds(out, lang);
	buf_addc(out, '\n');
	for (const char *p = code; *p; p++) {
		unsigned char c = (unsigned char)*p;
		size_t k = c == '\n' || c == '\t' ? 0 : text_control_len(p, 4);
		if (k) {
			buf_adds(out, "\xEF\xBF\xBD");
			p += k - 1;
		} else {
			buf_addc(out, (char)c);
		}
	}
	if (n && code[n - 1] != '\n')
		buf_addc(out, '\n');
	for (int i = 0; i < fence; i++)
		buf_addc(out, '`');
	buf_addc(out, '\n');
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void speed(struct buf *out, double base, double t)
{
	if (isfinite(base) && isfinite(t) && t > 0) {
		fmt_num(out, base / t);
		buf_adds(out, "×");
	} else {
		buf_adds(out, "—");
	}
}

static void md_row(void *ctx, const char *label, const char *value)
{
	struct buf *out = ctx;

	buf_adds(out, "| ");
	md_escape(out, label);
	buf_adds(out, " | ");
	md_escape(out, value);
	buf_adds(out, " |\n");
}

static void md_cell(void *ctx, int i, const char *value)
{
	struct buf *out = ctx;

	buf_adds(out, i ? " " : "| ");
	md_escape(out, value);
	buf_adds(out, " |");
}

void report_md_profile(struct buf *out, const json_t *p)
{
	const json_t *k;
	size_t i;

	if (!json_is_object(p)) {
		buf_adds(out, "No profile recorded.\n");
		return;
	}
	buf_adds(out, "- GPU: ");
	md_escape(out, jget_str(p, "gpu_name", ""));
	buf_adds(out, "\n- limiter: **");
	md_escape(out, jget_str(p, "limiter", ""));
	buf_adds(out, "**\n- measured with: ");
	md_escape(out, jget_str(p, "tool", ""));
	buf_adds(out, "\n\n| metric | value |\n|---|--:|\n");
	profile_rows(p, md_row, out);
	if (!json_array_size(json_object_get(p, "kernels")))
		return;
	{
		json_t *g = profile_by_name(p), *e;
		if (json_array_size(g) > 1) {
			buf_adds(out, "\nWhere the time goes, by kernel:\n\n| Kernel | Launches | Time | Share |\n"
				 "|---|--:|--:|--:|\n");
			json_array_foreach(g, i, e) {
				buf_adds(out, "| ");
				md_escape(out, jget_str(e, "name", ""));
				buf_addf(out, " | %lld | %s | %s |\n", (long long)jget_int(e, "launches", 0),
					 jget_str(e, "time", ""), jget_str(e, "share", ""));
			}
		}
		json_decref(g);
	}
	buf_adds(out, "\n|");
	for (i = 0; profile_kernel_heads[i]; i++) {
		buf_adds(out, " ");
		md_escape(out, profile_kernel_heads[i]);
		buf_adds(out, " |");
	}
	buf_adds(out, "\n|---|--:|--:|--:|--:|--:|--:|---|\n");
	json_array_foreach(json_object_get(p, "kernels"), i, k) {
		if (i == PROFILE_MAX_KERNELS) {
			buf_addf(out, "\n%zu more kernels not listed.\n",
				 json_array_size(json_object_get(p, "kernels")) - i);
			break;
		}
		profile_kernel_cells(k, md_cell, out);
		buf_adds(out, "\n");
	}
}

#define MAX_STEP_IDEA 400   /* idea bytes per chain step */

void report_md_chain(struct buf *out, const json_t *chain)
{
	const json_t *v;
	size_t i;

	if (!json_array_size(chain)) {
		buf_adds(out, "No chain: no best kernel.\n");
		return;
	}
	buf_adds(out, "| step | round | candidate | kernel | speedup | idea |\n"
		 "|--:|--:|---|---|--:|---|\n");
	json_array_foreach(chain, i, v) {
		const char *idea = jget_str(v, "idea_text", NULL);
		char kh[13];
		snprintf(kh, sizeof(kh), "%s", jget_str(v, "kernel_hash", ""));
		buf_addf(out, "| %zu | %lld | ", i + 1, (long long)jget_int(v, "round", 0));
		md_escape(out, jget_str(v, "id", ""));
		buf_adds(out, " | ");
		md_escape(out, kh);
		buf_adds(out, " | ");
		speed(out, num(v, "eager_ms"), num(v, "time_ms"));
		buf_adds(out, " | ");
		if (idea) {
			struct buf t = BUF_INIT;
			size_t n = strlen(idea);
			if (n > MAX_STEP_IDEA) {
				n = MAX_STEP_IDEA;
				while (n > 0 && ((unsigned char)idea[n] & 0xC0) == 0x80)
					n--;
			}
			buf_add(&t, idea, n);
			if (n < strlen(idea))
				buf_adds(&t, " …");
			md_escape(out, t.s);
			buf_release(&t);
		} else {
			buf_adds(out, "(no idea: a seed kernel)");
		}
		buf_adds(out, " |\n");
	}
}

void report_md_problem(struct buf *out, const json_t *rep)
{
	const json_t *p = json_object_get(rep, "problem"), *st = json_object_get(rep, "stats");
	const json_t *rounds = json_object_get(rep, "rounds"), *best = json_object_get(rep, "best");
	const json_t *bk = json_object_get(rep, "best_kernel"), *v;
	long long cand = jget_int(st, "candidates", 0);
	size_t i;

	buf_adds(out, "# ");
	md_escape(out, jget_str(p, "id", "?"));
	buf_adds(out, "\n\n");
	buf_adds(out, "- name: ");
	md_escape(out, jget_str(p, "name", ""));
	buf_adds(out, "\n- operation: ");
	md_escape(out, jget_str(p, "op", ""));
	buf_adds(out, "\n- family: ");
	md_escape(out, jget_str(p, "family", ""));
	buf_adds(out, "\n- KernelBench file: ");
	md_escape(out, jget_str(p, "kernelbench_file", ""));
	buf_adds(out, "\n\n## Statistics\n\n");
	buf_addf(out, "- candidates: %lld\n- kernels (distinct): %lld\n- rounds: %lld\n", cand,
		 (long long)jget_int(st, "kernels", 0), (long long)jget_int(st, "rounds", 0));
	buf_addf(out, "- compiled: %lld (", (long long)jget_int(st, "compiled", 0));
	fmt_pct(out, cand ? (double)jget_int(st, "compiled", 0) / cand : NAN);
	/* compiled but never run on a GPU (compile-only): unknown, not 0% */
	if (jget_int(st, "checked", -1) == 0 && jget_int(st, "compiled", 0) > 0) {
		buf_adds(out, ")\n- correct: not checked (no GPU evaluation");
	} else {
		buf_addf(out, ")\n- correct: %lld (", (long long)jget_int(st, "correct", 0));
		fmt_pct(out, cand ? (double)jget_int(st, "correct", 0) / cand : NAN);
	}
	buf_adds(out, ")\n\n## Rounds\n\n");
	double so_far = NAN;
	const char *run = NULL;
	json_array_foreach(rounds, i, v) {
		const char *r = jget_str(v, "run_id", "");
		double s = num(v, "eager_ms") / num(v, "best_ms");
		if (!run || strcmp(run, r)) {
			so_far = NAN;
			run = r;
		}
		if (isfinite(s) && (!isfinite(so_far) || s > so_far))
			so_far = s;
		buf_adds(out, "- run ");
		md_escape(out, r);
		buf_addf(out, ", round %lld: %lld candidates, %lld compiled, ",
			 (long long)jget_int(v, "round", 0), (long long)jget_int(v, "candidates", 0),
			 (long long)jget_int(v, "compiled", 0));
		if (jget_int(v, "checked", -1) == 0 && jget_int(v, "compiled", 0) > 0)
			buf_adds(out, "correctness not checked; best ");
		else
			buf_addf(out, "%lld correct; best ", (long long)jget_int(v, "correct", 0));
		speed(out, num(v, "eager_ms"), num(v, "best_ms"));
		buf_adds(out, ", best so far ");
		if (isfinite(so_far)) {
			fmt_num(out, so_far);
			buf_adds(out, "×");
		} else {
			buf_adds(out, "—");
		}
		buf_adds(out, "\n");
	}
	if (!json_array_size(rounds))
		buf_adds(out, "No rounds recorded.\n");
	buf_adds(out, "\n## Best kernel per GPU\n\n");
	if (json_array_size(best)) {
		buf_adds(out, "| GPU | kernel | verification | time | vs eager | vs torch.compile |\n"
			 "|---|---|---|---|---|---|\n");
		json_array_foreach(best, i, v) {
			buf_adds(out, "| ");
			md_escape(out, jget_str(v, "gpu_name", ""));
			buf_adds(out, " | ");
			md_escape(out, jget_str(v, "kernel_hash", ""));
			buf_adds(out, " | ");
			md_escape(out, jget_str(v, "verdict", "unverified"));
			buf_adds(out, " | ");
			fmt_ms(out, num(v, "time_ms"));
			buf_adds(out, " | ");
			speed(out, num(v, "eager_ms"), num(v, "time_ms"));
			buf_adds(out, " | ");
			speed(out, num(v, "compile_ms"), num(v, "time_ms"));
			buf_adds(out, " |\n");
		}
	} else {
		buf_adds(out, "No correct kernel.\n");
	}
	if (json_is_object(bk)) {
		const json_t *k = json_object_get(bk, "kernel");
		const json_t *c0 = json_array_get(json_object_get(bk, "candidates"), 0);
		buf_adds(out, "\n## Best kernel\n\n- hash: ");
		md_escape(out, jget_str(k, "hash", ""));
		if (c0) {
			buf_adds(out, "\n- first produced by: ");
			md_escape(out, jget_str(c0, "id", ""));
			buf_addf(out, " (round %lld)\n- idea: ", (long long)jget_int(c0, "round", 0));
			md_escape(out, jget_str(c0, "idea_text", ""));
		}
		buf_adds(out, "\n\n");
		md_code(out, "cuda", jget_str(k, "source", ""));
		buf_adds(out, "\n## Profile of the best kernel\n\n");
		report_md_profile(out, json_object_get(rep, "best_profile"));
		buf_adds(out, "\n## Chain of ideas\n\n");
		report_md_chain(out, json_object_get(rep, "chain"));
	}
}

int report_md_from_store(struct store *s, const char *problem_id, struct buf *out,
			 struct buf *err)
{
	struct store_site ss;
	json_t *rep;
	int ret;

	if (store_site_init(&ss, s, err) < 0)
		return -1;
	buf_reset(err);
	rep = store_site_report(&ss, problem_id, err);
	if (rep) {
		report_md_problem(out, rep);
		ret = 0;
	} else {
		ret = err->len ? -1 : 1;
	}
	json_decref(rep);
	store_site_release(&ss);
	return ret;
}
