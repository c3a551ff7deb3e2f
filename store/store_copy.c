/* Reading an older store through a migrated copy (store.h). */
#include "store.h"
#include "core/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void store_copy_remove(const char *path)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	struct buf p = BUF_INIT;

	if (!path || !*path)
		return;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		buf_setf(&p, "%s%s", path, sfx[i]);
		unlink(p.s);
	}
	buf_release(&p);
}

int store_current_copy(const char *path, const char *prefix, struct buf *copy, struct buf *err)
{
	struct store s;
	json_t *prm;
	int fd, v, r;

	buf_reset(copy);
	/* Opening it first checks it is a store of a schema we know. */
	if (store_open(&s, path, STORE_READONLY, err) < 0)
		return -1;
	v = s.version;
	if (v >= STORE_SCHEMA_VERSION) {
		store_close(&s);
		return v;
	}
	if (prefix) {
		buf_addf(copy, "%s.XXXXXX", prefix);
	} else {
		const char *t = getenv("TMPDIR");
		buf_addf(copy, "%s/kforge-store.XXXXXX", t && *t ? t : "/tmp");
	}
	fd = mkstemp(copy->s);
	if (fd < 0) {
		kf_err(err, "cannot create %s: %s", copy->s, strerror(errno));
		store_close(&s);
		buf_reset(copy);
		return -1;
	}
	close(fd);
	unlink(copy->s); /* VACUUM INTO wants a new file */
	prm = json_pack("[s]", copy->s);
	r = store_query(&s, "VACUUM INTO ?", prm, NULL, NULL, err);
	json_decref(prm);
	store_close(&s);
	if (r < 0 || store_open(&s, copy->s, STORE_QUIET, err) < 0) {
		store_copy_remove(copy->s);
		buf_reset(copy);
		return -1;
	}
	store_close(&s);
	log_info("migrated a copy of store %s from schema v%d to v%d and read that (%s itself is "
		 "unchanged; 'kforge store migrate --db %s' upgrades it in place)",
		 path, v, STORE_SCHEMA_VERSION, path, path);
	return v;
}
