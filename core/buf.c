#include "buf.h"
#include "xalloc.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char kf_buf_empty[1];

void buf_init(struct buf *b)
{
	b->s = kf_buf_empty;
	b->len = 0;
	b->alloc = 0;
}

void buf_release(struct buf *b)
{
	if (b->alloc)
		free(b->s);
	buf_init(b);
}

void buf_reset(struct buf *b)
{
	buf_truncate(b, 0);
}

void buf_grow(struct buf *b, size_t extra)
{
	size_t need;
	if (extra >= SIZE_MAX - b->len)   /* len + extra + 1 would wrap */
		kf_alloc_die(SIZE_MAX, __FILE__, __LINE__);
	need = b->len + extra + 1;
	if (need <= b->alloc)
		return;
	size_t n = b->alloc ? b->alloc : 64;
	while (n < need)
		n = n < ((size_t)-1) / 2 ? n * 2 : need;
	char *p = b->alloc ? xrealloc(b->s, n) : xmalloc(n);
	if (!b->alloc)
		p[0] = '\0';
	b->s = p;
	b->alloc = n;
}

void buf_add(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	buf_grow(b, n);
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

void buf_vaddf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(b->s + b->len, b->alloc ? b->alloc - b->len : 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n + 1 > (b->alloc ? b->alloc - b->len : 0)) {
		buf_grow(b, (size_t)n);
		vsnprintf(b->s + b->len, b->alloc - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void buf_addf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void buf_setf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	buf_reset(b);
	va_start(ap, fmt);
	buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void buf_truncate(struct buf *b, size_t len)
{
	if (!b->alloc || len > b->len)
		return;
	b->len = len;
	b->s[len] = '\0';
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *s;
	if (!b->alloc)
		buf_grow(b, 0);
	s = b->s;
	if (len)
		*len = b->len;
	buf_init(b);
	return s;
}

void buf_trim(struct buf *b)
{
	while (b->len && strchr(" \t\r\n", b->s[b->len - 1]))
		b->len--;
	if (b->alloc)
		b->s[b->len] = '\0';
}

int kf_err(struct buf *err, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		buf_reset(err);
		va_start(ap, fmt);
		buf_vaddf(err, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int buf_read_file(struct buf *b, const char *path, size_t max, struct buf *err)
{
	FILE *f = fopen(path, "rb");
	char tmp[65536];
	size_t n;
	int ret = 0;

	if (!f)
		return kf_err(err, "%s: %s", path, strerror(errno));
	buf_reset(b);
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
		if (b->len + n > max) {
			ret = kf_err(err, "%s: larger than the limit of %zu bytes", path, max);
			goto out;
		}
		buf_add(b, tmp, n);
	}
	if (ferror(f))
		ret = kf_err(err, "%s: read error: %s", path, strerror(errno));
out:
	fclose(f);
	return ret;
}
