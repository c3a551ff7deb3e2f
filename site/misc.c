/* Methodology, downloads and the Markdown reports. */
#include "site_int.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "html.h"
#include "report_md.h"

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
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				list = realloc(list, cap * sizeof(*list));
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

int site_report_problem(struct site *s, const char *pid, const json_t *rep, struct buf *err)
{
	struct buf md = BUF_INIT, rel = BUF_INIT;
	const json_t *b0 = json_array_get(json_object_get(rep, "best"), 0);
	const json_t *st = json_object_get(rep, "stats");
	int ret;

	report_md_problem(&md, rep);
	buf_addf(&rel, "reports/%s.md", problem_slug(s, pid));
	ret = site_write_file(s, rel.s, md.s, md.len, err);
	if (!ret) {
		s->st->reports++;
		buf_adds(&s->report_index, "| [");
		md_escape(&s->report_index, pid);
		buf_addf(&s->report_index, "](%s.md) | %lld | %lld | ", problem_slug(s, pid),
			 (long long)jget_int(st, "candidates", 0), (long long)jget_int(st, "correct", 0));
		if (b0 && isfinite(jnum(b0, "speedup_eager"))) {
			fmt_num(&s->report_index, jnum(b0, "speedup_eager"));
			buf_adds(&s->report_index, "× (");
			md_escape(&s->report_index, jget_str(b0, "gpu_name", ""));
			buf_adds(&s->report_index, ")");
		} else {
			buf_adds(&s->report_index, "—");
		}
		buf_adds(&s->report_index, " |\n");
	}
	buf_release(&md);
	buf_release(&rel);
	return ret;
}

int site_reports(struct site *s, struct buf *err)
{
	struct buf idx = BUF_INIT;
	int ret;

	buf_adds(&idx, "# kforge reports\n\nOne report per problem (the `kforge report PROBLEM` form).\n\n"
		 "| problem | candidates | correct | best vs eager |\n|---|---|---|---|\n");
	buf_add(&idx, s->report_index.s, s->report_index.len);
	ret = site_write_file(s, "reports/README.md", idx.s, idx.len, err);
	buf_release(&idx);
	return ret;
}
