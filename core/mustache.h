/* Logic-less Mustache templates: the core modules of the official spec
 * (interpolation, sections, inverted, comments, partials, delimiters) and
 * ~inheritance (blocks {{$name}} and parents {{<name}}). No lambdas.
 *
 * A template is compiled once into a flat node array (struct mustache_tpl)
 * and rendered many times against a jansson value. Partials are fetched by
 * name through struct mustache_partials (a callback or a directory), which
 * compiles each partial once and caches it.
 *
 * Rendering choices where the spec leaves room:
 *   - falsey: false, null, missing, empty array, empty string;
 *     numbers (0 included) are truthy;
 *   - {{x}} escapes & < > " ' and replaces C0 controls other than \t \n \r
 *     (and DEL) with "&#xFFFD;"; {{{x}}} and {{&x}} write the bytes as they are;
 *   - integers print without a decimal point, reals with the shortest
 *     "%.Ng" that reads back to the same double (1.21 -> "1.21");
 *     true/false print as "true"/"false"; null, objects, arrays as "";
 *   - a missing partial renders as the empty string (spec); a bad partial
 *     name, a partial that does not compile, or recursion past
 *     MUSTACHE_MAX_PARTIAL_DEPTH is an error.
 * Not thread-safe: one mustache_partials (its cache) per thread. */
#ifndef KF_MUSTACHE_H
#define KF_MUSTACHE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include "core/buf.h"

#define MUSTACHE_MAX_TEMPLATE (4u << 20)      /* bytes of template text */
#define MUSTACHE_MAX_OUTPUT (256u << 20)      /* bytes of rendered output */
#define MUSTACHE_MAX_NESTING 256              /* sections/blocks inside each other */
#define MUSTACHE_MAX_PARTIAL_DEPTH 64         /* partials/parents inside each other */
#define MUSTACHE_MAX_PARTIALS 4096            /* distinct partial names cached */

struct mustache_node;

/* A compiled template. Owns a copy of its text and every string it uses. */
struct mustache_tpl {
	struct mustache_node *nodes;
	uint32_t nnodes, anodes;
	struct buf text;          /* the source, plus names, NUL-separated */
	char *name;               /* for error messages ("<template>" by default) */
};

void mustache_init(struct mustache_tpl *tpl);
/* Compiles text (len bytes, no NUL needed) into tpl, which must be freshly
 * initialised or released. On error returns -1 and err reads
 * "NAME:LINE:COL: message" (1-based line and byte column). */
int mustache_compile(struct mustache_tpl *tpl, const char *text, size_t len, struct buf *err);
/* Sets the name used in error messages (copied). */
void mustache_set_name(struct mustache_tpl *tpl, const char *name);
void mustache_release(struct mustache_tpl *tpl);

/* Where partials come from. fn fills text with the partial's source and
 * sets *found (0: no such partial, rendered empty); returns 0, or -1 with
 * err for a real failure (I/O, bad name). */
typedef int (*mustache_partial_fn)(void *ud, const char *name, struct buf *text,
				   int *found, struct buf *err);

struct mustache_pcache;

struct mustache_partials {
	mustache_partial_fn fn;
	void *ud;
	char *dir;                    /* owned, directory mode only */
	size_t max_size;              /* per partial, MUSTACHE_MAX_TEMPLATE */
	struct mustache_pcache *cache; /* owned: compiled partials by name */
};

/* Partials from a callback. */
void mustache_partials_init(struct mustache_partials *p, mustache_partial_fn fn, void *ud);
/* Partials from a directory: NAME -> DIR/NAME.mustache. Names are limited
 * to [A-Za-z0-9_./-], may not start with '/' or contain "..", and are at
 * most 200 bytes; a file larger than max_size is an error. */
void mustache_partials_dir(struct mustache_partials *p, const char *dir);
void mustache_partials_release(struct mustache_partials *p);
/* 1 when name is acceptable for the directory loader. */
int mustache_partial_name_ok(const char *name);

/* Data for mustache_render from JSON text or a file of at most max bytes:
 * any JSON value, not only an object (the spec's root context may be a
 * string, a number, null or an array: {{.}}, {{#.}}...{{/.}}); duplicate
 * keys are refused. NULL with err on failure (the file's name in it). */
json_t *mustache_data_parse(const char *s, size_t len, size_t max, struct buf *err);
json_t *mustache_data_load(const char *path, size_t max, struct buf *err);

/* Renders tpl with data (any JSON value; NULL: empty context) appending to out.
 * partials may be NULL (every partial is missing). Fails past
 * MUSTACHE_MAX_OUTPUT bytes appended; out then holds a partial result. */
int mustache_render(const struct mustache_tpl *tpl, const json_t *data,
		    const struct mustache_partials *partials, struct buf *out,
		    struct buf *err);
/* Same with an explicit output cap (bytes appended to out). */
int mustache_render_capped(const struct mustache_tpl *tpl, const json_t *data,
			   const struct mustache_partials *partials, struct buf *out,
			   size_t max_out, struct buf *err);

#endif
