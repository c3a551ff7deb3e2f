/* core/: the utilities every layer uses (buffers, JSON helpers, logging, processes,
 * files, SHA-256, UTF-8, terminal-safe text, the CUDA driver loader) and the
 * Mustache engine (core/mustache*.c). Owns no pipeline state; includes
 * nothing of kforge's above it.
 *
 * Growable byte buffer, always NUL-terminated, never NULL after init
 * (git's strbuf). The struct owns its memory; buf_release frees it and
 * leaves an empty, reusable buffer. Allocation failure aborts: every
 * caller would otherwise need the same fatal path. */
#ifndef KF_BUF_H
#define KF_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *s;      /* never NULL; points at a static "" while alloc == 0 */
	size_t len;
	size_t alloc;
};

#define BUF_INIT { kf_buf_empty, 0, 0 }
extern char kf_buf_empty[];

void buf_init(struct buf *b);
void buf_release(struct buf *b);
void buf_reset(struct buf *b);             /* len = 0, keeps memory */
void buf_grow(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *p, size_t n);
void buf_adds(struct buf *b, const char *s);
void buf_addc(struct buf *b, char c);
void buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_vaddf(struct buf *b, const char *fmt, va_list ap);
void buf_setf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void buf_truncate(struct buf *b, size_t len);
char *buf_detach(struct buf *b, size_t *len); /* caller frees */
void buf_trim(struct buf *b);               /* trailing whitespace */

/* Error helper: sets *err (if err) to the message and returns -1, so a
 * failing function can `return kf_err(err, "...", ...)`. */
int kf_err(struct buf *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reads a whole file into b, failing past max bytes. 0 or -1 with err. */
int buf_read_file(struct buf *b, const char *path, size_t max, struct buf *err);

#endif
