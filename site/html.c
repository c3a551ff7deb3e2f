#include "html.h"

#include <cmark.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void html_escape(struct buf *out, const char *s, size_t len)
{
	size_t start = 0;

	buf_grow(out, len + len / 8);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;

		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		case '\t': case '\n': case '\r': break;
		default:
			if (c < 0x20 || c == 0x7F)
				rep = "&#xFFFD;";
		}
		if (!rep)
			continue;
		buf_add(out, s + start, i - start);
		buf_adds(out, rep);
		start = i + 1;
	}
	buf_add(out, s + start, len - start);
}

void html_escapes(struct buf *out, const char *s)
{
	html_escape(out, s, strlen(s));
}

static const char *const keywords[] = {
	"__device__", "__global__", "__host__", "__shared__", "__constant__", "__restrict__",
	"__forceinline__", "__noinline__", "__launch_bounds__", "__managed__", "__grid_constant__",
	"auto", "break", "case", "const", "constexpr", "continue", "default", "do", "else",
	"enum", "extern", "for", "goto", "if", "inline", "namespace", "nullptr", "register",
	"return", "sizeof", "static", "static_assert", "struct", "switch", "template",
	"typedef", "typename", "union", "using", "volatile", "while", "true", "false",
	"reinterpret_cast", "static_cast", "const_cast", "alignas", "asm", "scratch", "zeroed",
	NULL,
};
static const char *const types[] = {
	"void", "bool", "char", "short", "int", "long", "float", "double", "unsigned", "signed",
	"size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
	"uint64_t", "half", "__half", "half2", "__half2", "__nv_bfloat16", "__nv_bfloat162",
	"nv_bfloat16", "float2", "float3", "float4", "double2", "int2", "int4", "uint4", "dim3",
	"char4", "uchar4", NULL,
};
static const char *const builtins[] = {
	"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "__syncthreads",
	"__syncwarp", "__shfl_sync", "__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync",
	"atomicAdd", "atomicMax", "atomicMin", "atomicCAS", "atomicExch", "__ldg", "__expf",
	"__logf", "__fdividef", "__fmaf_rn", "fmaf", "fmaxf", "fminf", "expf", "logf", "sqrtf",
	"rsqrtf", "tanhf", "ceil_div", "min", "max", "__float2half", "__half2float", "wmma",
	"__pipeline_memcpy_async", "__pipeline_commit", "__pipeline_wait_prior", NULL,
};

static int in_list(const char *const *list, const char *s, size_t n)
{
	for (int i = 0; list[i]; i++)
		if (list[i][0] == s[0] && !strncmp(list[i], s, n) && list[i][n] == '\0')
			return 1;
	return 0;
}

static void span(struct buf *out, const char *cls, const char *s, size_t n)
{
	buf_addf(out, "<span class=\"%s\">", cls);
	html_escape(out, s, n);
	buf_adds(out, "</span>");
}

static int ident_start(unsigned char c)
{
	return isalpha(c) || c == '_';
}

void html_highlight_cuda(struct buf *out, const char *src, size_t len)
{
	size_t i = 0, plain = 0;
	int line_start = 1;

#define FLUSH() do { html_escape(out, src + plain, i - plain); } while (0)
	while (i < len) {
		unsigned char c = (unsigned char)src[i];
		size_t j = i;
		const char *cls = NULL;

		if (c == '/' && i + 1 < len && src[i + 1] == '/') {
			while (j < len && src[j] != '\n')
				j++;
			cls = "c";
		} else if (c == '/' && i + 1 < len && src[i + 1] == '*') {
			const char *end = NULL;
			for (size_t k = i + 2; k + 1 < len; k++)
				if (src[k] == '*' && src[k + 1] == '/') {
					end = src + k + 2;
					break;
				}
			j = end ? (size_t)(end - src) : len;
			cls = (j - i >= 9 && !memcmp(src + i, "/*@launch", 9)) ? "l" : "c";
		} else if (c == '"' || c == '\'') {
			j = i + 1;
			while (j < len && src[j] != (char)c && src[j] != '\n') {
				if (src[j] == '\\' && j + 1 < len)
					j++;
				j++;
			}
			if (j < len && src[j] == (char)c)
				j++;
			cls = "s";
		} else if (c == '#' && line_start) {
			while (j < len && src[j] != '\n')
				j++;
			cls = "p";
		} else if (isdigit(c) || (c == '.' && i + 1 < len && isdigit((unsigned char)src[i + 1]))) {
			if (i > 0 && (isalnum((unsigned char)src[i - 1]) || src[i - 1] == '_')) {
				i++;
				continue;
			}
			while (j < len && (isalnum((unsigned char)src[j]) || src[j] == '.' ||
					   ((src[j] == '+' || src[j] == '-') &&
					    (src[j - 1] == 'e' || src[j - 1] == 'E'))))
				j++;
			cls = "n";
		} else if (ident_start(c) && (i == 0 || !(isalnum((unsigned char)src[i - 1]) ||
							  src[i - 1] == '_'))) {
			while (j < len && (isalnum((unsigned char)src[j]) || src[j] == '_'))
				j++;
			if (in_list(keywords, src + i, j - i))
				cls = "k";
			else if (in_list(types, src + i, j - i))
				cls = "t";
			else if (in_list(builtins, src + i, j - i))
				cls = "b";
			else {
				i = j;
				line_start = 0;
				continue;
			}
		} else if ((c == '<' || c == '>') && i + 2 < len && src[i + 1] == (char)c &&
			   src[i + 2] == (char)c) {
			j = i + 3;
			cls = "o";
		}
		if (!cls) {
			if (c == '\n')
				line_start = 1;
			else if (c != ' ' && c != '\t')
				line_start = 0;
			i++;
			continue;
		}
		FLUSH();
		span(out, cls, src + i, j - i);
		i = plain = j;
		line_start = 0;
	}
	FLUSH();
#undef FLUSH
}

static void cmark_html(struct buf *out, const char *md, size_t len)
{
	/* CMARK_OPT_DEFAULT is safe since cmark 0.29: raw HTML and
	 * javascript:/vbscript:/file:/data: links are replaced. */
	char *html = cmark_markdown_to_html(md, len, CMARK_OPT_DEFAULT | CMARK_OPT_VALIDATE_UTF8);

	if (html) {
		buf_adds(out, html);
		free(html);
	}
}

/* One table cell's inline Markdown, without the paragraph around it. */
static void cell_html(struct buf *out, const char *s, size_t n)
{
	struct buf h = BUF_INIT;

	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	cmark_html(&h, s, n);
	buf_trim(&h);
	if (h.len >= 7 && !strncmp(h.s, "<p>", 3) && !strcmp(h.s + h.len - 4, "</p>"))
		buf_add(out, h.s + 3, h.len - 7);
	else
		buf_add(out, h.s, h.len);
	buf_release(&h);
}

/* Splits a pipe-table row into cells: [start, end) pairs in cells. */
static int split_row(const char *l, size_t n, size_t cells[][2], int max)
{
	size_t i = 0, start;
	int k = 0;

	while (i < n && l[i] == ' ')
		i++;
	if (i < n && l[i] == '|')
		i++;
	start = i;
	for (; i <= n && k < max; i++) {
		if (i == n || (l[i] == '|' && (i == 0 || l[i - 1] != '\\'))) {
			if (i == n && i == start)
				break;
			cells[k][0] = start;
			cells[k][1] = i;
			k++;
			start = i + 1;
		}
	}
	/* a trailing pipe leaves an empty last cell */
	if (k && cells[k - 1][0] == cells[k - 1][1] && n && l[n - 1] == '|')
		k--;
	return k;
}

static int is_delim_row(const char *l, size_t n)
{
	int dash = 0;

	for (size_t i = 0; i < n; i++) {
		if (l[i] == '-')
			dash = 1;
		else if (l[i] != '|' && l[i] != ':' && l[i] != ' ' && l[i] != '\t')
			return 0;
	}
	return dash && memchr(l, '|', n) != NULL;
}

static int is_row(const char *l, size_t n)
{
	size_t i = 0;

	while (i < n && i < 3 && l[i] == ' ')
		i++;
	return i < n && l[i] == '|';
}

#define MAX_CELLS 64

/* GFM pipe tables (cmark itself has none), rendered here with every cell
 * through cmark; everything else goes to cmark as it is. */
static void markdown_tables(struct buf *out, const char *md, size_t len)
{
	size_t pos = 0, seg = 0;
	int fence = 0;

	while (pos < len) {
		const char *l = md + pos, *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos, next = pos + n + (nl ? 1 : 0);
		const char *l2 = md + next, *nl2 = next < len ? memchr(l2, '\n', len - next) : NULL;
		size_t n2 = next < len ? (nl2 ? (size_t)(nl2 - l2) : len - next) : 0;

		if (n >= 3 && (!strncmp(l, "```", 3) || !strncmp(l, "~~~", 3)))
			fence = !fence;
		if (fence || !is_row(l, n) || !n2 || !is_delim_row(l2, n2)) {
			pos = next;
			continue;
		}
		size_t cells[MAX_CELLS][2], dc[MAX_CELLS][2];
		char align[MAX_CELLS];
		int nh = split_row(l, n, cells, MAX_CELLS), nd = split_row(l2, n2, dc, MAX_CELLS);

		if (nh != nd) {
			pos = next;
			continue;
		}
		cmark_html(out, md + seg, pos - seg);
		for (int c = 0; c < nd; c++) {
			size_t a = dc[c][0], b = dc[c][1];
			while (a < b && (l2[a] == ' ' || l2[a] == '\t'))
				a++;
			while (b > a && (l2[b - 1] == ' ' || l2[b - 1] == '\t'))
				b--;
			int left = a < b && l2[a] == ':', right = b > a && l2[b - 1] == ':';
			align[c] = right && left ? 'c' : right ? 'r' : 'l';
		}
		buf_adds(out, "<table>\n<thead>\n<tr>");
		for (int c = 0; c < nh; c++) {
			buf_adds(out, align[c] == 'r' ? "<th class=\"num\">" : "<th>");
			cell_html(out, l + cells[c][0], cells[c][1] - cells[c][0]);
			buf_adds(out, "</th>");
		}
		buf_adds(out, "</tr>\n</thead>\n<tbody>\n");
		pos = next + n2 + (nl2 ? 1 : 0);
		while (pos < len) {
			const char *r = md + pos, *rn = memchr(r, '\n', len - pos);
			size_t m = rn ? (size_t)(rn - r) : len - pos;
			if (!is_row(r, m))
				break;
			int nc = split_row(r, m, cells, MAX_CELLS);
			buf_adds(out, "<tr>");
			for (int c = 0; c < nh; c++) {
				buf_adds(out, align[c] == 'r' ? "<td class=\"num\">" : "<td>");
				if (c < nc)
					cell_html(out, r + cells[c][0], cells[c][1] - cells[c][0]);
				buf_adds(out, "</td>");
			}
			buf_adds(out, "</tr>\n");
			pos += m + (rn ? 1 : 0);
		}
		buf_adds(out, "</tbody>\n</table>\n");
		seg = pos;
	}
	cmark_html(out, md + seg, len - seg);
}

void html_markdown(struct buf *out, const char *md, size_t len)
{
	struct buf clean = BUF_INIT;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)md[i];
		if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F)
			buf_adds(&clean, "\xEF\xBF\xBD");
		else
			buf_addc(&clean, (char)c);
	}
	markdown_tables(out, clean.s, clean.len);
	buf_release(&clean);
}

void fmt_num(struct buf *out, double v)
{
	double a = fabs(v);

	if (!isfinite(v))
		buf_adds(out, "—");
	else if (a >= 1000)
		buf_addf(out, "%.0f", v);
	else if (a >= 100)
		buf_addf(out, "%.1f", v);
	else if (a >= 0.01 || a == 0)
		buf_addf(out, "%.2f", v);
	else
		buf_addf(out, "%.3g", v);
}

void fmt_pct(struct buf *out, double ratio)
{
	if (!isfinite(ratio))
		buf_adds(out, "—");
	else
		buf_addf(out, "%.1f%%", ratio * 100.0);
}

void fmt_ms(struct buf *out, double ms)
{
	if (!isfinite(ms) || ms < 0)
		buf_adds(out, "—");
	else if (ms < 1.0)
		buf_addf(out, "%.1f µs", ms * 1000.0);
	else if (ms < 1000.0)
		buf_addf(out, "%.3g ms", ms);
	else
		buf_addf(out, "%.3g s", ms / 1000.0);
}

void fmt_int(struct buf *out, long long v)
{
	char tmp[32];
	/* unsigned: LLONG_MIN has no positive long long */
	unsigned long long m = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	int n = snprintf(tmp, sizeof(tmp), "%llu", m);

	if (v < 0)
		buf_addc(out, '-');
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf_addc(out, ',');
		buf_addc(out, tmp[i]);
	}
}

void fmt_bytes(struct buf *out, double b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	if (!isfinite(b) || b < 0) {
		buf_adds(out, "—");
		return;
	}
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	if (u == 0)
		buf_addf(out, "%.0f B", b);
	else
		buf_addf(out, "%.1f %s", b, unit[u]);
}
