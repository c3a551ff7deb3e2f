/* Methodology, downloads and the Markdown reports. */
#include "site_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/json.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "html.h"
#include "report_md.h"
#include "core/xalloc.h"

#define MAX_MD (1u << 20)

int site_pages_methodology(struct site *s, struct buf *err)
{
	json_t *d = store_site_methodology(&s->ss, err), *v;
	struct buf path = BUF_INIT, md = BUF_INIT, html = BUF_INIT;
	size_t i;
	int ret = -1;

	if (!d)
		return -1;
	buf_addf(&path, "%s/methodology.md", s->o->templates_dir);
	if (buf_read_file(&md, path.s, MAX_MD, err) < 0)
		goto out;
	html_markdown(&html, md.s, md.len);
	json_object_set_new(d, "text_html", json_stringn(html.s, html.len));
	json_array_foreach(json_object_get(d, "baselines"), i, v) {
		jset_ms(v, "mean_s", jnum(v, "mean_ms"));
		jset_ms(v, "median_s", jnum(v, "median_ms"));
	}
	json_array_foreach(json_object_get(d, "gpus"), i, v) {
		struct buf b = BUF_INIT;
		fmt_bytes(&b, jnum(v, "memory_bytes"));
		json_object_set_new(v, "memory_s", json_stringn(b.s, b.len));
		buf_reset(&b);
		fmt_bytes(&b, jnum(v, "l2_bytes"));
		json_object_set_new(v, "l2_s", json_stringn(b.s, b.len));
		buf_release(&b);
	}
	json_object_set_new(d, "title", json_string("Methodology"));
	ret = site_write_page(s, T_METHODOLOGY, d, "methodology.html", 0, err);
out:
	json_decref(d);
	buf_release(&path);
	buf_release(&md);
	buf_release(&html);
	return ret;
}

static int is_tarball(const char *n)
{
	static const char *const sfx[] = { ".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.xz",
					   ".tar.bz2", NULL };
	size_t ln = strlen(n);

	for (int i = 0; sfx[i]; i++) {
		size_t ls = strlen(sfx[i]);
		if (ln > ls && !strcmp(n + ln - ls, sfx[i]))
			return 1;
	}
	return 0;
}

/* Puts dist/NAME into the staging directory as downloads/NAME: a hard
 * link where dist and the site share a file system (no copy of a
 * multi-GB tarball), else a copy. */
static int place_file(struct site *s, const char *src, const char *name, struct buf *err)
{
	struct buf dst = BUF_INIT, dir = BUF_INIT;
	char chunk[1 << 16];
	int in = -1, out = -1, ret = -1;
	ssize_t n;

	path_join(&dir, s->stage.s, "downloads");
	path_join(&dst, dir.s, name);
	if (mkdir_p(dir.s, err) < 0)
		goto done;
	/* The file a symlink in --dist names, not the link: a relative one
	 * would dangle in downloads/. */
	if (linkat(AT_FDCWD, src, AT_FDCWD, dst.s, AT_SYMLINK_FOLLOW) == 0) {
		ret = 0;
		goto done;
	}
	in = open(src, O_RDONLY | O_CLOEXEC);
	out = in < 0 ? -1 : open(dst.s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (in < 0 || out < 0) {
		kf_err(err, "%s: %s", in < 0 ? src : dst.s, strerror(errno));
		goto done;
	}
	while ((n = read(in, chunk, sizeof(chunk))) > 0)
		if (write_all_fd(out, chunk, (size_t)n) < 0) {
			kf_err(err, "%s: %s", dst.s, strerror(errno));
			goto done;
		}
	if (n < 0) {
		kf_err(err, "%s: %s", src, strerror(errno));
		goto done;
	}
	if (close(out) < 0) {
		out = -1;
		kf_err(err, "%s: %s", dst.s, strerror(errno));
		goto done;
	}
	out = -1;
	ret = 0;
done:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	buf_release(&dst);
	buf_release(&dir);
	return ret;
}

/* Where downloads.html links NAME: base_url/NAME (percent-encoded), or
 * the copy in downloads/. */
static json_t *download_href(struct site *s, const char *name)
{
	struct buf u = BUF_INIT;
	json_t *j;

	if (s->o->base_url) {
		buf_adds(&u, s->o->base_url);
		while (u.len && u.s[u.len - 1] == '/')
			buf_truncate(&u, u.len - 1);
		buf_addc(&u, '/');
	} else {
		buf_adds(&u, "downloads/");
	}
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '.' || *p == '-' || *p == '_')
			buf_addc(&u, (char)*p);
		else
			buf_addf(&u, "%%%02X", *p);
	}
	j = json_stringn(u.s, u.len);
	buf_release(&u);
	return j;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(jget_str(*(const json_t *const *)a, "name", ""),
		      jget_str(*(const json_t *const *)b, "name", ""));
}

int site_pages_downloads(struct site *s, struct buf *err)
{
	json_t *d = json_object(), *files = json_array();
	struct buf path = BUF_INIT;
	int ret = -1;

	if (s->o->dist_dir) {
		DIR *dir = opendir(s->o->dist_dir);
		struct dirent *e;
		json_t **list = NULL;
		size_t n = 0, cap = 0;

		if (!dir) {
			kf_err(err, "--dist %s: cannot open the directory", s->o->dist_dir);
			goto out;
		}
		while ((e = readdir(dir))) {
			struct stat sb;
			char hex[65];
			if (e->d_name[0] == '.' || !is_tarball(e->d_name))
				continue;
			path_join(&path, s->o->dist_dir, e->d_name);
			if (stat(path.s, &sb) < 0 || !S_ISREG(sb.st_mode))
				continue;
			if (sha256_file_hex(path.s, hex, err) < 0) {
				closedir(dir);
				for (size_t i = 0; i < n; i++)
					json_decref(list[i]);
				free(list);
				goto out;
			}
			json_t *f = json_object();
			struct buf sz = BUF_INIT;
			fmt_bytes(&sz, (double)sb.st_size);
			json_object_set_new(f, "name", store_site_text(e->d_name, strlen(e->d_name)));
			json_object_set_new(f, "bytes", json_integer(sb.st_size));
			json_object_set_new(f, "size_s", json_stringn(sz.s, sz.len));
			json_object_set_new(f, "sha256", json_string(hex));
			buf_release(&sz);
			/* NAME.sha256 beside it (kforge pack writes one) goes along */
			struct buf twin = BUF_INIT, tname = BUF_INIT;
			buf_addf(&twin, "%s.sha256", path.s);
			buf_addf(&tname, "%s.sha256", e->d_name);
			int has_twin = file_exists(twin.s);
			int perr = !s->o->base_url &&
				   (place_file(s, path.s, e->d_name, err) < 0 ||
				    (has_twin && place_file(s, twin.s, tname.s, err) < 0));
			json_object_set_new(f, "href", download_href(s, e->d_name));
			if (has_twin)
				json_object_set_new(f, "sha_href", download_href(s, tname.s));
			buf_release(&twin);
			buf_release(&tname);
			if (perr) {
				json_decref(f);
				closedir(dir);
				for (size_t i = 0; i < n; i++)
					json_decref(list[i]);
				free(list);
				goto out;
			}
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				list = xrealloc(list, cap * sizeof(*list));
			}
			list[n++] = f;
		}
		closedir(dir);
		if (n)
			qsort(list, n, sizeof(*list), by_name);
		for (size_t i = 0; i < n; i++)
			json_array_append_new(files, list[i]);
		free(list);
		json_object_set_new(d, "dist_given", json_true());
	}
	if (s->o->card_path && file_exists(s->o->card_path)) {
		struct buf md = BUF_INIT, html = BUF_INIT;
		const char *body;
		if (buf_read_file(&md, s->o->card_path, MAX_MD, err) < 0) {
			buf_release(&md);
			goto out;
		}
		/* Hugging Face cards open with YAML front matter: not for readers. */
		body = md.s;
		if (!strncmp(body, "---\n", 4)) {
			const char *end = strstr(body + 4, "\n---\n");
			if (end)
				body = end + 5;
		}
		html_markdown(&html, body, strlen(body));
		json_object_set_new(d, "card_html", json_stringn(html.s, html.len));
		buf_release(&md);
		buf_release(&html);
	}
	json_object_set(d, "files", files);
	json_object_set_new(d, "title", json_string("Downloads"));
	ret = site_write_page(s, T_DOWNLOADS, d, "downloads.html", 0, err);
out:
	json_decref(d);
	json_decref(files);
	buf_release(&path);
	return ret;
}

/* One row of the report index, linking SLUG.ext. */
static void index_row(struct buf *out, struct site *s, const char *pid, const json_t *st,
		      const json_t *b0, const char *ext)
{
	buf_adds(out, "| [");
	md_escape(out, pid);
	buf_addf(out, "](%s.%s) | %lld | ", problem_slug(s, pid), ext,
		 (long long)jget_int(st, "candidates", 0));
	if (jget_int(st, "checked", -1) == 0 && jget_int(st, "compiled", 0) > 0)
		buf_adds(out, "not checked | ");
	else
		buf_addf(out, "%lld | ", (long long)jget_int(st, "correct", 0));
	if (b0 && isfinite(jnum(b0, "speedup_eager"))) {
		fmt_num(out, jnum(b0, "speedup_eager"));
		buf_adds(out, "× (");
		md_escape(out, jget_str(b0, "gpu_name", ""));
		buf_adds(out, ")");
	} else {
		buf_adds(out, "—");
	}
	buf_adds(out, " |\n");
}

/* A Markdown report as an HTML page (reports/NAME.html): cmark in safe
 * mode, as every Markdown of the site; the report's store text is already
 * escaped by report_md. */
static int report_page(struct site *s, const char *name, const char *title, const char *pid,
		       const struct buf *md, struct buf *err)
{
	json_t *d = json_object();
	struct buf html = BUF_INIT, rel = BUF_INIT;
	int ret;

	html_markdown(&html, md->s, md->len);
	json_object_set_new(d, "body_html", json_stringn(html.s, html.len));
	json_object_set_new(d, "title", json_string(title));
	json_object_set_new(d, "md_link", json_sprintf("%s.md", name));
	if (pid) {
		json_object_set_new(d, "problem_id", json_string(pid));
		json_object_set_new(d, "problem_link", json_sprintf("../problems/%s.html",
								    problem_slug(s, pid)));
	}
	buf_addf(&rel, "reports/%s.html", name);
	ret = site_write_page(s, T_REPORT, d, rel.s, 1, err);
	json_decref(d);
	buf_release(&html);
	buf_release(&rel);
	return ret;
}

int site_report_problem(struct site *s, const char *pid, const json_t *rep, struct buf *err)
{
	struct buf md = BUF_INIT, rel = BUF_INIT, title = BUF_INIT;
	const json_t *b0 = json_array_get(json_object_get(rep, "best"), 0);
	const json_t *st = json_object_get(rep, "stats");
	int ret;

	report_md_problem(&md, rep);
	buf_addf(&rel, "reports/%s.md", problem_slug(s, pid));
	buf_addf(&title, "Report: %s", pid);
	ret = site_write_file(s, rel.s, md.s, md.len, err);
	if (!ret)
		ret = report_page(s, problem_slug(s, pid), title.s, pid, &md, err);
	if (!ret) {
		s->st->reports++;
		index_row(&s->report_index, s, pid, st, b0, "md");
		index_row(&s->report_index_html, s, pid, st, b0, "html");
	}
	buf_release(&md);
	buf_release(&rel);
	buf_release(&title);
	return ret;
}

int site_reports(struct site *s, struct buf *err)
{
	static const char head[] =
		"# kforge reports\n\nOne report per problem (the `kforge report PROBLEM` form).\n\n"
		"| problem | candidates | correct | best vs eager |\n|---|---|---|---|\n";
	struct buf idx = BUF_INIT;
	int ret;

	buf_adds(&idx, head);
	buf_add(&idx, s->report_index.s, s->report_index.len);
	ret = site_write_file(s, "reports/README.md", idx.s, idx.len, err);
	buf_reset(&idx);
	buf_adds(&idx, head);
	buf_add(&idx, s->report_index_html.s, s->report_index_html.len);
	if (!ret) {
		/* index.html's Markdown twin is README.md */
		struct buf b = BUF_INIT;
		html_markdown(&b, idx.s, idx.len);
		json_t *d = json_object();
		json_object_set_new(d, "body_html", json_stringn(b.s, b.len));
		json_object_set_new(d, "title", json_string("Reports"));
		json_object_set_new(d, "md_link", json_string("README.md"));
		ret = site_write_page(s, T_REPORT, d, "reports/index.html", 1, err);
		json_decref(d);
		buf_release(&b);
	}
	buf_release(&idx);
	return ret;
}
