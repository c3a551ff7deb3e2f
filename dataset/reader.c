/* Entries of a dataset, from a tarball or from a directory it was
 * extracted into, through the same libarchive reading API. */
#include "ds_int.h"
#include "dataset.h"
#include "core/fsutil.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

void ds_limits_init(struct ds_limits *l, int64_t archive_bytes, int64_t cap)
{
	memset(l, 0, sizeof(*l));
	l->archive_bytes = archive_bytes;
	l->cap = cap;
	l->max_total = archive_bytes > (INT64_MAX - 1) / DS_EXPAND_RATIO ? INT64_MAX
		     : archive_bytes * DS_EXPAND_RATIO;
	if (l->max_total < DS_EXPAND_FLOOR)
		l->max_total = DS_EXPAND_FLOOR;
	if (l->max_total > cap)
		l->max_total = cap;
	l->max_entries = archive_bytes / DS_ENTRY_BYTES;
	if (l->max_entries < 1000)
		l->max_entries = 1000;
	if (l->max_entries > DS_MAX_ENTRIES)
		l->max_entries = DS_MAX_ENTRIES;
}

int ds_limits_entry(struct ds_limits *l, struct archive_entry *e, const char *name,
		    struct buf *err)
{
	int64_t size = archive_entry_size(e);

	if (!name)
		return kf_err(err, "refused: an entry without a name");
	if (++l->entries > l->max_entries) {
		if (l->max_entries == DS_MAX_ENTRIES)
			return kf_err(err, "refused: more than %lld entries", (long long)l->max_entries);
		return kf_err(err, "refused: more than %lld entries for a tarball of %lld bytes "
			      "(one per %d bytes)", (long long)l->max_entries,
			      (long long)l->archive_bytes, DS_ENTRY_BYTES);
	}
	if (strlen(name) > DS_MAX_PATH)
		return kf_err(err, "refused: an entry name of %zu bytes (the limit is %d)",
			      strlen(name), DS_MAX_PATH);
	if (archive_entry_sparse_count(e) > 0)
		return kf_err(err, "refused: %s is a sparse file", name);
	if (!archive_entry_size_is_set(e))
		size = 0;
	if (size < 0 || (!archive_entry_size_is_set(e) && archive_entry_filetype(e) == AE_IFREG))
		return kf_err(err, "refused: %s has no size", name);
	if (size > DATASET_MAX_ENTRY)
		return kf_err(err, "refused: %s has %lld bytes (the limit is %lld per file)", name,
			      (long long)size, (long long)DATASET_MAX_ENTRY);
	if (size > l->max_total - l->total) {
		if (l->max_total < l->cap)
			return kf_err(err, "refused: %s would take the extracted size over %lld bytes "
				      "(the bound for a tarball of %lld bytes: %d times its size, at "
				      "least 1 MiB)", name, (long long)l->max_total,
				      (long long)l->archive_bytes, DS_EXPAND_RATIO);
		return kf_err(err, "refused: %s would take the extracted size over %lld bytes",
			      name, (long long)l->max_total);
	}
	l->total += size;
	return 0;
}

int ds_reader_open(struct ds_reader *r, const char *path, struct buf *err)
{
	return ds_reader_open_capped(r, path, DATASET_MAX_EXTRACT, err);
}

int ds_reader_open_capped(struct ds_reader *r, const char *path, int64_t cap, struct buf *err)
{
	struct stat sb;

	memset(r, 0, sizeof(*r));
	buf_init(&r->name);
	if (is_dir(path)) {
		r->disk = 1;
		r->a = archive_read_disk_new();
		archive_read_disk_set_symlink_physical(r->a);   /* links are reported, not followed */
		archive_read_disk_set_standard_lookup(r->a);
		if (archive_read_disk_open(r->a, path) != ARCHIVE_OK) {
			kf_err(err, "%s: %s", path, archive_error_string(r->a));
			archive_read_free(r->a);
			r->a = NULL;
			return -1;
		}
		r->strip = strlen(path);
		while (r->strip > 1 && path[r->strip - 1] == '/')
			r->strip--;
		return 0;
	}
	if (stat(path, &sb) < 0)
		return kf_err(err, "%s: %s", path, strerror(errno));
	ds_limits_init(&r->lim, (int64_t)sb.st_size, cap);
	r->a = ds_open_archive(path, err);
	return r->a ? 0 : -1;
}

int ds_reader_next(struct ds_reader *r, struct archive_entry **e, const char **name,
		   struct buf *err)
{
	for (;;) {
		int rc = archive_read_next_header(r->a, e);
		const char *p;
		if (rc == ARCHIVE_EOF)
			return 0;
		if (rc != ARCHIVE_OK && !(r->disk && rc == ARCHIVE_WARN))
			return kf_err(err, "%s", archive_error_string(r->a));
		p = archive_entry_pathname(*e);
		if (!r->disk) {
			if (ds_limits_entry(&r->lim, *e, p, err) < 0)
				return -1;
			*name = p;
			return 1;
		}
		if (archive_entry_filetype(*e) == AE_IFDIR) {
			archive_read_disk_descend(r->a);
			continue;
		}
		/* Names relative to the directory, as inside the tarball. */
		buf_reset(&r->name);
		if (p && strlen(p) > r->strip + 1)
			buf_adds(&r->name, p + r->strip + 1);
		*name = r->name.s;
		return 1;
	}
}

int ds_copy_entry(struct archive *a, struct archive_entry *e, const char *name, int fd,
		  struct buf *err)
{
	char chunk[1 << 16];
	int64_t want = archive_entry_size(e), got = 0;
	la_ssize_t n;

	while ((n = archive_read_data(a, chunk, sizeof(chunk))) > 0) {
		got += n;
		if (got > want)
			return kf_err(err, "refused: %s holds more than the %lld bytes its header says",
				      name, (long long)want);
		if (write_all_fd(fd, chunk, (size_t)n) < 0)
			return kf_err(err, "writing %s: %s", name, strerror(errno));
	}
	if (n < 0)
		return kf_err(err, "%s: %s", name, archive_error_string(a));
	if (got != want)
		return kf_err(err, "refused: %s holds %lld bytes, its header says %lld", name,
			      (long long)got, (long long)want);
	return 0;
}

void ds_reader_close(struct ds_reader *r)
{
	if (r->a)
		archive_read_free(r->a);
	r->a = NULL;
	buf_release(&r->name);
}

int ds_lines_feed(struct ds_lines *l, const char *p, size_t n, ds_line_fn line, ds_over_fn over,
		  void *ctx)
{
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(p + i, '\n', n - i);
		size_t take = nl ? (size_t)(nl - (p + i)) : n - i;
		int r;
		if (!l->too_long)
			buf_add(&l->line, p + i, take);
		if (!l->too_long && l->line.len > DATASET_MAX_LINE) {
			l->too_long = 1;
			if (over && (r = over(ctx, l->n + 1)) != 0)
				return r;
		}
		i += take;
		if (nl) {
			l->n++;
			if (!l->too_long && line && (r = line(ctx, l->n, l->line.s, l->line.len)) != 0)
				return r;
			buf_reset(&l->line);
			l->too_long = 0;
			i++;
		}
	}
	return 0;
}

void ds_lines_reset(struct ds_lines *l)
{
	buf_reset(&l->line);
	l->n = 0;
	l->too_long = 0;
}
