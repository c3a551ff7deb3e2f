/* Kernel views: the data of a kernel page, also embedded in problem pages
 * (best kernel). */
#include "site_int.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "html.h"
#include "core/xalloc.h"

#define MAX_LOG_SHOWN (64u << 10)   /* compile log bytes on a page */
#define MAX_IDEA_SHOWN (16u << 10)  /* idea text bytes rendered */

static const char *const roots[] = { "", "../", "../../", "../../../" };

static void set_raw(json_t *o, const char *key, struct buf *b)
{
	json_object_set_new(o, key, json_stringn(b->s, b->len));
	buf_reset(b);
}

/* The launch block's text, between "/\*@launch" and "@*\/". */
static void launch_block(struct buf *out, const char *src)
{
	const char *a = strstr(src, "/*@launch"), *b;

	if (!a)
		return;
	a += 9;
	b = strstr(a, "@*/");
	if (!b)
		return;
	while (a < b && (*a == '\n' || *a == '\r'))
		a++;
	buf_add(out, a, (size_t)(b - a));
	buf_trim(out);
}

static const char *status_class(const char *st)
{
	if (!strcmp(st, "correct") || !strcmp(st, "verified") || !strcmp(st, "ok"))
		return "good";
	if (!strcmp(st, "incorrect") || !strcmp(st, "failed"))
		return "bad";
	if (!strcmp(st, "pending") || !strcmp(st, "not_run"))
		return "neutral";
	return "warn";
}

void site_set_status(json_t *o, const char *key)
{
	json_object_set_new(o, "status_cls", json_string(status_class(jget_str(o, key, ""))));
}

void site_kernel_view(struct site *s, json_t *k, int depth)
{
	json_t *kern = json_object_get(k, "kernel"), *v;
	const char *src = jget_str(kern, "source", "");
	const char *root = roots[depth < 4 ? depth : 3];
	struct buf b = BUF_INIT;
	size_t i;

	html_highlight_cuda(&b, src, strlen(src));
	set_raw(kern, "source_html", &b);
	launch_block(&b, src);
	if (b.len)
		set_raw(kern, "launch", &b);
	fmt_bytes(&b, jnum(kern, "bytes"));
	set_raw(kern, "bytes_s", &b);
	site_kernel_path(&b, jget_str(kern, "hash", ""));
	{
		struct buf l = BUF_INIT;
		buf_addf(&l, "%s%s", root, b.s);
		json_object_set_new(kern, "link", json_string(l.s));
		buf_release(&l);
	}
	buf_reset(&b);
	json_object_set_new(kern, "short", json_stringn(jget_str(kern, "hash", ""),
		strlen(jget_str(kern, "hash", "")) < 12 ? strlen(jget_str(kern, "hash", "")) : 12));

	static const char *const lists[] = { "candidates", "evals", "verifications", "compiles" };
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char key[64];
		snprintf(key, sizeof(key), "has_%s", lists[i]);
		json_object_set_new(k, key, json_boolean(json_array_size(json_object_get(k, lists[i]))));
	}
	json_array_foreach(json_object_get(k, "compiles"), i, v) {
		site_set_status(v, "status");
		json_object_set_new(v, "has_kernels",
				    json_boolean(json_array_size(json_object_get(v, "kernels"))));
		jset_ms(v, "duration_s", jnum(v, "duration_ms"));
		const char *log = jget_str(v, "log", "");
		json_object_set_new(v, "has_log", json_boolean(log && *log));
		size_t ll = strlen(log);
		if (ll > MAX_LOG_SHOWN) {
			/* cut at a character boundary and say so */
			size_t cut = MAX_LOG_SHOWN;
			while (cut > 0 && ((unsigned char)log[cut] & 0xC0) == 0x80)
				cut--;
			json_object_set_new(v, "log", json_sprintf("%.*s\n[... %zu more bytes not shown]",
					    (int)cut, log, ll - cut));
		}
		size_t j;
		json_t *ck;
		json_array_foreach(json_object_get(v, "kernels"), j, ck) {
			long long spill = jget_int(ck, "spill_store_bytes", 0) +
					  jget_int(ck, "spill_load_bytes", 0);
			json_object_set_new(ck, "spills", json_boolean(spill > 0));
		}
	}
	json_array_foreach(json_object_get(k, "evals"), i, v) {
		double t = jnum(v, "time_mean_ms");
		site_set_status(v, "status");
		jset_ms(v, "time_s", t);
		jset_ms(v, "median_s", jnum(v, "time_median_ms"));
		jset_ms(v, "std_s", jnum(v, "time_std_ms"));
		if (json_is_integer(json_object_get(v, "n_trials")))
			json_object_set_new(v, "trials_s", json_sprintf("%lld%s",
				(long long)jget_int(v, "n_trials", 0),
				json_is_integer(json_object_get(v, "pruned_after")) ? ", pruned" : ""));
		else
			json_object_set_new(v, "trials_s", json_string("—"));
		jset_speed(v, "speedup_eager", jnum(v, "eager_ms"), t);
		jset_speed(v, "speedup_compile", jnum(v, "compile_ms"), t);
		jset_num(v, "max_abs_s", jnum(v, "max_abs_err"));
		/* Roofline: the time the GPU's measured ceilings allow. */
		double bw = jnum(v, "peak_bw_gbs"), tf = jnum(v, "peak_fp32_tflops");
		double fb = jnum(v, "min_bytes"), ff = jnum(v, "flops"), floor_ms = NAN;
		if (isfinite(bw) && bw > 0 && isfinite(fb))
			floor_ms = fb / (bw * 1e9) * 1e3;
		if (isfinite(tf) && tf > 0 && isfinite(ff)) {
			double c = ff / (tf * 1e12) * 1e3;
			floor_ms = isfinite(floor_ms) ? fmax(floor_ms, c) : c;
		}
		if (isfinite(floor_ms) && isfinite(t) && t > 0) {
			json_object_set_new(v, "roofline_v", json_real(floor_ms / t));
			jset_pct(v, "roofline_s", floor_ms / t);
		} else {
			json_object_set_new(v, "roofline_s", json_string("—"));
		}
		json_object_set_new(v, "problem_link", json_sprintf("%sproblems/%s.html", root,
				    problem_slug(s, jget_str(v, "problem_id", ""))));
	}
	json_array_foreach(json_object_get(k, "verifications"), i, v) {
		site_set_status(v, "verdict");
		struct buf e = BUF_INIT;
		json_t *flags = json_loads(jget_str(v, "review_flags", "[]"), 0, NULL), *f;
		size_t j;
		json_array_foreach(flags, j, f)
			if (json_is_string(f))
				buf_addf(&e, "%s%s", e.len ? ", " : "", json_string_value(f));
		json_decref(flags);
		json_object_set_new(v, "flags_s", store_site_text(e.s, e.len));
		buf_release(&e);
	}
	json_array_foreach(json_object_get(k, "candidates"), i, v) {
		const char *idea = jget_str(v, "idea_text", NULL);
		site_set_status(v, "status");
		if (idea) {
			html_markdown(&b, idea, strnlen(idea, MAX_IDEA_SHOWN));
			set_raw(v, "idea_html", &b);
		}
		json_object_set_new(v, "problem_link", json_sprintf("%sproblems/%s.html", root,
				    problem_slug(s, jget_str(v, "problem_id", ""))));
	}
	buf_release(&b);
}

/* One thread's share of the kernel pages: its own store connection,
 * queries and renderer; hashes in [lo, hi). */
struct kworker {
	struct site *s;
	struct site_out out;
	struct store store;
	struct store_site ss;
	char lo[8], hi[8];
	long kernels;
	struct buf err, path;
	int ret;
	pthread_t th;
};

static int one_kernel(void *vctx, const char *hash)
{
	struct kworker *w = vctx;
	json_t *k = store_site_kernel(&w->ss, hash, &w->err);

	if (!k)
		return w->err.len ? -1 : 0;
	site_kernel_view(w->s, k, 2);
	json_object_set_new(k, "title", json_sprintf("Kernel %.12s", hash));
	site_kernel_path(&w->path, hash);
	int r = site_write_page_to(w->s, &w->out, T_KERNEL, k, w->path.s, 2, &w->err);
	json_decref(k);
	w->kernels++;
	return r < 0 ? -1 : 0;
}

static void *kworker_run(void *arg)
{
	struct kworker *w = arg;
	int opened = 0, ssok = 0;

	w->ret = -1;
	if (store_open(&w->store, w->s->o->db_path, STORE_READONLY, &w->err) < 0)
		goto out;
	opened = 1;
	if (store_site_init(&w->ss, &w->store, &w->err) < 0)
		goto out;
	ssok = 1;
	/* One read transaction: one snapshot, no per-query locking. */
	if (store_read_begin(&w->store, &w->err) < 0)
		goto out;
	w->ret = store_site_each_kernel(&w->ss, w->lo[0] ? w->lo : NULL, w->hi[0] ? w->hi : NULL,
					one_kernel, w, &w->err) ? -1 : 0;
	store_read_end(&w->store);
out:
	if (ssok)
		store_site_release(&w->ss);
	if (opened)
		store_close(&w->store);
	return NULL;
}

int site_pages_kernels(struct site *s, struct buf *err)
{
	int total = s->threads < 1 ? 1 : s->threads > 16 ? 16 : s->threads;
	int n = total, ret = 0, started = 0;
	struct kworker *w = xcalloc((size_t)n, sizeof(*w));

	for (int i = 0; i < n; i++) {
		w[i].s = s;
		buf_init(&w[i].out.page);
		buf_init(&w[i].err);
		buf_init(&w[i].path);
		mustache_partials_dir(&w[i].out.parts, s->o->templates_dir);
		/* split the hash space by its first two hex digits */
		if (i > 0)
			snprintf(w[i].lo, sizeof(w[i].lo), "%02x", (unsigned)(256 * i / n) & 0xffu);
		if (i < n - 1)
			snprintf(w[i].hi, sizeof(w[i].hi), "%02x", (unsigned)(256 * (i + 1) / n) & 0xffu);
	}
	if (n == 1) {
		kworker_run(&w[0]);
	} else {
		for (started = 0; started < n; started++)
			if (pthread_create(&w[started].th, NULL, kworker_run, &w[started])) {
				ret = kf_err(err, "site: cannot start a thread");
				break;
			}
		for (int i = 0; i < started; i++)
			pthread_join(w[i].th, NULL);
		if (started < n)
			n = started;
	}
	for (int i = 0; i < total; i++) {
		if (i < n && w[i].ret < 0 && !ret)
			ret = kf_err(err, "%s", w[i].err.s);
		s->st->kernels += w[i].kernels;
		s->st->pages += w[i].out.pages;
		mustache_partials_release(&w[i].out.parts);
		buf_release(&w[i].out.page);
		buf_release(&w[i].err);
		buf_release(&w[i].path);
	}
	free(w);
	return ret;
}
