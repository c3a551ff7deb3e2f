/* The include / preprocessor scan of candidate device code: the guarantee
 * that NVRTC reads nothing from the disk on the candidate's behalf. It
 * follows the preprocessor's own view of the text (line splices, comments,
 * strings, digraph `%:`), and is conservative where that view is hard to
 * follow: raw strings and trigraphs are refused, and a line that starts
 * with `#` is checked for file-reading directives even where the scan
 * believes it is inside a comment. */
#include "candidate.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const allowed_headers[] = {
	"cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "mma.h", "cuda_pipeline.h",
	"cuda_pipeline_primitives.h", "cooperative_groups.h", "cooperative_groups/reduce.h",
	"cooperative_groups/memcpy_async.h", "cooperative_groups/scan.h", "cuda/barrier",
	"cuda/pipeline", "cuda/atomic", "cuda/annotated_ptr", "cuda_awbarrier.h",
	"cuda_awbarrier_primitives.h", NULL,
};

static const char *const allowed_pragmas[] = {
	"unroll", "nounroll", "once", "pack", "push_macro", "pop_macro", "nv_diag_suppress",
	"nv_diag_warning", "nv_diag_error", "nv_diag_default", "nv_diag_once", "diag_suppress",
	"diag_warning", "diag_error", "diag_default", NULL,
};

static const char *const ok_directives[] = {
	"define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else",
	"endif", "error", "warning", "pragma", "include", NULL,
};

/* Identifiers refused anywhere: they probe or load files, or hide pragmas. */
static const char *const banned_idents[] = {
	"__has_include", "__has_include_next", "__has_embed", "_Pragma", "__pragma", NULL,
};

static int in_list(const char *const *l, const char *s, size_t n)
{
	for (; *l; l++)
		if (strlen(*l) == n && !memcmp(*l, s, n))
			return 1;
	return 0;
}

int candidate_include_allowed(const char *name)
{
	size_t n = strlen(name);
	if (in_list(allowed_headers, name, n))
		return 1;
	/* cuda/std/NAME: libcu++'s standard headers, plain lowercase names only. */
	if (!strncmp(name, "cuda/std/", 9)) {
		const char *p = name + 9;
		if (!islower((unsigned char)*p))
			return 0;
		for (; *p; p++)
			if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '_')
				return 0;
		return 1;
	}
	return 0;
}

/* The text after line splicing, each character with its file position. */
struct sp {
	char *c;
	int *line, *col;
	size_t n;
	struct buf *err;
};

static int sp_build(struct sp *s, const char *src, size_t len, int first_line)
{
	int line = first_line, col = 1;
	s->c = malloc(len + 1);
	s->line = malloc((len + 1) * sizeof(int));
	s->col = malloc((len + 1) * sizeof(int));
	if (!s->c || !s->line || !s->col)
		abort();
	s->n = 0;
	for (size_t i = 0; i < len; i++) {
		if (src[i] == '\\' && i + 1 < len && src[i + 1] == '\n') {
			i++;
			line++;
			col = 1;
			continue;
		}
		s->c[s->n] = src[i];
		s->line[s->n] = line;
		s->col[s->n] = col;
		s->n++;
		if (src[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	s->c[s->n] = '\0';
	s->line[s->n] = line;
	s->col[s->n] = col;
	return 0;
}

static void sp_free(struct sp *s)
{
	free(s->c);
	free(s->line);
	free(s->col);
}

static int at(const struct sp *s, size_t i)
{
	return i < s->n ? (unsigned char)s->c[i] : 0;
}

static int fail(struct sp *s, size_t i, const char *fmt, const char *arg, size_t n)
{
	char shown[80];
	size_t k = n < sizeof(shown) - 4 ? n : sizeof(shown) - 4;
	for (size_t j = 0; j < k; j++)
		shown[j] = isprint((unsigned char)arg[j]) ? arg[j] : '?';
	shown[k] = '\0';
	if (k < n)
		strcat(shown, "...");
	if (i > s->n)
		i = s->n;
	/* fmt has one %s, filled with the shown text (no printf on our texts). */
	const char *pct = strstr(fmt, "%s");
	buf_setf(s->err, "%d:%d: ", s->line[i], s->col[i]);
	if (!pct) {
		buf_adds(s->err, fmt);
		return -1;
	}
	buf_add(s->err, fmt, (size_t)(pct - fmt));
	buf_adds(s->err, shown);
	buf_adds(s->err, pct + 2);
	return -1;
}

static int is_ident(int ch)
{
	return isalnum(ch) || ch == '_' || ch == '$';
}

/* Skips blanks and block comments within a directive (not the newline). */
static size_t skip_blank(const struct sp *s, size_t i)
{
	for (;;) {
		int ch = at(s, i);
		if (ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' || ch == '\r') {
			i++;
		} else if (ch == '/' && at(s, i + 1) == '*') {
			i += 2;
			while (i < s->n && !(at(s, i) == '*' && at(s, i + 1) == '/'))
				i++;
			i = i < s->n ? i + 2 : s->n;
		} else {
			return i;
		}
	}
}

/* i is at `#` or `%:`. strict: refuse unknown directives too (in code;
 * lines the scan thinks are comments only get the file-reading check). */
static int check_directive(struct sp *s, size_t i, int strict)
{
	size_t start = i, n0, name;
	i += at(s, i) == '#' ? 1 : 2;
	i = skip_blank(s, i);
	name = i;
	while (is_ident(at(s, i)))
		i++;
	n0 = i - name;
	if (n0 == 0) {
		if (at(s, i) == '\n' || at(s, i) == 0 || !strict)
			return 0;
		return fail(s, name, "expected a preprocessor directive name after `#`", "", 0);
	}
	if (n0 == 7 && !memcmp(s->c + name, "include", 7)) {
		size_t q, e;
		i = skip_blank(s, i);
		if (at(s, i) != '<') {
			e = i;
			while (e < s->n && s->c[e] != '\n')
				e++;
			return fail(s, i, "`#include %s` is not allowed: only `#include <NAME>` of "
				    "the allowed NVRTC headers (cuda_fp16.h, cuda_bf16.h, mma.h, "
				    "cooperative_groups.h, cuda/std/..., see docs/formats.md); nothing "
				    "is read from the disk", s->c + i, e - i);
		}
		q = i + 1;
		e = q;
		while (e < s->n && s->c[e] != '>' && s->c[e] != '\n')
			e++;
		if (at(s, e) != '>')
			return fail(s, i, "unterminated `#include <%s`", s->c + q, e - q);
		{
			char name_buf[128];
			size_t len = e - q;
			if (len >= sizeof(name_buf))
				return fail(s, q, "include name `%s` is too long", s->c + q, len);
			memcpy(name_buf, s->c + q, len);
			name_buf[len] = '\0';
			if (!candidate_include_allowed(name_buf))
				return fail(s, q, "`#include <%s>` is not on the allow-list (cuda_fp16.h, "
					    "cuda_bf16.h, cuda_fp8.h, mma.h, cuda_pipeline.h, "
					    "cooperative_groups.h, cooperative_groups/reduce.h, "
					    "cuda/barrier, cuda/pipeline, cuda/std/...)", name_buf, len);
		}
		i = skip_blank(s, e + 1);
		if (at(s, i) == '/' && at(s, i + 1) == '/')
			return 0;
		if (at(s, i) != '\n' && at(s, i) != 0)
			return fail(s, i, "unexpected `%s` after `#include <...>`", s->c + i, 1);
		return 0;
	}
	if (n0 == 6 && !memcmp(s->c + name, "pragma", 6)) {
		size_t p;
		if (!strict)
			return 0;
		i = skip_blank(s, i);
		p = i;
		while (is_ident(at(s, i)))
			i++;
		if (i == p || !in_list(allowed_pragmas, s->c + p, i - p))
			return fail(s, p, "`#pragma %s` is not allowed (allowed: unroll, nounroll, once, "
				    "pack, push_macro, pop_macro, nv_diag_*)", s->c + p,
				    i == p ? 0 : i - p);
		return 0;
	}
	if (in_list(ok_directives, s->c + name, n0))
		return 0;
	if (!strict) {
		static const char *const reads[] = { "include_next", "import", "embed", "line", NULL };
		if (!in_list(reads, s->c + name, n0))
			return 0;
	}
	(void)start;
	return fail(s, name, "preprocessor directive `#%s` is not allowed", s->c + name, n0);
}

static int check_ident(struct sp *s, size_t i, size_t n)
{
	if (in_list(banned_idents, s->c + i, n))
		return fail(s, i, "`%s` is not allowed in a candidate", s->c + i, n);
	return 0;
}

/* Pass 2: any line whose first characters are `#` or `%:`. */
static int scan_lines(struct sp *s)
{
	size_t i = 0;
	while (i < s->n) {
		size_t j = i;
		while (at(s, j) == ' ' || at(s, j) == '\t')
			j++;
		if (at(s, j) == '#' || (at(s, j) == '%' && at(s, j + 1) == ':'))
			if (check_directive(s, j, 0) < 0)
				return -1;
		while (i < s->n && s->c[i] != '\n')
			i++;
		i++;
	}
	return 0;
}

int candidate_scan_source(const char *src, size_t len, int first_line, struct buf *err)
{
	struct sp s = { .err = err };
	size_t i = 0;
	int bol = 1, ret = -1;

	sp_build(&s, src, len, first_line);
	for (size_t k = 0; k + 2 < s.n; k++)
		if (s.c[k] == '?' && s.c[k + 1] == '?' && strchr("=/'()!<>-", s.c[k + 2])) {
			fail(&s, k, "trigraph `??%s` is not allowed", s.c + k + 2, 1);
			goto out;
		}
	while (i < s.n) {
		int ch = at(&s, i);
		if (ch == '\n') {
			bol = 1;
			i++;
		} else if (ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f' || ch == '\r') {
			i++;
		} else if (ch == '/' && at(&s, i + 1) == '*') {
			/* A comment keeps bol: `/ * * / #include` is still a directive. */
			i += 2;
			while (i < s.n && !(at(&s, i) == '*' && at(&s, i + 1) == '/'))
				i++;
			i = i < s.n ? i + 2 : s.n;
		} else if (ch == '/' && at(&s, i + 1) == '/') {
			while (i < s.n && s.c[i] != '\n')
				i++;
		} else if (bol && (ch == '#' || (ch == '%' && at(&s, i + 1) == ':'))) {
			if (check_directive(&s, i, 1) < 0)
				goto out;
			i += ch == '#' ? 1 : 2;
			bol = 0;
		} else if (ch == '"' || ch == '\'') {
			i++;
			while (i < s.n && at(&s, i) != ch && at(&s, i) != '\n')
				i += at(&s, i) == '\\' ? 2 : 1;
			i++;
			bol = 0;
		} else if (isdigit(ch) || (ch == '.' && isdigit(at(&s, i + 1)))) {
			/* pp-number, with C++14 digit separators and exponent signs. */
			i++;
			for (;;) {
				int c2 = at(&s, i);
				if ((c2 == '+' || c2 == '-') && strchr("eEpP", at(&s, i - 1)))
					i++;
				else if (is_ident(c2) || c2 == '.' || (c2 == '\'' && is_ident(at(&s, i + 1))))
					i++;
				else
					break;
			}
			bol = 0;
		} else if (is_ident(ch)) {
			size_t st = i;
			while (is_ident(at(&s, i)))
				i++;
			if (at(&s, i) == '"' && s.c[i - 1] == 'R') {
				fail(&s, st, "raw string literal `%s\"` is not allowed", s.c + st, i - st);
				goto out;
			}
			if (check_ident(&s, st, i - st) < 0)
				goto out;
			bol = 0;
		} else {
			i++;
			bol = 0;
		}
	}
	if (scan_lines(&s) < 0)
		goto out;
	ret = 0;
out:
	sp_free(&s);
	return ret;
}
