/* Markdown reports: the `kforge report PROBLEM` form, from the JSON of
 * store_site_report(). Text from the store is made inert for Markdown
 * renderers (HTML special characters become entities, Markdown
 * punctuation is backslash-escaped, code goes in fences longer than any
 * backtick run inside). */
#ifndef KF_REPORT_MD_H
#define KF_REPORT_MD_H

#include <jansson.h>
#include "core/buf.h"

/* Appends the report of one problem. */
void report_md_problem(struct buf *out, const json_t *report);
/* Appends s escaped as inline Markdown text (one line: newlines -> space). */
void md_escape(struct buf *out, const char *s);
/* Appends a fenced code block with info string lang. */
void md_code(struct buf *out, const char *lang, const char *code);

#endif
