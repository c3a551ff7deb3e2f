/* Unified diffs of kernel sources (libgit2's diff of two buffers), as HTML
 * for the site: one element per line (+ ins, - del, context, @@ hunk
 * headers), text escaped, at most max_lines lines with a note of how
 * many more there were. */
#ifndef KF_SITE_DIFF_H
#define KF_SITE_DIFF_H

#include <stddef.h>
#include "core/buf.h"

struct site_diff_stat {
	long added, removed;   /* lines */
	long lines;            /* lines of the whole diff (hunk headers included) */
	long shown;            /* of those, rendered */
};

/* Appends <pre class="diff">...</pre> of old -> new (3 lines of context),
 * or nothing when they are equal (st->lines = 0). 0, or -1 with err. */
int site_diff_html(struct buf *out, const char *old, size_t old_len, const char *new_,
		   size_t new_len, long max_lines, struct site_diff_stat *st, struct buf *err);
/* The same diff as plain unified text (the hunks of `diff -u`, without
 * the ---/+++ lines). */
int site_diff_text(struct buf *out, const char *old, size_t old_len, const char *new_,
		   size_t new_len, struct buf *err);

#endif
