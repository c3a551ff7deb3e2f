/* One entry of a dataset, its bytes written to a descriptor: what a tool
 * needs from a tarball (provenance.json, kforge.db) without zstd(1) on the
 * machine, read through the same bounded reader as verify. */
#include "ds_int.h"
#include "dataset.h"

#include <archive.h>
#include <archive_entry.h>
#include <string.h>

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
		rc = ds_copy_entry(r.a, e, member, fd, err);
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
