#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int write_all_fd(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = 0;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len, struct buf *err)
{
	struct buf tmp = BUF_INIT;
	int fd, ret = -1;

	buf_addf(&tmp, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp.s);
	if (fd < 0) {
		kf_err(err, "%s: cannot create temporary file: %s", path, strerror(errno));
		goto out;
	}
	if (write_all_fd(fd, data, len) < 0) {
		kf_err(err, "%s: write failed: %s", path, strerror(errno));
		close(fd);
		unlink(tmp.s);
		goto out;
	}
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0 || close(fd) < 0) {
		kf_err(err, "%s: %s", path, strerror(errno));
		unlink(tmp.s);
		goto out;
	}
	if (rename(tmp.s, path) < 0) {
		kf_err(err, "%s: rename failed: %s", path, strerror(errno));
		unlink(tmp.s);
		goto out;
	}
	ret = 0;
out:
	buf_release(&tmp);
	return ret;
}

int mkdir_p(const char *path, struct buf *err)
{
	struct buf p = BUF_INIT;
	int ret = 0;

	buf_adds(&p, path);
	for (size_t i = 1; i <= p.len; i++) {
		if (p.s[i] != '/' && p.s[i] != '\0')
			continue;
		char c = p.s[i];
		p.s[i] = '\0';
		if (mkdir(p.s, 0755) < 0 && errno != EEXIST) {
			ret = kf_err(err, "%s: cannot create directory: %s", p.s, strerror(errno));
			break;
		}
		p.s[i] = c;
	}
	if (!ret && !is_dir(path))
		ret = kf_err(err, "%s: not a directory", path);
	buf_release(&p);
	return ret;
}

int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void path_join(struct buf *out, const char *a, const char *b)
{
	buf_reset(out);
	buf_adds(out, a);
	if (out->len && out->s[out->len - 1] != '/')
		buf_addc(out, '/');
	buf_adds(out, b);
}
