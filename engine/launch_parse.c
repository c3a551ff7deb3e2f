/* The launch block's lexer and its integer expressions: 64-bit signed,
 * every operation checked (overflow, division by zero). */
#include "launch_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAUNCH_MAX_TOKENS 8192

static void add_tok(struct ltok **t, int *n, int *alloc, const struct ltok *k)
{
	if (*n == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 64;
		*t = realloc(*t, (size_t)*alloc * sizeof(**t));
		if (!*t)
			abort();
	}
	(*t)[(*n)++] = *k;
}

int launch_lex(const char *s, int first_line, struct ltok **out, int *n_out, struct buf *err)
{
	struct ltok *t = NULL;
	int n = 0, alloc = 0, line = first_line, col = 1;
	size_t i = 0;

	while (s[i]) {
		struct ltok k;
		char c = s[i];
		size_t st = i;
		memset(&k, 0, sizeof(k));
		k.line = line;
		k.col = col;
		if (c == '\n') {
			line++;
			col = 1;
			i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			i++;
			col++;
			continue;
		}
		if (c == '/' && s[i + 1] == '/') {
			while (s[i] && s[i] != '\n')
				i++;
			continue;
		}
		if (n >= LAUNCH_MAX_TOKENS) {
			free(t);
			return kf_err(err, "%d:%d: launch block too long (over %d tokens)", line, col,
				      LAUNCH_MAX_TOKENS);
		}
		if (isalpha((unsigned char)c) || c == '_') {
			while (isalnum((unsigned char)s[i]) || s[i] == '_')
				i++;
			k.kind = L_IDENT;
		} else if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)s[i + 1]))) {
			int is_float = 0, hex = c == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
			char *end;
			if (hex) {
				i += 2;
				while (isxdigit((unsigned char)s[i]))
					i++;
			} else {
				while (isdigit((unsigned char)s[i]))
					i++;
				if (s[i] == '.') {
					is_float = 1;
					i++;
					while (isdigit((unsigned char)s[i]))
						i++;
				}
				if (s[i] == 'e' || s[i] == 'E') {
					size_t j = i + 1;
					if (s[j] == '+' || s[j] == '-')
						j++;
					if (isdigit((unsigned char)s[j])) {
						is_float = 1;
						i = j;
						while (isdigit((unsigned char)s[i]))
							i++;
					}
				}
			}
			errno = 0;
			if (is_float || ((s[i] == 'f' || s[i] == 'F') && !hex)) {
				k.kind = L_FLOAT;
				k.fval = strtod(s + st, &end);
				if (s[i] == 'f' || s[i] == 'F')
					i++;
			} else {
				unsigned long long u = strtoull(s + st, &end, 0);
				k.kind = L_INT;
				if (errno == ERANGE || u > (unsigned long long)LLONG_MAX) {
					free(t);
					return kf_err(err, "%d:%d: integer literal %.*s does not fit in 64 bits",
						      line, col, (int)(i - st), s + st);
				}
				k.ival = (long long)u;
				/* C suffixes: u, l, ll in any case. */
				while (s[i] == 'u' || s[i] == 'U' || s[i] == 'l' || s[i] == 'L')
					i++;
			}
			if (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.') {
				free(t);
				return kf_err(err, "%d:%d: malformed number `%.*s`", line, col,
					      (int)(i - st + 1), s + st);
			}
		} else if ((c == '<' && s[i + 1] == '<' && s[i + 2] == '<') ||
			   (c == '>' && s[i + 1] == '>' && s[i + 2] == '>')) {
			i += 3;
			k.kind = L_PUNCT;
		} else if (strchr("()[],;+-*/%", c)) {
			i++;
			k.kind = L_PUNCT;
		} else {
			free(t);
			if (isprint((unsigned char)c))
				return kf_err(err, "%d:%d: unexpected character `%c` in the launch block",
					      line, col, c);
			return kf_err(err, "%d:%d: unexpected byte 0x%02x in the launch block", line,
				      col, (unsigned char)c);
		}
		k.len = i - st;
		snprintf(k.text, sizeof(k.text), "%.*s", (int)(i - st), s + st);
		col += (int)(i - st);
		add_tok(&t, &n, &alloc, &k);
	}
	{
		struct ltok k;
		memset(&k, 0, sizeof(k));
		k.kind = L_EOF;
		k.line = line;
		k.col = col;
		add_tok(&t, &n, &alloc, &k);
	}
	*out = t;
	*n_out = n;
	return 0;
}

const struct ltok *lp_peek(const struct lparser *ps, int ahead)
{
	int i = ps->pos + ahead;
	return &ps->t[i < ps->n ? i : ps->n - 1];
}

int lp_is(const struct lparser *ps, int ahead, const char *w)
{
	const struct ltok *k = lp_peek(ps, ahead);
	return (k->kind == L_PUNCT || k->kind == L_IDENT) && !strcmp(k->text, w);
}

int lp_fail(struct lparser *ps, const struct ltok *at, const char *fmt, ...)
{
	va_list ap;
	if (!at)
		at = lp_peek(ps, 0);
	buf_setf(ps->err, "%d:%d: ", at->line, at->col);
	va_start(ap, fmt);
	buf_vaddf(ps->err, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *tok_desc(const struct ltok *k)
{
	return k->kind == L_EOF ? "the end of the launch block" : k->text;
}

int lp_expect(struct lparser *ps, const char *punct, const char *what)
{
	const struct ltok *k = lp_peek(ps, 0);
	if (!lp_is(ps, 0, punct))
		return lp_fail(ps, k, "expected `%s` %s, found `%s`", punct, what, tok_desc(k));
	ps->pos++;
	return 0;
}

static int expr_add(struct lparser *ps, long long *v);

static void list_sizes(const struct problem *p, struct buf *b)
{
	for (int i = 0; i < p->n_sizes; i++)
		buf_addf(b, "%s%s", i ? ", " : "", p->size_names[i]);
	if (!p->n_sizes)
		buf_adds(b, "none");
}

static int primary(struct lparser *ps, long long *v)
{
	const struct ltok *k = lp_peek(ps, 0);
	if (k->kind == L_INT) {
		*v = k->ival;
		ps->pos++;
		return 0;
	}
	if (lp_is(ps, 0, "(")) {
		ps->pos++;
		if (expr_add(ps, v) < 0)
			return -1;
		return lp_expect(ps, ")", "to close the parenthesis");
	}
	if (k->kind == L_FLOAT)
		return lp_fail(ps, k, "expected an integer expression, found the float `%s`", k->text);
	if (k->kind != L_IDENT)
		return lp_fail(ps, k, "expected an integer expression, found `%s`", tok_desc(k));
	if (lp_is(ps, 1, "(") && (!strcmp(k->text, "ceil_div") || !strcmp(k->text, "min") ||
				  !strcmp(k->text, "max"))) {
		long long a, b;
		ps->pos += 2;
		if (expr_add(ps, &a) < 0 || lp_expect(ps, ",", "between the two arguments") < 0 ||
		    expr_add(ps, &b) < 0 || lp_expect(ps, ")", "after the two arguments") < 0)
			return -1;
		if (k->text[0] == 'm') {
			*v = k->text[1] == 'i' ? (a < b ? a : b) : (a > b ? a : b);
			return 0;
		}
		if (b <= 0)
			return lp_fail(ps, k, "ceil_div(%lld, %lld): the divisor must be positive", a, b);
		if (a < 0)
			return lp_fail(ps, k, "ceil_div(%lld, %lld): the dividend must not be negative",
				       a, b);
		*v = a / b + (a % b != 0);
		return 0;
	}
	if (lp_is(ps, 1, "("))
		return lp_fail(ps, k, "unknown function `%s` (expressions may use ceil_div, min, max)",
			       k->text);
	if (problem_size(ps->p, k->text, v) == 0) {
		ps->pos++;
		return 0;
	}
	{
		struct buf names = BUF_INIT;
		const char *what = problem_tensor_index(ps->p, k->text) >= 0 ? "a tensor"
				   : problem_scalar(ps->p, k->text, &(double){ 0 }) == 0 ? "a float scalar"
				   : NULL;
		list_sizes(ps->p, &names);
		if (what)
			lp_fail(ps, k, "`%s` is %s, not an integer size (sizes: %s)", k->text, what,
				names.s);
		else
			lp_fail(ps, k, "unknown name `%s` (sizes: %s)", k->text, names.s);
		buf_release(&names);
		return -1;
	}
}

static int unary(struct lparser *ps, long long *v)
{
	const struct ltok *k = lp_peek(ps, 0);
	if (lp_is(ps, 0, "-") || lp_is(ps, 0, "+")) {
		ps->pos++;
		if (unary(ps, v) < 0)
			return -1;
		if (k->text[0] == '-') {
			if (*v == LLONG_MIN)
				return lp_fail(ps, k, "integer overflow in negation");
			*v = -*v;
		}
		return 0;
	}
	return primary(ps, v);
}

static int expr_mul(struct lparser *ps, long long *v)
{
	if (unary(ps, v) < 0)
		return -1;
	while (lp_is(ps, 0, "*") || lp_is(ps, 0, "/") || lp_is(ps, 0, "%")) {
		const struct ltok *op = lp_peek(ps, 0);
		long long b;
		ps->pos++;
		if (unary(ps, &b) < 0)
			return -1;
		if (op->text[0] == '*') {
			if (__builtin_mul_overflow(*v, b, v))
				return lp_fail(ps, op, "integer overflow: the product does not fit in "
					       "64 bits");
		} else {
			if (b == 0)
				return lp_fail(ps, op, "division by zero");
			if (*v == LLONG_MIN && b == -1)
				return lp_fail(ps, op, "integer overflow in division");
			*v = op->text[0] == '/' ? *v / b : *v % b;
		}
	}
	return 0;
}

static int expr_add(struct lparser *ps, long long *v)
{
	if (expr_mul(ps, v) < 0)
		return -1;
	while (lp_is(ps, 0, "+") || lp_is(ps, 0, "-")) {
		const struct ltok *op = lp_peek(ps, 0);
		long long b;
		int o;
		ps->pos++;
		if (expr_mul(ps, &b) < 0)
			return -1;
		o = op->text[0] == '+' ? __builtin_add_overflow(*v, b, v)
				       : __builtin_sub_overflow(*v, b, v);
		if (o)
			return lp_fail(ps, op, "integer overflow: the result does not fit in 64 bits");
	}
	return 0;
}

int lp_expr(struct lparser *ps, long long *v)
{
	return expr_add(ps, v);
}
