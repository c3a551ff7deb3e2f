/* Safe extraction of a downloaded tarball: regular files and directories
 * only, relative names without "..", the bounds of ds_limits (entries,
 * name length, no sparse files, bytes per file and in all, in proportion
 * to the tarball's size); all of it into a fresh temporary directory
 * beside the destination, renamed into place only when every entry was
 * accepted. */
#include "dataset.h"
#include "ds_int.h"
#include "core/fsutil.h"
#include "core/xalloc.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Creates the directories of rel (not its last component) under root. */
static int make_parents(const char *root, const char *rel, struct buf *err)
{
	struct buf p = BUF_INIT;
	int ret = 0;

	buf_adds(&p, root);
	for (const char *c = rel, *s; (s = strchr(c, '/')) != NULL; c = s + 1) {
		buf_addc(&p, '/');
		buf_add(&p, c, (size_t)(s - c));
		if (mkdir(p.s, 0755) < 0 && errno != EEXIST) {
			ret = kf_err(err, "mkdir %s: %s", p.s, strerror(errno));
			break;
		}
	}
	buf_release(&p);
	return ret;
}

/* Writes the current entry's data to a new file (ds_copy_entry). */
static int write_entry(struct archive *a, struct archive_entry *e, const char *name,
		       const char *path, struct buf *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644), ret;

	if (fd < 0)
		return kf_err(err, "cannot create %s: %s", name, strerror(errno));
	ret = ds_copy_entry(a, e, name, fd, err);
	if (close(fd) < 0 && !ret)
		ret = kf_err(err, "writing %s: %s", name, strerror(errno));
	return ret;
}

static int extract_into(struct ds_reader *rd, const char *root, struct buf *err)
{
	struct archive_entry *e;
	struct buf path = BUF_INIT;
	const char *name;
	int r, ret = -1;

	while ((r = ds_reader_next(rd, &e, &name, err)) == 1) {
		mode_t type = archive_entry_filetype(e);

		/* Names pass ds_safe_path as they are, as in dataset verify: a
		 * leading "./" is refused, not stripped. */
		if (type == AE_IFDIR) {
			buf_reset(&path);
			buf_adds(&path, name);
			while (path.len && path.s[path.len - 1] == '/')
				buf_truncate(&path, path.len - 1);
			if (!ds_safe_path(path.s)) {
				kf_err(err, "refused: unsafe path '%s'", name);
				goto out;
			}
			buf_addc(&path, '/');
			buf_adds(&path, "x");
			if (make_parents(root, path.s, err) < 0)
				goto out;
			continue;
		}
		if (!ds_safe_path(name)) {
			kf_err(err, "refused: unsafe path '%s' (absolute, '..' or odd characters)", name);
			goto out;
		}
		if (archive_entry_hardlink(e) || archive_entry_symlink(e) || type == AE_IFLNK) {
			kf_err(err, "refused: %s is a link", name);
			goto out;
		}
		if (type != AE_IFREG) {
			kf_err(err, "refused: %s is not a regular file (device, fifo or socket)", name);
			goto out;
		}
		if (make_parents(root, name, err) < 0)
			goto out;
		path_join(&path, root, name);
		if (write_entry(rd->a, e, name, path.s, err) < 0)
			goto out;
	}
	if (r < 0)
		goto out;
	ret = 0;
out:
	buf_release(&path);
	return ret;
}

int dataset_extract_safe(const char *archive, const char *dest, int64_t max_total,
			 struct buf *err)
{
	struct buf tmp = BUF_INIT;
	char *dcopy = xstrdup(dest);
	struct ds_reader rd = { 0 };
	int ret = -1;

	if (access(dest, F_OK) == 0) {
		kf_err(err, "%s exists; remove it or choose another -o", dest);
		goto out;
	}
	if (is_dir(archive)) {
		kf_err(err, "%s is a directory, not a tarball", archive);
		goto out;
	}
	path_join(&tmp, dirname(dcopy), ".kforge-extract.XXXXXX");
	if (!mkdtemp(tmp.s)) {
		kf_err(err, "cannot create %s: %s", tmp.s, strerror(errno));
		goto out;
	}
	if (ds_reader_open_capped(&rd, archive, max_total, err) < 0 ||
	    extract_into(&rd, tmp.s, err) < 0) {
		ds_rmtree(tmp.s);
		goto out;
	}
	if (rename(tmp.s, dest) < 0) {
		kf_err(err, "cannot rename %s to %s: %s", tmp.s, dest, strerror(errno));
		ds_rmtree(tmp.s);
		goto out;
	}
	ret = 0;
out:
	ds_reader_close(&rd);
	free(dcopy);
	buf_release(&tmp);
	return ret;
}
