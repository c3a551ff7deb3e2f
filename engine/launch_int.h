/* Between launch_parse.c (lexer, integer expressions) and launch.c
 * (statements, argument matching, the plan). */
#ifndef KF_LAUNCH_INT_H
#define KF_LAUNCH_INT_H

#include "launch.h"

enum ltk { L_EOF, L_IDENT, L_INT, L_FLOAT, L_PUNCT };

struct ltok {
	enum ltk kind;
	char text[64];          /* identifiers and punctuation (truncated for messages) */
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
};

/* Tokens of the launch block body; first_line is its file line. */
int launch_lex(const char *text, int first_line, struct ltok **out, int *n, struct buf *err);

/* Parsing helpers: all errors are "LINE:COL: ..." at the current token. */
const struct ltok *lp_peek(const struct lparser *ps, int ahead);
int lp_is(const struct lparser *ps, int ahead, const char *punct_or_ident);
int lp_expect(struct lparser *ps, const char *punct, const char *what);
int lp_fail(struct lparser *ps, const struct ltok *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* 64-bit checked integer expression over the problem's sizes. */
int lp_expr(struct lparser *ps, long long *v);

#endif
