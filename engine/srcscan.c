/* The include / preprocessor scan of candidate device code: the guarantee
 * that NVRTC reads nothing from the disk on the candidate's behalf and
 * runs no pragma but unroll. It follows the preprocessor's own view of the
 * text (line splices, comments, strings, digraph `%:`), and is
 * conservative where that view is hard to follow: raw strings, trigraphs
 * and universal character names outside literals are refused, and a line
 * that starts with `#` is checked for file-reading directives even where
 * the scan believes it is inside a comment. What macros build cannot be
 * seen before preprocessing, so names that reach pragmas or file probes
 * are refused wherever they are spelled, and so is a `##` that could
 * paste one together (docs/formats.md, "What the scan refuses"). */
#include "candidate.h"
#include "core/xalloc.h"

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

/* Loop unrolling is the one compiler control a kernel needs; every other
 * pragma (diagnostics, packing, macro stacks, GCC/clang/omp forms) is
 * refused rather than judged one by one. */
static const char *const allowed_pragmas[] = { "unroll", "nounroll", NULL };

static const char *const ok_directives[] = {
	"define", "undef", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "else",
	"endif", "error", "warning", "pragma", "include", NULL,
};

/* Identifiers containing these (ASCII case folded) are refused anywhere:
 * _Pragma, __pragma, __has_include(_next), __has_embed, and the allowed
 * headers' wrappers of them (libcu++'s _CCCL_PRAGMA(x) and
 * _CCCL_HAS_INCLUDE(x), which reach a pragma or a file probe the caller
 * chooses). */
static const char *const banned_parts[] = { "pragma", "has_include", "has_embed", NULL };

/* The names above whose pragma or probe the caller controls: a `##`
 * operand that could be part of one of them is refused (lower case). */
static const char *const paste_targets[] = {
	"__pragma", "__has_include_next", "__has_embed", "_cccl_pragma", "_cccl_has_include", NULL,
};

/* The clock: a compile must not depend on when it runs. */
static const char *const clock_idents[] = { "__DATE__", "__TIME__", "__TIMESTAMP__", NULL };

#define MAX_MACRO_PARAMS 256

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
	/* The #define whose replacement list the scan is in: its parameters
	 * (offsets and lengths in c), n_params < 0 outside one. */
	int n_params;
	size_t p_off[MAX_MACRO_PARAMS], p_len[MAX_MACRO_PARAMS];
};

static int sp_build(struct sp *s, const char *src, size_t len, int first_line)
{
	int line = first_line, col = 1;
	s->c = xmalloc(len + 1);
	s->line = xmalloc((len + 1) * sizeof(int));
	s->col = xmalloc((len + 1) * sizeof(int));
	s->n = 0;
	for (size_t i = 0; i < len; i++) {
		if (src[i] == '\\' && i + 1 < len && src[i + 1] == '\n') {
			i++;
			line++;
			col = 1;
			continue;
		}
		if (src[i] == '\\' && i + 2 < len && src[i + 1] == '\r' && src[i + 2] == '\n') {
			i += 2;    /* a CRLF splice (the parent canonicalises; the child may not) */
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
 * lines the scan thinks are comments only get the file-reading check).
 * *after (may be NULL): the offset past the directive's name. */
static int check_directive(struct sp *s, size_t i, int strict, size_t *after)
{
	size_t n0, name;
	i += at(s, i) == '#' ? 1 : 2;
	i = skip_blank(s, i);
	name = i;
	while (is_ident(at(s, i)))
		i++;
	n0 = i - name;
	if (after)
		*after = i;
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
		if (after)
			*after = i;
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
			return fail(s, p, "`#pragma %s` is not allowed (only `#pragma unroll` and "
				    "`#pragma nounroll`)", s->c + p, i == p ? 0 : i - p);
		return 0;
	}
	if (in_list(ok_directives, s->c + name, n0))
		return 0;
	if (!strict) {
		static const char *const reads[] = { "include_next", "import", "embed", "line", NULL };
		if (!in_list(reads, s->c + name, n0))
			return 0;
	}
	return fail(s, name, "preprocessor directive `#%s` is not allowed", s->c + name, n0);
}

/* 1 if the n bytes at p contain part (ASCII case folded). */
static int has_part(const char *p, size_t n, const char *part)
{
	size_t k = strlen(part);
	for (size_t i = 0; i + k <= n; i++) {
		size_t j = 0;
		while (j < k && tolower((unsigned char)p[i + j]) == part[j])
			j++;
		if (j == k)
			return 1;
	}
	return 0;
}

static int check_ident(struct sp *s, size_t i, size_t n)
{
	for (int k = 0; banned_parts[k]; k++)
		if (has_part(s->c + i, n, banned_parts[k]))
			return fail(s, i, "`%s` is not allowed in a candidate: names containing `pragma`, "
				    "`has_include` or `has_embed` reach pragmas or file probes (the "
				    "pragmas allowed are `#pragma unroll` and `#pragma nounroll`)", s->c + i, n);
	if (in_list(clock_idents, s->c + i, n))
		return fail(s, i, "`%s` is not allowed in a candidate: the compile must not depend "
			    "on the clock", s->c + i, n);
	return 0;
}

/* After `#define NAME`: records the parameters of a function-like macro
 * (`(` right after the name) for the `##` check; the scan goes on from i. */
static int define_params(struct sp *s, size_t i)
{
	s->n_params = 0;
	i = skip_blank(s, i);
	while (is_ident(at(s, i)))
		i++;
	if (at(s, i) != '(')
		return 0;
	i++;
	for (;;) {
		size_t st;
		i = skip_blank(s, i);
		st = i;
		while (is_ident(at(s, i)))
			i++;
		if (i > st) {
			if (s->n_params == MAX_MACRO_PARAMS)
				return fail(s, st, "a macro with over 256 parameters%s", "", 0);
			s->p_off[s->n_params] = st;
			s->p_len[s->n_params++] = i - st;
			i = skip_blank(s, i);
		}
		if (at(s, i) == '.' && at(s, i + 1) == '.' && at(s, i + 2) == '.')
			i = skip_blank(s, i + 3);
		if (at(s, i) != ',')
			return 0;     /* `)`, or malformed: NVRTC says so */
		i++;
	}
}

/* A token around `##`: kind 0 none or not an identifier, 1 identifier. */
struct tok {
	int ident;
	size_t off, len;
};

static int is_param(const struct sp *s, const struct tok *t)
{
	if (!t->ident)
		return 0;
	if ((t->len == 11 && !memcmp(s->c + t->off, "__VA_ARGS__", 11)) ||
	    (t->len == 10 && !memcmp(s->c + t->off, "__VA_OPT__", 10)))
		return 1;
	for (int k = 0; k < s->n_params; k++)
		if (s->p_len[k] == t->len && !memcmp(s->c + s->p_off[k], s->c + t->off, t->len))
			return 1;
	return 0;
}

/* `##` at i with operands l and r. Macro parameters stand for any text,
 * so two of them can paste any name: refused. A fixed identifier operand
 * is in every name its paste leads to, so it must not be a piece of a
 * name that reaches a chosen pragma or probe. */
static int check_paste(struct sp *s, size_t i, const struct tok *l, const struct tok *r)
{
	const struct tok *ops[2] = { l, r };
	if (is_param(s, l) && is_param(s, r))
		return fail(s, i, "`##` between two macro parameters (`%s ## ...`) is not allowed: "
			    "the pasted name cannot be checked before preprocessing; paste a fixed "
			    "part, as in `name##_kernel`", s->c + l->off, l->len);
	for (int k = 0; k < 2; k++) {
		char low[64];
		const struct tok *t = ops[k];
		if (!t->ident || is_param(s, t))
			continue;
		if (t->len >= sizeof(low))
			continue;     /* longer than every target */
		for (size_t j = 0; j < t->len; j++)
			low[j] = (char)tolower((unsigned char)s->c[t->off + j]);
		low[t->len] = '\0';
		for (int d = 0; paste_targets[d]; d++)
			if (strstr(paste_targets[d], low))
				return fail(s, t->off, "`##` with `%s` is not allowed: it could paste "
					    "`_Pragma`, `__has_include` or a header macro that reaches "
					    "them; paste a longer fixed part, as in `name##_kernel`",
					    s->c + t->off, t->len);
	}
	return 0;
}

/* The token at i (after blanks and block comments) as a `##` operand. */
static struct tok tok_at(const struct sp *s, size_t i)
{
	struct tok t = { 0, i, 0 };
	if (is_ident(at(s, i)) && !isdigit(at(s, i))) {
		t.ident = 1;
		while (is_ident(at(s, i + t.len)))
			t.len++;
	}
	return t;
}

static int is_hash(const struct sp *s, size_t i)
{
	return at(s, i) == '#' || (at(s, i) == '%' && at(s, i + 1) == ':');
}

/* Pass 2: any line whose first characters are `#` or `%:`, and any `#`
 * or `%:` right after a `*' '/` (a comment that began on an earlier line
 * leaves the directive at the start of its line). */
static int scan_lines(struct sp *s)
{
	size_t i = 0;
	for (size_t k = 0; k + 1 < s->n; k++)
		if (s->c[k] == '*' && s->c[k + 1] == '/') {
			size_t j = skip_blank(s, k + 2);
			if (is_hash(s, j) && check_directive(s, j, 0, NULL) < 0)
				return -1;
		}
	while (i < s->n) {
		size_t j = i;
		while (at(s, j) == ' ' || at(s, j) == '\t')
			j++;
		if (is_hash(s, j) && check_directive(s, j, 0, NULL) < 0)
			return -1;
		while (i < s->n && s->c[i] != '\n' && s->c[i] != '\r')
			i++;
		i++;
	}
	return 0;
}

int candidate_scan_source(const char *src, size_t len, int first_line, struct buf *err)
{
	struct sp *s = xcalloc(1, sizeof(*s));
	struct tok prev = { 0, 0, 0 };
	size_t i = 0;
	int bol = 1, ret = -1;

	s->err = err;
	s->n_params = -1;
	sp_build(s, src, len, first_line);
	for (size_t k = 0; k + 2 < s->n; k++)
		if (s->c[k] == '?' && s->c[k + 1] == '?' && strchr("=/'()!<>-", s->c[k + 2])) {
			fail(s, k, "trigraph `??%s` is not allowed", s->c + k + 2, 1);
			goto out;
		}
	while (i < s->n) {
		int ch = at(s, i);
		if (ch == '\n' || ch == '\r') {   /* CR: a line end to some preprocessors */
			bol = 1;
			s->n_params = -1;          /* a directive ends with its line */
			prev.ident = 0;
			prev.len = 0;
			i++;
		} else if (ch == ' ' || ch == '\t' || ch == '\v' || ch == '\f') {
			i++;
		} else if (ch == '/' && at(s, i + 1) == '*') {
			/* A comment keeps bol: `/ * * / #include` is still a directive. */
			i += 2;
			while (i < s->n && !(at(s, i) == '*' && at(s, i + 1) == '/'))
				i++;
			i = i < s->n ? i + 2 : s->n;
		} else if (ch == '/' && at(s, i + 1) == '/') {
			while (i < s->n && s->c[i] != '\n')
				i++;
		} else if (bol && is_hash(s, i)) {
			size_t after;
			if (check_directive(s, i, 1, &after) < 0)
				goto out;
			/* The directive's name is no identifier (`pragma`). */
			if (after - i >= 6 && !memcmp(s->c + after - 6, "define", 6) &&
			    define_params(s, after) < 0)
				goto out;
			/* #error and #warning take a message, not tokens ("don't"). */
			if ((after - i >= 5 && !memcmp(s->c + after - 5, "error", 5)) ||
			    (after - i >= 7 && !memcmp(s->c + after - 7, "warning", 7)))
				while (after < s->n && s->c[after] != '\n' && s->c[after] != '\r')
					after++;
			i = after;
			bol = 0;
			prev.ident = 0;
			prev.len = 0;
		} else if (is_hash(s, i) && is_hash(s, i + (ch == '#' ? 1 : 2))) {
			/* `##` (or `%:%:`): the paste check. */
			size_t j = i + (ch == '#' ? 1 : 2);
			struct tok r;
			j = skip_blank(s, j + (at(s, j) == '#' ? 1 : 2));
			r = tok_at(s, j);
			if (check_paste(s, i, &prev, &r) < 0)
				goto out;
			i = j;
			prev.ident = 0;
			prev.len = 0;
		} else if (ch == '"' || ch == '\'') {
			/* To the closing quote on the same line. An unterminated one
			 * is refused: NVRTC goes on lexing after a lone quote, where
			 * the scan would have seen the rest of the line as text. */
			size_t st = i++;
			while (i < s->n && at(s, i) != ch && at(s, i) != '\n' && at(s, i) != '\r')
				i += at(s, i) == '\\' && at(s, i + 1) != '\n' && at(s, i + 1) != '\r' ? 2 : 1;
			if (at(s, i) != ch) {
				fail(s, st, ch == '"' ? "unterminated string literal%s"
						      : "unterminated character literal%s", "", 0);
				goto out;
			}
			i++;
			bol = 0;
			prev.ident = 0;
			prev.len = 0;
		} else if (isdigit(ch) || (ch == '.' && isdigit(at(s, i + 1)))) {
			/* pp-number, with C++14 digit separators and exponent signs. */
			i++;
			for (;;) {
				int c2 = at(s, i);
				if ((c2 == '+' || c2 == '-') && strchr("eEpP", at(s, i - 1)))
					i++;
				else if (is_ident(c2) || c2 == '.' || (c2 == '\'' && is_ident(at(s, i + 1))))
					i++;
				else
					break;
			}
			bol = 0;
			prev.ident = 0;
			prev.len = 0;
		} else if (is_ident(ch)) {
			size_t st = i;
			while (is_ident(at(s, i)))
				i++;
			if (at(s, i) == '"' && s->c[i - 1] == 'R') {
				fail(s, st, "raw string literal `%s\"` is not allowed", s->c + st, i - st);
				goto out;
			}
			if (at(s, i) == '\\' && (at(s, i + 1) == 'u' || at(s, i + 1) == 'U')) {
				fail(s, i, "universal character name `%s` outside a literal is not "
				     "allowed (it can spell names the scan does not see)", s->c + i, 2);
				goto out;
			}
			if (check_ident(s, st, i - st) < 0)
				goto out;
			prev.ident = 1;
			prev.off = st;
			prev.len = i - st;
			bol = 0;
		} else if (ch == '\\' && (at(s, i + 1) == 'u' || at(s, i + 1) == 'U')) {
			fail(s, i, "universal character name `%s` outside a literal is not allowed "
			     "(it can spell names the scan does not see)", s->c + i, 2);
			goto out;
		} else {
			i++;
			bol = 0;
			prev.ident = 0;
			prev.len = 0;
		}
	}
	if (scan_lines(s) < 0)
		goto out;
	ret = 0;
out:
	sp_free(s);
	free(s);
	return ret;
}
