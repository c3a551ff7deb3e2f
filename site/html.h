/* HTML helpers for the site: escaping of text from outside (models,
 * kernels, the store), CUDA syntax highlighting at build time, Markdown
 * through cmark in safe mode, and number formatting. Everything appends
 * to a struct buf; nothing here fails except on bad arguments. */
#ifndef KF_SITE_HTML_H
#define KF_SITE_HTML_H

#include <stddef.h>
#include "core/buf.h"

/* Appends s[0..len) escaped for HTML text and attribute values: & < > " '
 * become entities, C0 controls other than \t \n \r, and DEL, become
 * U+FFFD. The input must be valid UTF-8 (the store layer ensures it). */
void html_escape(struct buf *out, const char *s, size_t len);
void html_escapes(struct buf *out, const char *s);

/* Appends CUDA C++ source as escaped HTML with <span class="X"> around
 * tokens: k keyword, t type, b CUDA builtin, n number, s string or char,
 * c comment, p preprocessor, l the launch block, o launch chevrons. */
void html_highlight_cuda(struct buf *out, const char *src, size_t len);

/* Appends Markdown rendered to HTML by cmark in safe mode (raw HTML and
 * dangerous URLs dropped); control characters are replaced first. */
void html_markdown(struct buf *out, const char *md, size_t len);

/* Number display: "1.23" (3 significant digits, at least 2 decimals
 * under 10), "—" for NaN or missing. */
void fmt_num(struct buf *out, double v);
/* "12.3%" of a ratio in [0, 1]. */
void fmt_pct(struct buf *out, double ratio);
/* Milliseconds with a unit that fits: "812 µs", "3.41 ms", "1.20 s". */
void fmt_ms(struct buf *out, double ms);
/* 1234567 -> "1,234,567". */
void fmt_int(struct buf *out, long long v);
/* Bytes: "512 B", "3.4 KiB", "1.2 GiB". */
void fmt_bytes(struct buf *out, double bytes);

#endif
