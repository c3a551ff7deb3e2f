/* Internal to core/mustache_*.c: the compiled node layout. */
#ifndef KF_MUSTACHE_INT_H
#define KF_MUSTACHE_INT_H

#include "mustache.h"

enum mnode_type {
	MN_TEXT,      /* off/len: bytes of the template text */
	MN_VAR,       /* {{name}}: escaped */
	MN_RAW,       /* {{{name}}} / {{&name}} */
	MN_SECTION,   /* {{#name}}, children up to end */
	MN_INVERTED,  /* {{^name}} */
	MN_PARTIAL,   /* {{>name}} */
	MN_PARENT,    /* {{<name}}: children are the block arguments */
	MN_BLOCK,     /* {{$name}}: children are the default (or argument) */
};

enum {
	MF_STANDALONE = 1, /* tag line removed: the node does not emit indentation */
	MF_PAIR = 2,       /* block pair alone on its line: ind is its indentation */
};

/* Names are stored NUL-separated by part in tpl->text from off: "a\0b\0";
 * nparts == 0 is the implicit iterator ".". Partial and block names are
 * one NUL-terminated string at off. */
struct mustache_node {
	uint8_t type, flags;
	uint16_t nparts;
	uint32_t end;              /* index after the last descendant */
	uint32_t off, len;
	uint32_t ind_off, ind_len; /* indentation, in tpl->text */
	uint32_t pos;              /* source offset of the tag, for errors */
};

/* "NAME:LINE:COL" for a source offset. */
void mustache_where(const struct mustache_tpl *t, uint32_t pos, struct buf *out);

/* Looks a partial up in p's cache, compiling it on first use. *tpl is NULL
 * for a missing partial (mustache_partials.c). */
int mustache_partial_get(const struct mustache_partials *p, const char *name,
			 const struct mustache_tpl **tpl, struct buf *err);

#endif
