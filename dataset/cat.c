/* One entry of a dataset, its bytes written to a descriptor: what a tool
 * needs from a tarball (provenance.json, kforge.db) without zstd(1) on the
 * machine, read through the same bounded reader as verify. */
#include "ds_int.h"
#include "dataset.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n, struct buf *err)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return kf_err(err, "write: %s", strerror(errno));
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Copies the current entry's data; a short entry (data less than its
 * declared size, a truncated tarball) is an error. */
static int copy_entry(struct archive *a, struct archive_entry *e, const char *name, int fd,
		      struct buf *err)
{
	char block[1 << 16];
	int64_t want = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1, got = 0;

	for (;;) {
		la_ssize_t n = archive_read_data(a, block, sizeof(block));
		if (n < 0)
			return kf_err(err, "%s: %s", name, archive_error_string(a));
		if (n == 0)
			break;
		if (write_all(fd, block, (size_t)n, err) < 0)
			return -1;
		got += n;
	}
	if (want >= 0 && got != want)
		return kf_err(err, "%s: %lld of its %lld bytes", name, (long long)got, (long long)want);
	return 0;
}

int dataset_cat(const char *path, const char *member, int fd, struct buf *err)
{
	struct ds_reader r;
	struct archive_entry *e;
	const char *name;
	int rc, found = 0;

	if (!member || !*member || strlen(member) > DS_MAX_PATH)
		return kf_err(err, "a member name of 1 to %d bytes is needed", DS_MAX_PATH);
	if (ds_reader_open(&r, path, err) < 0)
		return -1;
	while ((rc = ds_reader_next(&r, &e, &name, err)) == 1) {
		if (strcmp(name, member) != 0)
			continue;
		if (archive_entry_filetype(e) != AE_IFREG) {
			rc = kf_err(err, "%s: %s is not a regular file", path, member);
			break;
		}
		rc = copy_entry(r.a, e, member, fd, err);
		found = rc == 0;
		break;
	}
	ds_reader_close(&r);
	if (rc < 0)
		return -1;
	if (!found) {
		kf_err(err, "%s: no %s in it", path, member);
		return -2;
	}
	return 0;
}
