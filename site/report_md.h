/* Markdown reports: the `kforge report PROBLEM` form, from the JSON of
 * store_site_report(). Text from the store is made inert for Markdown
 * renderers (HTML special characters become entities, Markdown
 * punctuation is backslash-escaped, code goes in fences longer than any
 * backtick run inside). */
#ifndef KF_REPORT_MD_H
#define KF_REPORT_MD_H

#include <jansson.h>
#include "core/buf.h"
#include "store/store.h"

/* Appends the report of one problem. */
void report_md_problem(struct buf *out, const json_t *report);
/* All in one, for `kforge report PROBLEM`: reads the store and appends
 * the Markdown report. Returns 0, 1 when there is no such problem, or -1
 * with err. */
int report_md_from_store(struct store *s, const char *problem_id, struct buf *out,
			 struct buf *err);
/* Appends a profile (store_profile.h JSON; NULL or null: "No profile
 * recorded.") as Markdown tables. */
void report_md_profile(struct buf *out, const json_t *prof);
/* Appends a chain of ideas (store_idea_chain) as a Markdown table, one row
 * per step, root first. */
void report_md_chain(struct buf *out, const json_t *chain);
/* Appends s escaped as inline Markdown text (one line: newlines -> space). */
void md_escape(struct buf *out, const char *s);
/* Appends a fenced code block with info string lang. */
void md_code(struct buf *out, const char *lang, const char *code);

#endif
