#include "xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what, size_t size, const char *file, int line)
	__attribute__((noreturn));

/* One line, written with a single fprintf (no allocation of its own). */
static void die(const char *what, size_t size, const char *file, int line)
{
	if (what)
		fprintf(stderr, "kforge: out of memory: %s at %s:%d\n", what, file, line);
	else
		fprintf(stderr, "kforge: out of memory: %zu bytes at %s:%d\n", size, file, line);
	fflush(stderr);
	abort();
}

void kf_alloc_die(size_t size, const char *file, int line)
{
	die(NULL, size, file, line);
}

void *kf_xmalloc(size_t n, const char *file, int line)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die(NULL, n, file, line);
	return p;
}

void *kf_xcalloc(size_t n, size_t size, const char *file, int line)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		die(NULL, SIZE_MAX, file, line);
	p = calloc(n && size ? n : 1, n && size ? size : 1);
	if (!p)
		die(NULL, n * size, file, line);
	return p;
}

void *kf_xrealloc(void *p, size_t n, const char *file, int line)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		die(NULL, n, file, line);
	return q;
}

char *kf_xstrdup(const char *s, const char *file, int line)
{
	char *d = strdup(s);

	if (!d)
		die(NULL, strlen(s) + 1, file, line);
	return d;
}

char *kf_xstrndup(const char *s, size_t n, const char *file, int line)
{
	char *d = strndup(s, n);

	if (!d)
		die(NULL, strnlen(s, n) + 1, file, line);
	return d;
}

void *kf_xcheck(void *p, const char *what, const char *file, int line)
{
	if (!p)
		die(what, 0, file, line);
	return p;
}
