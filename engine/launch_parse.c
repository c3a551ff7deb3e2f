/* The launch block's lexer and its integer expressions: 64-bit signed,
 * every operation checked (overflow, division by zero). */
#include "launch_int.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAUNCH_MAX_TOKENS (1 << 18)      /* about CANDIDATE_MAX_BYTES: 4096 launch statements */

static void add_tok(struct ltok **t, int *n, int *alloc, const struct ltok *k)
{
	if (*n == *alloc) {
		*alloc = *alloc ? *alloc * 2 : 64;
		*t = xrealloc(*t, (size_t)*alloc * sizeof(**t));
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
			if (i - st >= sizeof(k.text)) {
				free(t);
				return kf_err(err, "%d:%d: name of %zu characters is too long", line, col,
					      i - st);
			}
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
		} else if (((c == '<' || c == '>') && s[i + 1] == '=') ||
			   ((c == '+' || c == '-') && (s[i + 1] == c || s[i + 1] == '='))) {
			i += 2;      /* <= >= ++ -- += -= (loops) */
			k.kind = L_PUNCT;
		} else if (strchr("()[],;+-*/%{}=<>", c)) {
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

static int cexpr(struct lparser *ps);

static void list_sizes(const struct problem *p, struct buf *b)
{
	for (int i = 0; i < p->n_sizes; i++)
		buf_addf(b, "%s%s", i ? ", " : "", p->size_names[i]);
	if (!p->n_sizes)
		buf_adds(b, "none");
}

static int emit(struct lparser *ps, int op, long long v, const struct ltok *at)
{
	struct lx_op *o;

	if (ps->n_code >= LAUNCH_MAX_EXPR)
		return lp_fail(ps, at, "expression too long (over %d operations)", LAUNCH_MAX_EXPR);
	if (ps->n_code == ps->alloc_code) {
		ps->alloc_code = ps->alloc_code ? 2 * ps->alloc_code : 16;
		ps->code = xrealloc(ps->code, (size_t)ps->alloc_code * sizeof(*ps->code));
	}
	o = &ps->code[ps->n_code++];
	o->op = op;
	o->v = v;
	o->line = at ? at->line : 0;
	o->col = at ? at->col : 0;
	return 0;
}

static int is_const_at(const struct lparser *ps, int i)
{
	return ps->code[i].op == LX_CONST;
}

/* Operator op over the operands compiled from a (and b, when binary):
 * folded when they are constants (errors at once, at `at`), else emitted. */
static int combine(struct lparser *ps, int op, const struct ltok *at, int a, int b)
{
	char why[96];
	long long r;

	if (op == LX_NEG ? ps->n_code == a + 1 && is_const_at(ps, a)
			 : b == a + 1 && ps->n_code == b + 1 && is_const_at(ps, a) && is_const_at(ps, b)) {
		if (lx_apply(op, ps->code[a].v, op == LX_NEG ? 0 : ps->code[b].v, &r, why,
			     sizeof(why)) < 0)
			return lp_fail(ps, at, "%s", why);
		ps->code[a].v = r;
		ps->n_code = a + 1;
		return 0;
	}
	return emit(ps, op, 0, at);
}

static int primary(struct lparser *ps)
{
	const struct ltok *k = lp_peek(ps, 0);
	long long v;
	if (k->kind == L_INT) {
		ps->pos++;
		return emit(ps, LX_CONST, k->ival, k);
	}
	if (lp_is(ps, 0, "(")) {
		ps->pos++;
		if (cexpr(ps) < 0)
			return -1;
		return lp_expect(ps, ")", "to close the parenthesis");
	}
	if (k->kind == L_FLOAT)
		return lp_fail(ps, k, "expected an integer expression, found the float `%s`", k->text);
	if (k->kind != L_IDENT)
		return lp_fail(ps, k, "expected an integer expression, found `%s`", tok_desc(k));
	if (lp_is(ps, 1, "(") && (!strcmp(k->text, "ceil_div") || !strcmp(k->text, "min") ||
				  !strcmp(k->text, "max"))) {
		int a = ps->n_code, b;
		ps->pos += 2;
		if (cexpr(ps) < 0 || lp_expect(ps, ",", "between the two arguments") < 0)
			return -1;
		b = ps->n_code;
		if (cexpr(ps) < 0 || lp_expect(ps, ")", "after the two arguments") < 0)
			return -1;
		return combine(ps, k->text[0] == 'c' ? LX_CEIL_DIV : k->text[1] == 'i' ? LX_MIN : LX_MAX,
			       k, a, b);
	}
	if (lp_is(ps, 1, "("))
		return lp_fail(ps, k, "unknown function `%s` (expressions may use ceil_div, min, max)",
			       k->text);
	for (int d = ps->n_vars - 1; d >= 0; d--)
		if (!strcmp(ps->vars[d], k->text)) {
			ps->pos++;
			return emit(ps, LX_VAR, d, k);
		}
	if (problem_size(ps->p, k->text, &v) == 0) {
		ps->pos++;
		return emit(ps, LX_CONST, v, k);
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

static int unary(struct lparser *ps)
{
	const struct ltok *k = lp_peek(ps, 0);
	if (lp_is(ps, 0, "-") || lp_is(ps, 0, "+")) {
		int r, a;
		ps->pos++;
		if (++ps->depth > LAUNCH_MAX_DEPTH)
			return lp_fail(ps, k, "expression nested too deeply (over %d levels)",
				       LAUNCH_MAX_DEPTH);
		a = ps->n_code;
		r = unary(ps);
		ps->depth--;
		if (r < 0)
			return -1;
		return k->text[0] == '-' ? combine(ps, LX_NEG, k, a, -1) : 0;
	}
	return primary(ps);
}

static int expr_mul(struct lparser *ps)
{
	int a = ps->n_code;
	if (unary(ps) < 0)
		return -1;
	while (lp_is(ps, 0, "*") || lp_is(ps, 0, "/") || lp_is(ps, 0, "%")) {
		const struct ltok *op = lp_peek(ps, 0);
		int b = ps->n_code;
		ps->pos++;
		if (unary(ps) < 0 ||
		    combine(ps, op->text[0] == '*' ? LX_MUL : op->text[0] == '/' ? LX_DIV : LX_MOD, op,
			    a, b) < 0)
			return -1;
	}
	return 0;
}

static int expr_add(struct lparser *ps)
{
	int a = ps->n_code;
	if (expr_mul(ps) < 0)
		return -1;
	while (lp_is(ps, 0, "+") || lp_is(ps, 0, "-")) {
		const struct ltok *op = lp_peek(ps, 0);
		int b = ps->n_code;
		ps->pos++;
		if (expr_mul(ps) < 0 || combine(ps, op->text[0] == '+' ? LX_ADD : LX_SUB, op, a, b) < 0)
			return -1;
	}
	return 0;
}

static int cexpr(struct lparser *ps)
{
	int r;
	if (++ps->depth > LAUNCH_MAX_DEPTH)
		return lp_fail(ps, NULL, "expression nested too deeply (over %d levels)",
			       LAUNCH_MAX_DEPTH);
	r = expr_add(ps);
	ps->depth--;
	return r;
}

int lp_expr_c(struct lparser *ps, struct launch_expr *e)
{
	e->op = NULL;
	e->n = 0;
	ps->n_code = 0;
	if (cexpr(ps) < 0)
		return -1;
	e->op = xmalloc((size_t)ps->n_code * sizeof(*e->op));
	memcpy(e->op, ps->code, (size_t)ps->n_code * sizeof(*e->op));
	e->n = ps->n_code;
	return 0;
}

int lx_const(const struct launch_expr *e, long long *v)
{
	if (e->n != 1 || e->op[0].op != LX_CONST)
		return 0;
	*v = e->op[0].v;
	return 1;
}

int lp_expr(struct lparser *ps, long long *v)
{
	const struct ltok *at = lp_peek(ps, 0);
	struct launch_expr e;
	int r;

	if (lp_expr_c(ps, &e) < 0)
		return -1;
	r = lx_const(&e, v) ? 0 : lp_fail(ps, at, "a loop variable cannot appear here");
	launch_expr_release(&e);
	return r;
}
