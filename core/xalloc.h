/* The allocation-failure policy, in one place: an allocation that fails
 * writes one line naming the size and the calling file:line to stderr and
 * aborts. Running out of memory is not an error a caller can recover from
 * (every caller would need the same fatal path), so these never return
 * NULL. A size of 0 allocates 1 byte, so that the result is never NULL.
 * core/xalloc.c holds the only abort() for allocation failure
 * (tests/t0023-alloc-policy.sh). */
#ifndef KF_XALLOC_H
#define KF_XALLOC_H

#include <stddef.h>

void *kf_xmalloc(size_t n, const char *file, int line);
void *kf_xcalloc(size_t n, size_t size, const char *file, int line);
void *kf_xrealloc(void *p, size_t n, const char *file, int line);
char *kf_xstrdup(const char *s, const char *file, int line);
char *kf_xstrndup(const char *s, size_t n, const char *file, int line);
/* p, unless it is NULL: then "what" could not be allocated (a dependency's
 * constructor: jansson, libcurl, OpenSSL). */
void *kf_xcheck(void *p, const char *what, const char *file, int line);
/* The fatal path itself: size bytes could not be had at file:line. */
void kf_alloc_die(size_t size, const char *file, int line) __attribute__((noreturn));

#define xmalloc(n) kf_xmalloc((n), __FILE__, __LINE__)
#define xcalloc(n, size) kf_xcalloc((n), (size), __FILE__, __LINE__)
#define xrealloc(p, n) kf_xrealloc((p), (n), __FILE__, __LINE__)
#define xstrdup(s) kf_xstrdup((s), __FILE__, __LINE__)
#define xstrndup(s, n) kf_xstrndup((s), (n), __FILE__, __LINE__)
#define xcheck(p, what) kf_xcheck((p), (what), __FILE__, __LINE__)
/* a jansson constructor's result: json_t *j = jnew(json_object()); */
#define jnew(j) ((json_t *)kf_xcheck((j), "a JSON value", __FILE__, __LINE__))

#endif
