#include "site_int.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/json.h"
#include "core/sha256.h"
#include "core/version.h"
#include "html.h"

#define MARKER ".kforge-site"

static const char *const tpl_names[T_N] = {
	[T_INDEX] = "index", [T_PROBLEM] = "problem", [T_KERNEL] = "kernel",
	[T_CATEGORY] = "category", [T_METHODOLOGY] = "methodology", [T_DOWNLOADS] = "downloads",
	[T_REPORT] = "report",
};

void site_problem_slug(struct buf *out, const char *id)
{
	size_t n = 0;

	buf_reset(out);
	for (const char *p = id; *p && n < 120; p++, n++) {
		char c = *p;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-')
			buf_addc(out, c);
		else if (c == '.' && n > 0)
			buf_addc(out, c);
		else if (c == '/')
			buf_addc(out, '-');
		else
			buf_addc(out, '_');
	}
	if (!out->len)
		buf_adds(out, "_");
}

void site_kernel_path(struct buf *out, const char *hash)
{
	size_t n = strlen(hash);
	int hex = n >= 8 && n <= 128;
	char h[65];

	for (size_t i = 0; hex && i < n; i++)
		hex = (hash[i] >= '0' && hash[i] <= '9') || (hash[i] >= 'a' && hash[i] <= 'f');
	if (!hex) {
		sha256_hex(hash, n, h);
		hash = h;
	}
	buf_reset(out);
	buf_addf(out, "kernels/%.2s/%s.html", hash, hash);
}

const char *problem_slug(struct site *s, const char *problem_id)
{
	return jget_str(s->slugs, problem_id, "_");
}

double jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void jset_buf(json_t *o, const char *key, struct buf *b)
{
	json_object_set_new(o, key, json_stringn(b->s, b->len));
	buf_release(b);
}

void jset_num(json_t *o, const char *key, double v)
{
	struct buf b = BUF_INIT;

	fmt_num(&b, v);
	jset_buf(o, key, &b);
}

void jset_ms(json_t *o, const char *key, double v)
{
	struct buf b = BUF_INIT;

	fmt_ms(&b, v);
	jset_buf(o, key, &b);
}

void jset_pct(json_t *o, const char *key, double ratio)
{
	struct buf b = BUF_INIT;

	fmt_pct(&b, ratio);
	jset_buf(o, key, &b);
}

void jset_int(json_t *o, const char *key, long long v)
{
	struct buf b = BUF_INIT;

	fmt_int(&b, v);
	jset_buf(o, key, &b);
}

void jset_speed(json_t *o, const char *key, double base, double t)
{
	struct buf b = BUF_INIT;
	char raw[64];

	if (isfinite(base) && isfinite(t) && t > 0) {
		fmt_num(&b, base / t);
		buf_adds(&b, "×");
		snprintf(raw, sizeof(raw), "%s_v", key);
		json_object_set_new(o, raw, json_real(base / t));
	} else {
		buf_adds(&b, "—");
	}
	jset_buf(o, key, &b);
}

static int ensure_dir(struct site *s, const char *path, struct buf *err)
{
	static __thread char last[4096];
	char dir[4096];
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (!n || n >= sizeof(dir))
		return 0;
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (!strcmp(dir, last))
		return 0;
	if (mkdir_p(dir, err) < 0)
		return -1;
	snprintf(last, sizeof(last), "%s", dir);
	(void)s;
	return 0;
}

int site_write_file(struct site *s, const char *rel, const void *data, size_t len,
		    struct buf *err)
{
	struct buf path = BUF_INIT;
	FILE *f;
	int ret = -1;

	path_join(&path, s->stage.s, rel);
	if (ensure_dir(s, path.s, err) < 0)
		goto out;
	/* Plain writes: the staging directory as a whole is renamed into
	 * place at the end, which is what makes the site update atomic. */
	f = fopen(path.s, "wb");
	if (!f) {
		kf_err(err, "%s: %s", path.s, strerror(errno));
		goto out;
	}
	if (fwrite(data, 1, len, f) != len) {
		kf_err(err, "%s: %s", path.s, strerror(errno));
		fclose(f);
		goto out;
	}
	if (fclose(f) != 0) {
		kf_err(err, "%s: %s", path.s, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	buf_release(&path);
	return ret;
}

int site_write_page_to(struct site *s, struct site_out *w, int t, json_t *data, const char *rel,
		       int depth, struct buf *err)
{
	static const char *const roots[] = { "", "../", "../../", "../../../" };
	const char *k;
	json_t *v;

	json_object_set_new(data, "root", json_string(roots[depth < 4 ? depth : 3]));
	json_object_foreach(s->common, k, v)
		if (!json_object_get(data, k))
			json_object_set(data, k, v);
	buf_reset(&w->page);
	if (mustache_render(&s->tpl[t], data, &w->parts, &w->page, err) < 0) {
		struct buf e = BUF_INIT;
		buf_addf(&e, "%s: %s", rel, err->s);
		buf_reset(err);
		buf_add(err, e.s, e.len);
		buf_release(&e);
		return -1;
	}
	w->pages++;
	return site_write_file(s, rel, w->page.s, w->page.len, err);
}

int site_write_page(struct site *s, int t, json_t *data, const char *rel, int depth,
		    struct buf *err)
{
	return site_write_page_to(s, &s->main, t, data, rel, depth, err);
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int rm_tree(const char *path)
{
	return nftw(path, rm_cb, 32, FTW_DEPTH | FTW_PHYS);
}

static int dir_is_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return 1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

static int load_templates(struct site *s, struct buf *err)
{
	struct buf path = BUF_INIT, text = BUF_INIT;
	int ret = 0;

	for (int t = 0; t < T_N && !ret; t++) {
		buf_reset(&path);
		buf_addf(&path, "%s/%s.mustache", s->o->templates_dir, tpl_names[t]);
		buf_reset(&text);
		if (buf_read_file(&text, path.s, MUSTACHE_MAX_TEMPLATE, err) < 0) {
			ret = -1;
			break;
		}
		mustache_set_name(&s->tpl[t], path.s);
		if (mustache_compile(&s->tpl[t], text.s, text.len, err) < 0)
			ret = -1;
	}
	if (!ret) {
		buf_reset(&path);
		buf_addf(&path, "%s/style.css", s->o->templates_dir);
		buf_reset(&text);
		if (buf_read_file(&text, path.s, 1u << 20, err) < 0 ||
		    site_write_file(s, "style.css", text.s, text.len, err) < 0)
			ret = -1;
	}
	/* site.js is optional: the pages work without it */
	buf_reset(&path);
	buf_addf(&path, "%s/site.js", s->o->templates_dir);
	if (!ret && file_exists(path.s)) {
		buf_reset(&text);
		if (buf_read_file(&text, path.s, 1u << 20, err) < 0 ||
		    site_write_file(s, "site.js", text.s, text.len, err) < 0)
			ret = -1;
	}
	buf_release(&path);
	buf_release(&text);
	return ret;
}

static int prepare(struct site *s, struct buf *err)
{
	struct buf slug = BUF_INIT, gen = BUF_INIT;
	json_t *taken = json_object(), *p;
	size_t i;

	s->problems = store_site_problems(&s->ss, err);
	if (!s->problems)
		goto fail;
	s->slugs = json_object();
	json_array_foreach(s->problems, i, p) {
		const char *id = jget_str(p, "id", "");
		site_problem_slug(&slug, id);
		for (int n = 2; json_object_get(taken, slug.s); n++) {
			site_problem_slug(&slug, id);
			buf_addf(&slug, "-%d", n);
		}
		json_object_set_new(taken, slug.s, json_true());
		json_object_set_new(s->slugs, id, json_string(slug.s));
		json_object_set_new(p, "slug", json_string(slug.s));
	}
	s->best = store_site_best(&s->ss, NULL, err);
	if (!s->best)
		goto fail;
	if (!(s->flagged = store_site_flagged(&s->ss, err)))
		goto fail;
	if (!(s->gpus = store_site_gpu_names(&s->ss, err)))
		goto fail;
	if (store_site_generated_at(&s->ss, &gen, err) < 0)
		goto fail;
	s->common = json_object();
	json_object_set_new(s->common, "generated_at", json_string(gen.s));
	json_object_set_new(s->common, "kforge_version", json_string(kforge_version()));
	json_decref(taken);
	buf_release(&slug);
	buf_release(&gen);
	return 0;
fail:
	json_decref(taken);
	buf_release(&slug);
	buf_release(&gen);
	return -1;
}

static int swap_into_place(struct site *s, struct buf *err)
{
	const char *out = s->o->out_dir;
	struct buf old = BUF_INIT;
	int ret = -1;

	if (is_dir(out)) {
		buf_addf(&old, "%s.old-%ld", out, (long)getpid());
		if (rename(out, old.s) < 0) {
			kf_err(err, "rename %s: %s", out, strerror(errno));
			goto out;
		}
	}
	if (rename(s->stage.s, out) < 0) {
		kf_err(err, "rename %s -> %s: %s", s->stage.s, out, strerror(errno));
		if (old.len)
			rename(old.s, out);
		goto out;
	}
	if (old.len)
		rm_tree(old.s);
	ret = 0;
out:
	buf_release(&old);
	return ret;
}

int site_build(const struct site_options *oo, struct site_stats *st, struct buf *err)
{
	struct site_options opts = *oo, *o = &opts;
	struct buf outdir = BUF_INIT;
	struct site s;
	struct buf marker = BUF_INIT;
	int ret = -1, opened = 0, ssok = 0;

	memset(&s, 0, sizeof(s));
	memset(st, 0, sizeof(*st));
	/* "public/" and "public" are the same directory; the staging one is
	 * its sibling, never inside it. */
	buf_adds(&outdir, o->out_dir);
	while (outdir.len > 1 && outdir.s[outdir.len - 1] == '/')
		buf_truncate(&outdir, outdir.len - 1);
	o->out_dir = outdir.s;
	s.o = o;
	s.st = st;
	buf_init(&s.stage);
	buf_init(&s.main.page);
	buf_init(&s.report_index);
	buf_init(&s.report_index_html);
	for (int t = 0; t < T_N; t++)
		mustache_init(&s.tpl[t]);
	mustache_partials_dir(&s.main.parts, o->templates_dir);
	s.threads = o->threads > 0 ? o->threads : 1;

	/* Never replace a directory that kforge did not make. */
	path_join(&marker, o->out_dir, MARKER);
	if (is_dir(o->out_dir) && !dir_is_empty(o->out_dir) && !file_exists(marker.s)) {
		kf_err(err, "%s exists and is not a kforge site (no %s); remove it or choose "
		       "another directory", o->out_dir, MARKER);
		goto out;
	}
	if (file_exists(o->out_dir) && !is_dir(o->out_dir)) {
		kf_err(err, "%s exists and is not a directory", o->out_dir);
		goto out;
	}
	if (!file_exists(o->db_path)) {
		kf_err(err, "%s: no such store", o->db_path);
		goto out;
	}
	if (store_open(&s.store, o->db_path, STORE_READONLY, err) < 0)
		goto out;
	opened = 1;
	if (store_site_init(&s.ss, &s.store, err) < 0)
		goto out;
	ssok = 1;
	buf_addf(&s.stage, "%s.tmp-%ld", o->out_dir, (long)getpid());
	if (file_exists(s.stage.s))
		rm_tree(s.stage.s);
	if (mkdir_p(s.stage.s, err) < 0)
		goto out;
	if (site_write_file(&s, MARKER, "kforge site\n", 12, err) < 0 ||
	    load_templates(&s, err) < 0 || prepare(&s, err) < 0)
		goto fail;
	if (site_pages_index(&s, err) < 0 || site_pages_problems(&s, err) < 0 ||
	    site_pages_methodology(&s, err) < 0 || site_pages_downloads(&s, err) < 0 ||
	    site_reports(&s, err) < 0)
		goto fail;
	if (!o->no_kernel_pages && site_pages_kernels(&s, err) < 0)
		goto fail;
	if (swap_into_place(&s, err) < 0)
		goto fail;
	st->pages += s.main.pages;
	ret = 0;
	goto out;
fail:
	rm_tree(s.stage.s);
out:
	json_decref(s.slugs);
	json_decref(s.problems);
	json_decref(s.best);
	json_decref(s.flagged);
	json_decref(s.gpus);
	json_decref(s.common);
	for (int t = 0; t < T_N; t++)
		mustache_release(&s.tpl[t]);
	mustache_partials_release(&s.main.parts);
	if (ssok)
		store_site_release(&s.ss);
	if (opened)
		store_close(&s.store);
	buf_release(&s.stage);
	buf_release(&s.main.page);
	buf_release(&s.report_index);
	buf_release(&s.report_index_html);
	buf_release(&marker);
	buf_release(&outdir);
	return ret;
}
