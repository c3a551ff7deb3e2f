/* Between launch_parse.c (lexer, integer expressions) and launch.c
 * (statements, argument matching, the plan). */
#ifndef KF_LAUNCH_INT_H
#define KF_LAUNCH_INT_H

#include "launch.h"

enum ltk { L_EOF, L_IDENT, L_INT, L_FLOAT, L_PUNCT };

struct ltok {
	enum ltk kind;
	char text[128];         /* the token (numbers truncated; names over 127 bytes are refused) */
	size_t len;             /* full length in the source */
	long long ival;
	double fval;
	int line, col;          /* file position */
};

struct lparser {
	struct ltok *t;
	int n, pos;
	const struct problem *p;
	const struct launch_plan *lp;    /* scratch declared so far */
	struct buf *err;
	int depth;              /* expression nesting, bounded */
	const char *vars[LAUNCH_MAX_LOOP_DEPTH];   /* loop variables in scope, outermost first */
	int n_vars;
	struct lx_op *code;     /* the expression being compiled (postfix) */
	int n_code, alloc_code;
};

#define LAUNCH_MAX_DEPTH 64

/* Tokens of the launch block body; first_line is its file line. */
int launch_lex(const char *text, int first_line, struct ltok **out, int *n, struct buf *err);

/* Parsing helpers: all errors are "LINE:COL: ..." at the current token. */
const struct ltok *lp_peek(const struct lparser *ps, int ahead);
int lp_is(const struct lparser *ps, int ahead, const char *punct_or_ident);
int lp_expect(struct lparser *ps, const char *punct, const char *what);
int lp_fail(struct lparser *ps, const struct ltok *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 64-bit checked integer expression over the problem's sizes; no loop
 * variable may appear. */
int lp_expr(struct lparser *ps, long long *v);
/* The same over sizes and the loop variables in scope, compiled into e
 * (folded: constant parts are evaluated, with their errors, at once). */
int lp_expr_c(struct lparser *ps, struct launch_expr *e);
/* e's value when it is a constant: 1, else 0. */
int lx_const(const struct launch_expr *e, long long *v);

/* launch_run.c: one operation, checked; -1 with the reason in why. */
int lx_apply(int op, long long a, long long b, long long *r, char *why, size_t wn);

#endif
