/* Executing a launch plan's structure: expressions over loop variables
 * (the checked 64-bit arithmetic of launch_parse.c) and the walk over its
 * loops. Plan build walks it to check every launch; the worker walks it to
 * launch. */
#include "launch_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void launch_expr_release(struct launch_expr *e)
{
	free(e->op);
	e->op = NULL;
	e->n = 0;
}

int lx_apply(int op, long long a, long long b, long long *r, char *why, size_t wn)
{
	const char *m = "bad expression";

	switch (op) {
	case LX_NEG:
		if (a != LLONG_MIN)
			return *r = -a, 0;
		m = "integer overflow in negation";
		break;
	case LX_ADD:
	case LX_SUB:
		if (!(op == LX_ADD ? __builtin_add_overflow(a, b, r) : __builtin_sub_overflow(a, b, r)))
			return 0;
		m = "integer overflow: the result does not fit in 64 bits";
		break;
	case LX_MUL:
		if (!__builtin_mul_overflow(a, b, r))
			return 0;
		m = "integer overflow: the product does not fit in 64 bits";
		break;
	case LX_DIV:
	case LX_MOD:
		if (b == 0) {
			m = "division by zero";
			break;
		}
		if (a == LLONG_MIN && b == -1) {
			m = "integer overflow in division";
			break;
		}
		*r = op == LX_DIV ? a / b : a % b;
		return 0;
	case LX_MIN:
		*r = a < b ? a : b;
		return 0;
	case LX_MAX:
		*r = a > b ? a : b;
		return 0;
	case LX_CEIL_DIV:
		if (b > 0 && a >= 0) {
			*r = a / b + (a % b != 0);
			return 0;
		}
		snprintf(why, wn, "ceil_div(%lld, %lld): the %s", a, b,
			 b <= 0 ? "divisor must be positive" : "dividend must not be negative");
		return -1;
	}
	snprintf(why, wn, "%s", m);
	return -1;
}

static int fail_at(const struct lx_op *o, const char *why, struct buf *err)
{
	if (o && o->line > 0)
		return kf_err(err, "%d:%d: %s", o->line, o->col, why);
	return kf_err(err, "%s", why);
}

int launch_expr_eval(const struct launch_expr *e, const long long *vars, long long *v,
		     struct buf *err)
{
	long long st[LAUNCH_MAX_EXPR];
	char why[96];
	int sp = 0;

	for (int i = 0; i < e->n; i++) {
		const struct lx_op *o = &e->op[i];
		switch (o->op) {
		case LX_CONST:
			st[sp++] = o->v;
			break;
		case LX_VAR:
			st[sp++] = vars[o->v];
			break;
		case LX_NEG:
			if (lx_apply(LX_NEG, st[sp - 1], 0, &st[sp - 1], why, sizeof(why)) < 0)
				return fail_at(o, why, err);
			break;
		default:
			if (lx_apply(o->op, st[sp - 2], st[sp - 1], &st[sp - 2], why, sizeof(why)) < 0)
				return fail_at(o, why, err);
			sp--;
		}
	}
	*v = st[0];
	return 0;
}

int launch_step_eval(const struct launch_step *st, const long long *vars, struct launch_call *c,
		     struct buf *err)
{
	for (int d = 0; d < 3; d++) {
		c->grid[d] = st->grid[d];
		c->block[d] = st->block[d];
	}
	c->smem = st->smem;
	if (st->dyn) {
		long long v[7];
		for (int d = 0; d < 7; d++)
			if (launch_expr_eval(&st->dims[d], vars, &v[d], err) < 0)
				return -1;
		for (int d = 0; d < 3; d++) {
			/* limits were checked for every iteration at build; the worker checks again */
			if (v[d] < 1 || v[d] > INT_MAX || v[3 + d] < 1 || v[3 + d] > 1024)
				return kf_err(err, "line %d: grid or block out of range", st->line);
			c->grid[d] = (unsigned)v[d];
			c->block[d] = (unsigned)v[3 + d];
		}
		if (v[6] < 0 || v[6] > (long long)st->smem)
			return kf_err(err, "line %d: dynamic shared memory out of range", st->line);
		c->smem = (unsigned)v[6];
	}
	for (int a = 0; a < st->n_args && a < LAUNCH_MAX_ARGS; a++) {
		const struct launch_arg *la = &st->args[a];
		long long v = la->ival;
		if (la->expr.n && launch_expr_eval(&la->expr, vars, &v, err) < 0)
			return -1;
		c->ival[a] = v;
		c->fval[a] = la->kind == LARG_FLOAT && la->expr.n ? (double)v : la->fval;
	}
	return 0;
}

struct walk {
	const struct launch_plan *lp;
	launch_walk_fn fn;
	void *ctx;
	struct buf *err;
	long long vars[LAUNCH_MAX_LOOP_DEPTH];
	long long launches, iters;
};

static int walk_range(struct walk *w, int lo, int hi, int li, int depth);

static void vars_desc_n(const struct launch_plan *lp, int s, const long long *vars, int n,
			struct buf *out)
{
	int k = 0;

	buf_reset(out);
	for (int i = 0; i < lp->n_loops && k < n; i++) {
		const struct launch_loop *L = &lp->loops[i];
		if (L->depth == k && L->first <= s && s < L->end) {
			buf_addf(out, "%s%s = %lld", k ? ", " : "", L->var, vars[k]);
			k++;
		}
	}
}

/* "LINE:COL: MSG (at OUTER VARS)" for loop L; n: how many loop levels to show. */
static int loop_fail(struct walk *w, const struct launch_loop *L, int n, const char *msg)
{
	struct buf d = BUF_INIT;

	vars_desc_n(w->lp, L->first, w->vars, n, &d);
	kf_err(w->err, "%s%s%s%s", msg, d.len ? " (at " : "", d.s, d.len ? ")" : "");
	buf_release(&d);
	return -1;
}

#define LOOP_ERR(w, L, ...)                                                     \
	do {                                                                    \
		char m_[200];                                                   \
		int k_ = snprintf(m_, sizeof(m_), "%d:%d: ", (L)->line, (L)->col); \
		snprintf(m_ + k_, sizeof(m_) - (size_t)k_, __VA_ARGS__);        \
		return loop_fail((w), (L), (L)->depth, m_);                     \
	} while (0)

/* Evaluates one of L's expressions; n: loop levels named in an error. */
static int loop_expr(struct walk *w, const struct launch_loop *L, const struct launch_expr *e,
		     int n, long long *v)
{
	struct buf e2 = BUF_INIT;
	int r = launch_expr_eval(e, w->vars, v, &e2);

	if (r < 0)
		loop_fail(w, L, n, e2.s);
	buf_release(&e2);
	return r;
}

static int run_loop(struct walk *w, const struct launch_loop *L, int li)
{
	long long v, b, step;
	int go, r;

	if (loop_expr(w, L, &L->init, L->depth, &v) < 0)
		return -1;
	for (;;) {
		if (v < INT_MIN || v > INT_MAX)
			LOOP_ERR(w, L, "loop variable `%s` = %lld does not fit an int", L->var, v);
		w->vars[L->depth] = v;
		if (loop_expr(w, L, &L->bound, L->depth + 1, &b) < 0)
			return -1;
		go = L->cmp == LCMP_LT ? v < b : L->cmp == LCMP_LE ? v <= b : L->cmp == LCMP_GT ? v > b
									: v >= b;
		if (!go)
			break;
		/* a bound on loops that launch nothing (an empty inner range) */
		if (++w->iters > (long long)LAUNCH_MAX_LOOP_DEPTH * LAUNCH_MAX_LAUNCHES)
			LOOP_ERR(w, L, "loop `%s`: over %lld loop iterations in all", L->var,
				 (long long)LAUNCH_MAX_LOOP_DEPTH * LAUNCH_MAX_LAUNCHES);
		if ((r = walk_range(w, L->first, L->end, li + 1, L->depth + 1)) != 0)
			return r;
		w->vars[L->depth] = v;
		if (loop_expr(w, L, &L->step, L->depth + 1, &step) < 0)
			return -1;
		if ((L->cmp <= LCMP_LE && step <= 0) || (L->cmp >= LCMP_GT && step >= 0))
			LOOP_ERR(w, L, "loop `%s`: the step %lld does not move it towards its bound",
				 L->var, step);
		if (__builtin_add_overflow(v, step, &v))
			LOOP_ERR(w, L, "loop variable `%s`: overflow after %lld", L->var, v);
	}
	return 0;
}

static int walk_range(struct walk *w, int lo, int hi, int li, int depth)
{
	const struct launch_plan *lp = w->lp;
	int s = lo, r;

	while (s < hi) {
		if (li < lp->n_loops && lp->loops[li].first == s && lp->loops[li].depth == depth) {
			const struct launch_loop *L = &lp->loops[li];
			if ((r = run_loop(w, L, li)) != 0)
				return r;
			s = L->end;
			li = L->skip;
			continue;
		}
		if (++w->launches > LAUNCH_MAX_LAUNCHES) {
			struct buf d = BUF_INIT;
			launch_vars_desc(lp, s, w->vars, &d);
			kf_err(w->err, "%d:%d: the launch block makes over %d launches with its loops%s%s%s",
			       lp->steps[s].line, lp->steps[s].col, LAUNCH_MAX_LAUNCHES,
			       d.len ? " (at " : "", d.s, d.len ? ")" : "");
			buf_release(&d);
			return -1;
		}
		if ((r = w->fn(w->ctx, s, w->vars)) != 0)
			return r;
		s++;
	}
	return 0;
}

int launch_plan_walk(const struct launch_plan *lp, launch_walk_fn fn, void *ctx, struct buf *err)
{
	struct walk w;

	memset(&w, 0, sizeof(w));
	w.lp = lp;
	w.fn = fn;
	w.ctx = ctx;
	w.err = err;
	return walk_range(&w, 0, lp->n_steps, 0, 0);
}

void launch_vars_desc(const struct launch_plan *lp, int s, const long long *vars, struct buf *out)
{
	vars_desc_n(lp, s, vars, LAUNCH_MAX_LOOP_DEPTH, out);
}
