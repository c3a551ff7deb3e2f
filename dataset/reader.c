/* Entries of a dataset, from a tarball or from a directory it was
 * extracted into, through the same libarchive reading API. */
#include "ds_int.h"
#include "dataset.h"
#include "core/fsutil.h"

#include <archive.h>
#include <archive_entry.h>
#include <string.h>

int ds_reader_open(struct ds_reader *r, const char *path, struct buf *err)
{
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
