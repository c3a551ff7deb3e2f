/* kforge dataset verify: checksums, JSONL lines against schema.json, the
 * card's counts against the data. Two passes over the tarball: the small
 * metadata files first, then every byte. */
#include "dataset.h"
#include "ds_int.h"
#include "core/json.h"
#include "core/sha256.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_META ((int64_t)64 << 20)
#define MAX_PROBLEMS 50
#define MAX_ENTRIES 10000000

struct vstate {
	struct buf *report;
	int problems;
	json_t *names;      /* path -> 1 (pass 1) */
	json_t *sums;       /* path -> hex from SHA256SUMS */
	json_t *schema;     /* schema.json "files" */
	json_t *lines;      /* path -> lines counted */
	struct buf card;
	int opened;         /* the file could be read: archive errors are a verdict */
};

static void problem(struct vstate *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct vstate *v, const char *fmt, ...)
{
	va_list ap;
	if (++v->problems > MAX_PROBLEMS)
		return;
	va_start(ap, fmt);
	buf_vaddf(v->report, fmt, ap);
	va_end(ap);
	buf_addc(v->report, '\n');
}

struct archive *ds_open_archive(const char *path, struct buf *err)
{
	struct archive *a = archive_read_new();
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		kf_err(err, "%s: %s", path, archive_error_string(a));
		archive_read_free(a);
		return NULL;
	}
	return a;
}

static int read_small(struct archive *a, const char *name, int64_t size, struct buf *out,
		      struct buf *err)
{
	char chunk[1 << 16];
	la_ssize_t n;
	if (size > MAX_META)
		return kf_err(err, "%s: %lld bytes is over the limit for it", name, (long long)size);
	buf_reset(out);
	while ((n = archive_read_data(a, chunk, sizeof(chunk))) > 0) {
		if ((int64_t)(out->len + (size_t)n) > MAX_META)
			return kf_err(err, "%s: over the size limit", name);
		buf_add(out, chunk, (size_t)n);
	}
	if (n < 0)
		return kf_err(err, "%s: %s", name, archive_error_string(a));
	return 0;
}

static int parse_sums(struct vstate *v, const struct buf *b)
{
	const char *p = b->s;
	int ln = 0;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char hex[65], path[1100];
		ln++;
		if (n < 67 || n > 64 + 2 + 1024 || p[64] != ' ' || p[65] != ' ' ||
		    strspn(p, "0123456789abcdef") < 64) {
			problem(v, "SHA256SUMS line %d is malformed", ln);
		} else {
			memcpy(hex, p, 64);
			hex[64] = 0;
			memcpy(path, p + 66, n - 66);
			path[n - 66] = 0;
			if (json_object_get(v->sums, path))
				problem(v, "SHA256SUMS lists %s twice", path);
			json_object_set_new(v->sums, path, json_string(hex));
		}
		p += n + (e ? 1 : 0);
	}
	return 0;
}

/* A regular file we may read: what libarchive then fails on is its content. */
static int readable_file(const char *path)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ok = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
	if (fd >= 0)
		close(fd);
	return ok;
}

static int pass1(const char *path, struct vstate *v, struct buf *err)
{
	struct ds_reader rd;
	struct archive *a;
	struct archive_entry *e;
	struct buf b = BUF_INIT;
	const char *name;
	int r, ret = -1;
	long long n = 0;

	if (ds_reader_open(&rd, path, err) < 0) {
		v->opened = readable_file(path);
		return -1;
	}
	v->opened = 1;
	a = rd.a;
	while ((r = ds_reader_next(&rd, &e, &name, err)) == 1) {
		if (++n > MAX_ENTRIES) {
			kf_err(err, "%s: more than %d entries", path, MAX_ENTRIES);
			goto out;
		}
		if (!name || !ds_safe_path(name)) {
			problem(v, "unsafe entry name '%s'", name ? name : "");
			continue;
		}
		if (archive_entry_filetype(e) != AE_IFREG) {
			problem(v, "%s is not a regular file", name);
			continue;
		}
		if (json_object_get(v->names, name))
			problem(v, "%s appears twice", name);
		json_object_set_new(v->names, name, json_true());
		if (!strcmp(name, "SHA256SUMS") || !strcmp(name, "schema.json") || !strcmp(name, "README.md")) {
			if (read_small(a, name, archive_entry_size(e), &b, err) < 0)
				goto out;
			if (!strcmp(name, "SHA256SUMS")) {
				parse_sums(v, &b);
			} else if (!strcmp(name, "README.md")) {
				buf_reset(&v->card);
				buf_add(&v->card, b.s, b.len);
			} else {
				struct buf e2 = BUF_INIT;
				json_t *s = json_parse_bounded(b.s, b.len, (size_t)MAX_META, &e2);
				json_t *files = json_object_get(s, "files");
				if (!json_is_object(files))
					problem(v, "schema.json: %s", s ? "no \"files\" object" : e2.s);
				else
					v->schema = json_incref(files);
				json_decref(s);
				buf_release(&e2);
			}
		}
	}
	if (r < 0)
		goto out;
	ret = 0;
out:
	ds_reader_close(&rd);
	buf_release(&b);
	return ret;
}

static int type_ok(const char *t, const json_t *x)
{
	if (!strcmp(t, "string"))
		return json_is_string(x);
	if (!strcmp(t, "integer"))
		return json_is_integer(x);
	if (!strcmp(t, "number"))
		return json_is_number(x);
	if (!strcmp(t, "boolean"))
		return json_is_boolean(x);
	if (!strcmp(t, "object"))
		return json_is_object(x);
	if (!strcmp(t, "array"))
		return json_is_array(x);
	return !strcmp(t, "json");
}

static void check_line(struct vstate *v, const char *name, long long ln, const json_t *fields,
		       const char *s, size_t n)
{
	json_error_t je;
	json_t *o = json_loadb(s, n, JSON_REJECT_DUPLICATES, &je), *spec, *x;
	const char *k;

	if (!json_is_object(o)) {
		problem(v, "%s:%lld: %s", name, ln, o ? "not a JSON object" : je.text);
		json_decref(o);
		return;
	}
	json_object_foreach((json_t *)fields, k, spec) {
		const char *t = jget_str(spec, "type", "json");
		x = json_object_get(o, k);
		if (!x)
			problem(v, "%s:%lld: missing field \"%s\"", name, ln, k);
		else if (json_is_null(x) ? !jget_bool(spec, "nullable", 0) : !type_ok(t, x))
			problem(v, "%s:%lld: field \"%s\" is not %s%s", name, ln, k,
				json_is_null(x) ? "nullable" : "of type ", json_is_null(x) ? "" : t);
	}
	json_object_foreach(o, k, x)
		if (!json_object_get(fields, k))
			problem(v, "%s:%lld: field \"%s\" is not in schema.json", name, ln, k);
	json_decref(o);
}

struct pass2_ctx {
	struct vstate *v;
	const char *name;
	const json_t *fields;
};

static int p2_line(void *ctx, long long lineno, const char *p, size_t n)
{
	struct pass2_ctx *c = ctx;
	if (c->fields)
		check_line(c->v, c->name, lineno, c->fields, p, n);
	return 0;
}

static int p2_over(void *ctx, long long lineno)
{
	struct pass2_ctx *c = ctx;
	problem(c->v, "%s:%lld: line over %zu bytes", c->name, lineno, DATASET_MAX_LINE);
	return 0;
}

static int pass2(const char *path, struct vstate *v, struct verify_summary *sum, struct buf *err)
{
	struct ds_reader rd;
	struct archive_entry *e;
	struct ds_lines lines = { BUF_INIT, 0, 0 };
	char chunk[1 << 16];
	const char *name;
	int r, ret = -1;

	if (ds_reader_open(&rd, path, err) < 0)
		return -1;
	while ((r = ds_reader_next(&rd, &e, &name, err)) == 1) {
		size_t nl = name ? strlen(name) : 0;
		int jsonl = nl > 6 && !strcmp(name + nl - 6, ".jsonl");
		struct pass2_ctx c = { v, name, NULL };
		struct sha256 h;
		char hex[65];
		la_ssize_t n;

		if (!name || !ds_safe_path(name) || archive_entry_filetype(e) != AE_IFREG)
			continue;
		sum->files++;
		if (jsonl) {
			c.fields = json_object_get(json_object_get(v->schema, name), "fields");
			if (!json_is_object(c.fields))
				problem(v, "%s has no entry in schema.json", name);
		}
		sha256_init(&h);
		ds_lines_reset(&lines);
		while ((n = archive_read_data(rd.a, chunk, sizeof(chunk))) > 0) {
			sha256_update(&h, chunk, (size_t)n);
			if (jsonl)
				ds_lines_feed(&lines, chunk, (size_t)n, p2_line, p2_over, &c);
		}
		sha256_final_hex(&h, hex);
		if (n < 0) {
			kf_err(err, "%s: %s: %s", path, name, archive_error_string(rd.a));
			goto out;
		}
		if (jsonl && lines.line.len)
			problem(v, "%s: the last line has no newline", name);
		if (jsonl) {
			json_object_set_new(v->lines, name, json_integer(lines.n));
			sum->lines += lines.n;
		}
		if (strcmp(name, "SHA256SUMS")) {
			const char *want = jget_str(v->sums, name, NULL);
			if (!want)
				problem(v, "%s is not listed in SHA256SUMS", name);
			else if (strcmp(want, hex))
				problem(v, "%s: checksum mismatch (SHA256SUMS %.12s..., file %.12s...)", name, want, hex);
		}
	}
	if (r < 0)
		goto out;
	ret = 0;
out:
	ds_reader_close(&rd);
	buf_release(&lines.line);
	return ret;
}

/* Card rows look like "| `path` | N | what |". */
static void check_card(struct vstate *v)
{
	const char *p = v->card.s;
	json_t *seen = json_object();
	const char *k;
	json_t *x;

	while ((p = strstr(p, "\n| `")) != NULL) {
		char path[1100];
		long long n;
		int used = 0;
		p += 4;
		if (sscanf(p, "%1099[^`]` | %lld |%n", path, &n, &used) == 2 && used > 0) {
			json_t *got = json_object_get(v->lines, path);
			json_object_set_new(seen, path, json_true());
			if (!got)
				problem(v, "README.md counts %s, which is not in the tarball", path);
			else if (json_integer_value(got) != n)
				problem(v, "README.md says %s has %lld rows; it has %lld", path, n,
					(long long)json_integer_value(got));
		}
	}
	json_object_foreach(v->lines, k, x)
		if (!json_object_get(seen, k))
			problem(v, "README.md gives no count for %s", k);
	json_decref(seen);
}

int dataset_verify(const char *path, struct buf *report, struct verify_summary *sum,
		   struct buf *err)
{
	struct vstate v = { report, 0, json_object(), json_object(), NULL, json_object(), BUF_INIT, 0 };
	const char *need[] = { "SHA256SUMS", "schema.json", "README.md", "provenance.json",
			       "kforge.db", "sft.jsonl", "pairs.jsonl", NULL };
	const char *k;
	json_t *x;
	int ret = -1;

	memset(sum, 0, sizeof(*sum));
	if (pass1(path, &v, err) < 0)
		goto unread;
	for (int i = 0; need[i]; i++)
		if (!json_object_get(v.names, need[i]))
			problem(&v, "%s is missing", need[i]);
	json_object_foreach(v.sums, k, x)
		if (!json_object_get(v.names, k))
			problem(&v, "%s is listed in SHA256SUMS but missing", k);
	if (pass2(path, &v, sum, err) < 0)
		goto unread;
	if (v.card.len)
		check_card(&v);
	if (v.problems > MAX_PROBLEMS)
		buf_addf(report, "... and %d more problems\n", v.problems - MAX_PROBLEMS);
	ret = v.problems ? -2 : 0;
	goto out;
unread:
	/* It opened but could not be read through within the bounds (a bomb,
	 * a truncated or damaged archive): that is a failed check too. */
	if (v.opened) {
		problem(&v, "%s", err->s);
		buf_reset(err);
		ret = -2;
	}
out:
	json_decref(v.names);
	json_decref(v.sums);
	json_decref(v.schema);
	json_decref(v.lines);
	buf_release(&v.card);
	return ret;
}
