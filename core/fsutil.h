/* Files: atomic writes (temp file in the same directory, fsync, rename),
 * directory creation. */
#ifndef KF_FSUTIL_H
#define KF_FSUTIL_H

#include <stddef.h>
#include "buf.h"

/* Writes all n bytes to fd, retrying short writes and EINTR: 0, or -1
 * with errno set (0 when write wrote nothing). */
int write_all_fd(int fd, const void *p, size_t n);
int write_file_atomic(const char *path, const void *data, size_t len, struct buf *err);
int mkdir_p(const char *path, struct buf *err);
int file_exists(const char *path);
int is_dir(const char *path);
/* Joins a and b with one '/' into out (reset first). */
void path_join(struct buf *out, const char *a, const char *b);

#endif
