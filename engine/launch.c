/* Launch plans: the statements of a launch block, resolved against the
 * problem, the device limits and the kernels' parameter lists. */
#include "launch_int.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "candidate.h"
#include "core/json.h"
#include "core/xalloc.h"

void launch_limits_default(struct launch_limits *lim)
{
	lim->max_threads_per_block = 1024;
	lim->max_grid[0] = 2147483647LL;
	lim->max_grid[1] = 65535;
	lim->max_grid[2] = 65535;
	lim->max_block[0] = 1024;
	lim->max_block[1] = 1024;
	lim->max_block[2] = 64;
	lim->max_smem_optin = 232448;   /* sm_90: 227 KiB */
}

void launch_plan_init(struct launch_plan *lp)
{
	memset(lp, 0, sizeof(*lp));
}

static void step_release(struct launch_step *st)
{
	free(st->kernel);
	for (int a = 0; st->args && a < st->n_args; a++)
		launch_expr_release(&st->args[a].expr);
	free(st->args);
	for (int d = 0; d < 7; d++)
		launch_expr_release(&st->dims[d]);
}

void launch_plan_release(struct launch_plan *lp)
{
	for (int i = 0; i < lp->n_steps; i++)
		step_release(&lp->steps[i]);
	for (int i = 0; i < lp->n_scratch; i++)
		free(lp->scratch[i].name);
	for (int i = 0; i < lp->n_loops; i++) {
		free(lp->loops[i].var);
		launch_expr_release(&lp->loops[i].init);
		launch_expr_release(&lp->loops[i].bound);
		launch_expr_release(&lp->loops[i].step);
	}
	free(lp->steps);
	free(lp->scratch);
	free(lp->loops);
	launch_plan_init(lp);
}

struct stype {
	const char *words;
	size_t size;
	enum sig_base base;
};
static const struct stype scratch_types[] = {
	{ "float", 4, SIG_FLOAT }, { "double", 8, SIG_DOUBLE }, { "int", 4, SIG_INT },
	{ "unsigned", 4, SIG_UINT }, { "unsigned int", 4, SIG_UINT },
	{ "long long", 8, SIG_LLONG }, { "unsigned long long", 8, SIG_ULLONG },
	{ "half", 2, SIG_HALF }, { "__half", 2, SIG_HALF }, { "__nv_bfloat16", 2, SIG_BF16 },
	{ "char", 1, SIG_CHAR }, { "unsigned char", 1, SIG_UCHAR }, { NULL, 0, SIG_OTHER },
};

/* Scratch element base of the plan's scratch i (kept beside the plan). */
struct bstate {
	struct lparser ps;
	struct launch_plan *lp;
	enum sig_base scratch_base[LAUNCH_MAX_SCRATCH];
	const struct kernel_sigs *sigs;
	const struct launch_limits *lim;
	long long scratch_bytes;
	int open[LAUNCH_MAX_LOOP_DEPTH];   /* loops not yet closed (indices into lp->loops) */
	int n_open;
	int cur_step;              /* at plan check: the launch and the loop values */
	const long long *cur_vars; /* checked (NULL while parsing), for messages */
};

/* " (at t = 3)" after an error found checking a launch in a loop. */
static void iter_suffix(struct bstate *b)
{
	struct buf d = BUF_INIT;
	if (!b->cur_vars)
		return;
	launch_vars_desc(b->lp, b->cur_step, b->cur_vars, &d);
	if (d.len)
		buf_addf(b->ps.err, " (at %s)", d.s);
	buf_release(&d);
}

/* "LINE:COL: message", with the iteration when checking a loop's launches. */
static int bfail(struct bstate *b, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int bfail(struct bstate *b, int line, int col, const char *fmt, ...)
{
	va_list ap;
	buf_setf(b->ps.err, "%d:%d: ", line, col);
	va_start(ap, fmt);
	buf_vaddf(b->ps.err, fmt, ap);
	va_end(ap);
	iter_suffix(b);
	return -1;
}

static int name_taken(struct bstate *b, const char *name)
{
	long long v;
	double d;
	if (problem_size(b->ps.p, name, &v) == 0 || problem_scalar(b->ps.p, name, &d) == 0 ||
	    problem_tensor_index(b->ps.p, name) >= 0)
		return 1;
	for (int i = 0; i < b->ps.n_vars; i++)
		if (!strcmp(b->ps.vars[i], name))
			return 1;
	for (int i = 0; i < b->lp->n_scratch; i++)
		if (!strcmp(b->lp->scratch[i].name, name))
			return 1;
	return 0;
}

static int parse_scratch(struct bstate *b)
{
	struct lparser *ps = &b->ps;
	const struct ltok *start = lp_peek(ps, 0), *nm, *ty;
	struct buf words = BUF_INIT;
	const struct stype *st;
	struct launch_scratch *s;
	long long count, bytes;
	int zeroed = 0;

	if (b->n_open)
		return lp_fail(ps, start, "scratch buffers are declared outside loops");
	ps->pos++;
	if (lp_is(ps, 0, "zeroed")) {
		zeroed = 1;
		ps->pos++;
	}
	/* TYPE is one or more words; the last identifier before `[` is the name. */
	ty = lp_peek(ps, 0);
	while (lp_peek(ps, 0)->kind == L_IDENT && lp_peek(ps, 1)->kind == L_IDENT) {
		buf_addf(&words, "%s%s", words.len ? " " : "", lp_peek(ps, 0)->text);
		ps->pos++;
	}
	for (st = scratch_types; st->words; st++)
		if (!strcmp(st->words, words.s))
			break;
	if (!st->words) {
		lp_fail(ps, ty,
			"expected `scratch [zeroed] TYPE NAME[COUNT];` with TYPE one of float, double, "
			"int, unsigned, long long, unsigned long long, half, char, unsigned char%s%s%s",
			words.len ? " (found `" : "", words.s, words.len ? "`)" : "");
		buf_release(&words);
		return -1;
	}
	buf_release(&words);
	nm = lp_peek(ps, 0);
	if (nm->kind != L_IDENT)
		return lp_fail(ps, nm, "expected the scratch buffer's name");
	if (nm->len >= sizeof(nm->text))
		return lp_fail(ps, nm, "name too long");
	if (name_taken(b, nm->text))
		return lp_fail(ps, nm, "`%s` is already a name of the problem or another scratch "
			       "buffer", nm->text);
	if (b->lp->n_scratch >= LAUNCH_MAX_SCRATCH)
		return lp_fail(ps, start, "too many scratch buffers (at most %d)", LAUNCH_MAX_SCRATCH);
	ps->pos++;
	if (lp_expect(ps, "[", "after the scratch buffer's name") < 0)
		return -1;
	{
		const struct ltok *ce = lp_peek(ps, 0);
		if (lp_expr(ps, &count) < 0)
			return -1;
		if (count <= 0)
			return lp_fail(ps, ce, "scratch `%s` has %lld elements; it needs at least one",
				       nm->text, count);
		if (__builtin_mul_overflow(count, (long long)st->size, &bytes) ||
		    __builtin_add_overflow(b->scratch_bytes, bytes, &b->scratch_bytes) ||
		    b->scratch_bytes > LAUNCH_MAX_SCRATCH_BYTES)
			return lp_fail(ps, ce, "scratch buffers over the limit of %lld bytes in all",
				       (long long)LAUNCH_MAX_SCRATCH_BYTES);
	}
	if (lp_expect(ps, "]", "after the element count") < 0 ||
	    lp_expect(ps, ";", "after the scratch declaration") < 0)
		return -1;
	b->lp->scratch = xrealloc(b->lp->scratch, (size_t)(b->lp->n_scratch + 1) * sizeof(*s));
	s = &b->lp->scratch[b->lp->n_scratch];
	s->name = xstrdup(nm->text);
	s->elem_size = st->size;
	s->count = count;
	s->zeroed = zeroed;
	b->scratch_base[b->lp->n_scratch++] = st->base;
	return 0;
}

/* dim3(a[, b[, c]]) or an integer expression, into e[0..2]. */
static int parse_dims(struct bstate *b, struct launch_expr e[3], const struct ltok **at)
{
	struct lparser *ps = &b->ps;
	*at = lp_peek(ps, 0);
	if (lp_is(ps, 0, "dim3") && lp_is(ps, 1, "(")) {
		ps->pos += 2;
		for (int i = 0; i < 3; i++) {
			if (lp_expr_c(ps, &e[i]) < 0)
				return -1;
			if (!lp_is(ps, 0, ",") || i == 2)
				break;
			ps->pos++;
		}
		return lp_expect(ps, ")", "to close dim3(...) (at most 3 dimensions)");
	}
	return lp_expr_c(ps, &e[0]);
}

static int check_dims(struct bstate *b, const char *what, const long long d[3], const int *pos,
		      unsigned out[3])
{
	static const char xyz[] = "xyz";
	long long total = 1;
	for (int i = 0; i < 3; i++) {
		long long lim = what[0] == 'g' ? b->lim->max_grid[i] : b->lim->max_block[i];
		if (d[i] < 0)
			return bfail(b, pos[0], pos[1], "%s.%c = %lld is negative", what, xyz[i], d[i]);
		if (d[i] == 0)
			return bfail(b, pos[0], pos[1], "%s.%c is 0: a launch needs at least one %s",
				     what, xyz[i], what[0] == 'g' ? "block" : "thread");
		if (d[i] > lim)
			return bfail(b, pos[0], pos[1], "%s.%c = %lld is over the device limit %lld",
				     what, xyz[i], d[i], lim);
		out[i] = (unsigned)d[i];
		total *= d[i];
	}
	if (what[0] == 'b' && total > b->lim->max_threads_per_block)
		return bfail(b, pos[0], pos[1], "block of %lld threads is over the device limit of %d "
			     "threads per block", total, b->lim->max_threads_per_block);
	return 0;
}

/* Grid, block and smem of one launch (every iteration's, in a loop). */
static int check_config(struct bstate *b, const struct kernel_sig *k, struct launch_step *st,
			const long long v[7], unsigned grid[3], unsigned block[3], unsigned *smem)
{
	long long threads = v[3] * v[4] * v[5];

	if (check_dims(b, "grid", v, st->pos[0], grid) < 0 ||
	    check_dims(b, "block", v + 3, st->pos[1], block) < 0)
		return -1;
	if (k->launch_bounds && threads > k->launch_bounds)
		return bfail(b, st->pos[1][0], st->pos[1][1], "block of %lld threads is over the "
			     "kernel's __launch_bounds__(%d)", threads, k->launch_bounds);
	if (v[6] < 0)
		return bfail(b, st->pos[2][0], st->pos[2][1], "shared memory size %lld is negative",
			     v[6]);
	if (v[6] > b->lim->max_smem_optin)
		return bfail(b, st->pos[2][0], st->pos[2][1], "%lld bytes of dynamic shared memory is "
			     "over the device limit of %lld", v[6], b->lim->max_smem_optin);
	*smem = (unsigned)v[6];
	return 0;
}

static const char *dtype_ctype(enum kf_dtype t)
{
	switch (t) {
	case KF_F32: return "float";
	case KF_F16: return "half";
	case KF_BF16: return "__nv_bfloat16";
	case KF_I64: return "long long";
	case KF_I32: return "int";
	case KF_BOOL: return "bool";
	}
	return "?";
}

static int dtype_accepts(enum kf_dtype t, enum sig_base s)
{
	switch (t) {
	case KF_F32: return s == SIG_FLOAT;
	case KF_F16: return s == SIG_HALF;
	case KF_BF16: return s == SIG_BF16;
	case KF_I64: return s == SIG_LLONG || s == SIG_LONG;
	case KF_I32: return s == SIG_INT;
	case KF_BOOL: return s == SIG_BOOL || s == SIG_UCHAR || s == SIG_CHAR || s == SIG_SCHAR;
	}
	return 0;
}

static int base_accepts(enum sig_base have, enum sig_base s)
{
	if (have == s)
		return 1;
	if ((have == SIG_LLONG && s == SIG_LONG) || (have == SIG_ULLONG && s == SIG_ULONG))
		return 1;
	if (have == SIG_CHAR && (s == SIG_SCHAR || s == SIG_UCHAR))
		return 1;
	return 0;
}

/* Range of an integer parameter type; 0 when not an integer type kforge passes. */
static int int_range(enum sig_base s, long long *lo, long long *hi, int *size)
{
	switch (s) {
	case SIG_INT: *lo = INT_MIN; *hi = INT_MAX; *size = 4; return 1;
	case SIG_UINT: *lo = 0; *hi = UINT_MAX; *size = 4; return 1;
	case SIG_LONG: case SIG_LLONG: *lo = LLONG_MIN; *hi = LLONG_MAX; *size = 8; return 1;
	case SIG_ULONG: case SIG_ULLONG: *lo = 0; *hi = LLONG_MAX; *size = 8; return 1;
	default: return 0;
	}
}

static const char *pname(const struct sig_param *sp)
{
	return sp->name && *sp->name ? sp->name : "(unnamed)";
}

/* Elements of argument a's buffer (a tensor or a scratch). */
static long long arg_numel(const struct bstate *b, const struct launch_arg *a, const char **name)
{
	if (a->kind == LARG_TENSOR) {
		*name = b->ps.p->t[a->index].name;
		return b->ps.p->t[a->index].numel;
	}
	*name = b->lp->scratch[a->index].name;
	return b->lp->scratch[a->index].count;
}

/* A value of argument a (constant, or one iteration's), checked. */
static int check_arg_value(struct bstate *b, const struct sig_param *sp, const char *kname,
			   const struct launch_arg *a, long long v)
{
	long long lo, hi;
	int size;
	const char *name;

	if (a->kind == LARG_TENSOR || a->kind == LARG_SCRATCH) {
		long long n = arg_numel(b, a, &name);
		if (v < 0 || v >= n)
			return bfail(b, a->line, a->col, "element offset %lld is outside `%s` (%lld "
				     "elements)", v, name, n);
		return 0;
	}
	if (a->kind == LARG_INT && int_range(sp->base, &lo, &hi, &size) && (v < lo || v > hi))
		return bfail(b, a->line, a->col, "value %lld does not fit parameter `%s` of `%s` (`%s`)",
			     v, pname(sp), kname, sp->type_text);
	return 0;
}

/* EXPR into a's value: a constant is checked now, else kept for every iteration. */
static int arg_expr(struct bstate *b, const struct kernel_sig *k, const struct sig_param *sp,
		    struct launch_arg *a, long long *v)
{
	struct launch_expr e;

	if (lp_expr_c(&b->ps, &e) < 0)
		return -1;
	if (lx_const(&e, v)) {
		launch_expr_release(&e);
		return check_arg_value(b, sp, k->name, a, *v);
	}
	a->expr = e;
	*v = 0;
	return 0;
}

static int parse_arg(struct bstate *b, const struct kernel_sig *k, int idx, struct launch_arg *a)
{
	struct lparser *ps = &b->ps;
	const struct ltok *t = lp_peek(ps, 0);
	const struct sig_param *sp = idx < k->n_params ? &k->params[idx] : NULL;
	int ends = lp_is(ps, 1, ",") || lp_is(ps, 1, ")");
	int plus = t->kind == L_IDENT && lp_is(ps, 1, "+");
	double d;

	memset(a, 0, sizeof(*a));
	a->line = t->line;
	a->col = t->col;
	if (!sp)
		return lp_fail(ps, t, "too many arguments: kernel `%s` takes %d parameter%s", k->name,
			       k->n_params, k->n_params == 1 ? "" : "s");
	if (sp->is_ref)
		return lp_fail(ps, t, "parameter %d (`%s`) of `%s` is a reference (%s); kforge passes "
			       "pointers and scalars only", idx + 1, pname(sp), k->name, sp->type_text);
	if (t->kind == L_IDENT && (ends || plus) &&
	    (a->index = problem_tensor_index(ps->p, t->text)) >= 0) {
		enum kf_dtype dt = ps->p->t[a->index].dtype;
		a->kind = LARG_TENSOR;
		a->size = 8;
		if (!sp->is_pointer || sp->is_pointer > 1)
			return lp_fail(ps, t, "argument %d is the tensor `%s`, but parameter `%s` of `%s` "
				       "is `%s`, not a pointer", idx + 1, t->text, pname(sp), k->name,
				       sp->type_text);
		if (sp->base != SIG_VOID && !dtype_accepts(dt, sp->base))
			return lp_fail(ps, t, "tensor `%s` is %s, but parameter `%s` of `%s` is `%s` "
				       "(expected %s* or void*)", t->text, kf_dtype_name(dt), pname(sp),
				       k->name, sp->type_text, dtype_ctype(dt));
		/* An output to a const parameter is fine: a later step may read it. */
		ps->pos++;
		if (plus) {          /* `x + EXPR`: a pointer to element EXPR */
			ps->pos++;
			a->line = lp_peek(ps, 0)->line;
			a->col = lp_peek(ps, 0)->col;
			return arg_expr(b, k, sp, a, &a->ival);
		}
		return 0;
	}
	if (t->kind == L_IDENT && (ends || plus)) {
		for (int i = 0; i < b->lp->n_scratch; i++) {
			if (strcmp(b->lp->scratch[i].name, t->text))
				continue;
			a->kind = LARG_SCRATCH;
			a->index = i;
			a->size = 8;
			if (!sp->is_pointer || sp->is_pointer > 1)
				return lp_fail(ps, t, "argument %d is the scratch buffer `%s`, but "
					       "parameter `%s` of `%s` is `%s`, not a pointer", idx + 1,
					       t->text, pname(sp), k->name, sp->type_text);
			if (sp->base != SIG_VOID && !base_accepts(b->scratch_base[i], sp->base))
				return lp_fail(ps, t, "scratch `%s` has another element type than "
					       "parameter `%s` of `%s` (`%s`)", t->text, pname(sp),
					       k->name, sp->type_text);
			ps->pos++;
			if (plus) {
				ps->pos++;
				a->line = lp_peek(ps, 0)->line;
				a->col = lp_peek(ps, 0)->col;
				return arg_expr(b, k, sp, a, &a->ival);
			}
			return 0;
		}
	}
	if (sp->is_pointer)
		return lp_fail(ps, t, "parameter `%s` of `%s` is the pointer `%s`: pass an input, "
			       "output or scratch buffer by name, found `%s`",
			       pname(sp), k->name, sp->type_text, t->kind == L_EOF ? "nothing" : t->text);
	/* Scalars. */
	if (sp->base == SIG_FLOAT || sp->base == SIG_DOUBLE) {
		a->kind = LARG_FLOAT;
		a->is_double = sp->base == SIG_DOUBLE;
		a->size = a->is_double ? 8 : 4;
		if (t->kind == L_IDENT && ends && problem_scalar(ps->p, t->text, &d) == 0) {
			a->fval = d;
			ps->pos++;
			return 0;
		}
		if (sp->vec == 1 && (t->kind == L_FLOAT ||
				     ((lp_is(ps, 0, "-") || lp_is(ps, 0, "+")) &&
				      lp_peek(ps, 1)->kind == L_FLOAT))) {
			int neg = lp_is(ps, 0, "-"), sign = t->kind != L_FLOAT;
			const struct ltok *f = lp_peek(ps, sign);
			if (!(lp_is(ps, sign + 1, ",") || lp_is(ps, sign + 1, ")")))
				return lp_fail(ps, lp_peek(ps, sign + 1), "float arguments are a literal "
					       "or a scalar of the problem, not an expression");
			a->fval = neg ? -f->fval : f->fval;
			ps->pos += 1 + sign;
			return 0;
		}
		if (sp->vec == 1) {
			long long v;
			if (arg_expr(b, k, sp, a, &v) < 0)
				return -1;
			a->fval = (double)v;
			return 0;
		}
	}
	{
		long long lo, hi;
		if (sp->vec != 1 || !int_range(sp->base, &lo, &hi, &a->size))
			return lp_fail(ps, t, "parameter `%s` of `%s` has the type `%s`, which kforge "
				       "cannot pass (use a pointer, int, unsigned, long long, size_t, "
				       "float or double)", pname(sp), k->name, sp->type_text);
		if (t->kind == L_FLOAT)
			return lp_fail(ps, t, "parameter `%s` of `%s` is the integer type `%s`, found "
				       "the float `%s`", pname(sp), k->name, sp->type_text, t->text);
		if (t->kind == L_IDENT && ends && problem_scalar(ps->p, t->text, &d) == 0)
			return lp_fail(ps, t, "`%s` is a float scalar, but parameter `%s` of `%s` is "
				       "`%s`", t->text, pname(sp), k->name, sp->type_text);
		a->kind = LARG_INT;
		return arg_expr(b, k, sp, a, &a->ival);
	}
}

static void list_kernels(const struct kernel_sigs *s, struct buf *out)
{
	int n = 0;
	for (int i = 0; i < s->n; i++)
		if (s->k[i].extern_c)
			buf_addf(out, "%s%s", n++ ? ", " : "", s->k[i].name);
	if (!n)
		buf_adds(out, "none");
}

static int parse_launch(struct bstate *b)
{
	struct lparser *ps = &b->ps;
	const struct ltok *kt = lp_peek(ps, 0), *gat, *bat, *sat;
	const struct kernel_sig *k = kernel_sigs_find(b->sigs, kt->text);
	struct launch_step st;
	long long v[7];
	int n = 0, dyn = 0;

	if (!k || !k->extern_c) {
		struct buf names = BUF_INIT;
		list_kernels(b->sigs, &names);
		if (k)
			lp_fail(ps, kt, "kernel `%s` is __global__ but not extern \"C\" (its name is "
				"mangled); declare it `extern \"C\" __global__`", kt->text);
		else
			lp_fail(ps, kt, "unknown kernel `%s` (extern \"C\" __global__ kernels in the "
				"code: %s)", kt->text, names.s);
		buf_release(&names);
		return -1;
	}
	/* CUPTI's records of the harness's kernels are told apart by this prefix. */
	if (!strncmp(kt->text, "kf_", 3))
		return lp_fail(ps, kt, "kernel names beginning with `kf_` are the harness's; rename `%s`",
			       kt->text);
	if (b->lp->n_steps >= LAUNCH_MAX_STEPS)
		return lp_fail(ps, kt, "too many launch statements (at most %d)", LAUNCH_MAX_STEPS);
	/* The step goes into the plan at once: the plan's release frees it on error. */
	b->lp->steps = xrealloc(b->lp->steps, (size_t)(b->lp->n_steps + 1) * sizeof(st));
	memset(&st, 0, sizeof(st));
	st.kernel = xstrdup(k->name);
	st.line = kt->line;
	st.col = kt->col;
	st.depth = b->n_open;
	st.args = xcalloc(LAUNCH_MAX_ARGS, sizeof(*st.args));
	b->lp->steps[b->lp->n_steps++] = st;
	{
		struct launch_step *sp = &b->lp->steps[b->lp->n_steps - 1];
		ps->pos++;
		if (lp_expect(ps, "<<<", "after the kernel name") < 0 || parse_dims(b, sp->dims, &gat) < 0 ||
		    lp_expect(ps, ",", "between grid and block (`<<<grid, block>>>`)") < 0 ||
		    parse_dims(b, sp->dims + 3, &bat) < 0)
			return -1;
		sat = lp_peek(ps, 0);
		if (lp_is(ps, 0, ",")) {
			ps->pos++;
			sat = lp_peek(ps, 0);
			if (lp_expr_c(ps, &sp->dims[6]) < 0)
				return -1;
			if (lp_is(ps, 0, ","))
				return lp_fail(ps, NULL, "a stream argument is not allowed: kforge launches "
					       "everything in order on its own stream");
		}
		if (lp_expect(ps, ">>>", "to close the launch configuration") < 0)
			return -1;
		sp->pos[0][0] = gat->line, sp->pos[0][1] = gat->col;
		sp->pos[1][0] = bat->line, sp->pos[1][1] = bat->col;
		sp->pos[2][0] = sat->line, sp->pos[2][1] = sat->col;
		for (int d = 0; d < 7; d++) {
			if (!sp->dims[d].n)
				v[d] = d == 6 ? 0 : 1;      /* absent: 1 (dim3's default), smem 0 */
			else if (!lx_const(&sp->dims[d], &v[d]))
				dyn = 1;
		}
		if (dyn) {
			/* checked for every iteration once the block is read; absent parts made constant */
			for (int d = 0; d < 7; d++)
				if (!sp->dims[d].n) {
					sp->dims[d].op = xcalloc(1, sizeof(struct lx_op));
					sp->dims[d].op->op = LX_CONST;
					sp->dims[d].op->v = v[d];
					sp->dims[d].n = 1;
				}
			sp->dyn = 1;
		} else {
			if (check_config(b, k, sp, v, sp->grid, sp->block, &sp->smem) < 0)
				return -1;
			for (int d = 0; d < 7; d++)
				launch_expr_release(&sp->dims[d]);
		}
		if (lp_expect(ps, "(", "to open the argument list") < 0)
			return -1;
		if (!lp_is(ps, 0, ")")) {
			for (;;) {
				if (n >= LAUNCH_MAX_ARGS)
					return lp_fail(ps, NULL, "too many arguments");
				sp->n_args = n + 1;
				if (parse_arg(b, k, n, &sp->args[n]) < 0)
					return -1;
				n++;
				if (!lp_is(ps, 0, ","))
					break;
				ps->pos++;
			}
		}
		if (lp_expect(ps, ")", "to close the argument list") < 0 ||
		    lp_expect(ps, ";", "after the launch") < 0)
			return -1;
		if (n != k->n_params)
			return lp_fail(ps, kt, "kernel `%s` takes %d parameter%s, the launch passes %d",
				       k->name, k->n_params, k->n_params == 1 ? "" : "s", n);
		sp->n_args = n;
	}
	return 0;
}

static int loop_name(struct bstate *b, const struct ltok *t)
{
	if (t->kind != L_IDENT)
		return lp_fail(&b->ps, t, "expected the loop variable's name, found `%s`",
			       t->kind == L_EOF ? "the end" : t->text);
	return 0;
}

/* for (int VAR = INIT; VAR CMP BOUND; ++VAR | VAR++ | --VAR | VAR-- | VAR += E | VAR -= E) { */
static int parse_for(struct bstate *b)
{
	struct lparser *ps = &b->ps;
	const struct ltok *ft = lp_peek(ps, 0), *vt, *t;
	struct launch_plan *lp = b->lp;
	struct launch_loop *L;
	static const char *const cmps[] = { "<", "<=", ">", ">=" };
	int neg = 0;

	if (b->n_open >= LAUNCH_MAX_LOOP_DEPTH)
		return lp_fail(ps, ft, "loops nested too deeply (at most %d)", LAUNCH_MAX_LOOP_DEPTH);
	lp->loops = xrealloc(lp->loops, (size_t)(lp->n_loops + 1) * sizeof(*lp->loops));
	L = &lp->loops[lp->n_loops++];
	memset(L, 0, sizeof(*L));
	L->depth = b->n_open;
	L->first = lp->n_steps;
	L->line = ft->line;
	L->col = ft->col;
	ps->pos++;
	if (lp_expect(ps, "(", "after `for`") < 0)
		return -1;
	if (!lp_is(ps, 0, "int"))
		return lp_fail(ps, NULL, "the loop variable is declared `int` (`for (int t = 0; t < N; "
			       "++t)`), found `%s`", lp_peek(ps, 0)->kind == L_EOF ? "the end"
			       : lp_peek(ps, 0)->text);
	ps->pos++;
	vt = lp_peek(ps, 0);
	if (loop_name(b, vt) < 0)
		return -1;
	if (name_taken(b, vt->text))
		return lp_fail(ps, vt, "`%s` is already a name of the problem, a scratch buffer or an "
			       "outer loop", vt->text);
	L->var = xstrdup(vt->text);
	ps->pos++;
	if (lp_expect(ps, "=", "after the loop variable (it needs a start value)") < 0 ||
	    lp_expr_c(ps, &L->init) < 0 || lp_expect(ps, ";", "after the start value") < 0)
		return -1;
	ps->vars[ps->n_vars++] = L->var;    /* in scope from the condition on */
	b->open[b->n_open++] = lp->n_loops - 1;
	t = lp_peek(ps, 0);
	if (t->kind != L_IDENT || strcmp(t->text, L->var))
		return lp_fail(ps, t, "the loop condition must test `%s` (`%s < BOUND`)", L->var,
			       L->var);
	ps->pos++;
	for (L->cmp = 0; L->cmp < 4 && !lp_is(ps, 0, cmps[L->cmp]); L->cmp++)
		;
	if (L->cmp == 4)
		return lp_fail(ps, NULL, "expected <, <=, > or >= in the loop condition, found `%s`",
			       lp_peek(ps, 0)->kind == L_EOF ? "the end" : lp_peek(ps, 0)->text);
	ps->pos++;
	if (lp_expr_c(ps, &L->bound) < 0 || lp_expect(ps, ";", "after the loop condition") < 0)
		return -1;
	/* the increment */
	t = lp_peek(ps, 0);
	if ((lp_is(ps, 0, "++") || lp_is(ps, 0, "--")) && lp_peek(ps, 1)->kind == L_IDENT &&
	    !strcmp(lp_peek(ps, 1)->text, L->var)) {
		neg = t->text[0] == '-';
		ps->pos += 2;
	} else if (t->kind == L_IDENT && !strcmp(t->text, L->var) &&
		   (lp_is(ps, 1, "++") || lp_is(ps, 1, "--"))) {
		neg = lp_peek(ps, 1)->text[0] == '-';
		ps->pos += 2;
	} else if (t->kind == L_IDENT && !strcmp(t->text, L->var) &&
		   (lp_is(ps, 1, "+=") || lp_is(ps, 1, "-="))) {
		const struct ltok *op = lp_peek(ps, 1);
		ps->pos += 2;
		if (lp_expr_c(ps, &L->step) < 0)
			return -1;
		if (op->text[0] == '-') {
			long long v;
			L->step.op = xrealloc(L->step.op, (size_t)(L->step.n + 1) * sizeof(*L->step.op));
			if (lx_const(&L->step, &v) && v != LLONG_MIN) {
				L->step.op[0].v = -v;
			} else {
				L->step.op[L->step.n] = (struct lx_op){ LX_NEG, 0, op->line, op->col };
				L->step.n++;
			}
		}
	} else {
		return lp_fail(ps, t, "expected the loop increment (`++%s`, `%s++`, `%s += STEP`, "
			       "`--%s`, `%s--` or `%s -= STEP`)", L->var, L->var, L->var, L->var,
			       L->var, L->var);
	}
	if (!L->step.n) {
		L->step.op = xcalloc(1, sizeof(*L->step.op));
		L->step.op->op = LX_CONST;
		L->step.op->v = neg ? -1 : 1;
		L->step.n = 1;
	}
	if (lp_expect(ps, ")", "to close the loop header") < 0 ||
	    lp_expect(ps, "{", "to open the loop body (braces are required)") < 0)
		return -1;
	return 0;
}

static int close_loop(struct bstate *b)
{
	struct lparser *ps = &b->ps;
	struct launch_loop *L;

	if (!b->n_open)
		return lp_fail(ps, NULL, "`}` without a loop to close");
	L = &b->lp->loops[b->open[--b->n_open]];
	ps->n_vars--;
	ps->pos++;
	L->end = b->lp->n_steps;
	L->skip = b->lp->n_loops;
	if (L->end == L->first)
		return bfail(b, L->line, L->col, "the loop over `%s` launches nothing", L->var);
	return 0;
}

/* Plan check, for each launch in a loop: the configuration and arguments of
 * this iteration; the step keeps the largest block and smem. */
static int check_launch(void *ctx, int s, const long long *vars)
{
	struct bstate *b = ctx;
	struct launch_step *st = &b->lp->steps[s];
	const struct kernel_sig *k;
	long long v[7];
	unsigned grid[3], block[3], smem;
	int first = !st->block[0];   /* a step in a loop has its config set here */

	b->lp->n_launches++;
	if (!st->depth)
		return 0;
	k = kernel_sigs_find(b->sigs, st->kernel);
	b->cur_step = s;
	b->cur_vars = vars;
	if (st->dyn) {
		for (int d = 0; d < 7; d++)
			if (launch_expr_eval(&st->dims[d], vars, &v[d], b->ps.err) < 0)
				return iter_suffix(b), -1;
		if (check_config(b, k, st, v, grid, block, &smem) < 0)
			return -1;
		if (first || v[3] * v[4] * v[5] > (long long)st->block[0] * st->block[1] * st->block[2])
			memcpy(st->block, block, sizeof(block));
		if (first)
			memcpy(st->grid, grid, sizeof(grid));
		if (smem > st->smem)
			st->smem = smem;
	}
	for (int a = 0; a < st->n_args; a++) {
		const struct launch_arg *la = &st->args[a];
		long long x;
		if (!la->expr.n)
			continue;
		if (launch_expr_eval(&la->expr, vars, &x, b->ps.err) < 0)
			return iter_suffix(b), -1;
		if (check_arg_value(b, &k->params[a], k->name, la, x) < 0)
			return -1;
	}
	return 0;
}

int launch_plan_build(struct launch_plan *lp, const struct problem *p, const char *text,
		      const struct launch_limits *lim, struct buf *err)
{
	struct candidate c;
	struct kernel_sigs sigs;
	struct launch_limits dl;
	struct bstate b;
	int ret = -1;

	launch_plan_release(lp);
	candidate_init(&c);
	kernel_sigs_init(&sigs);
	memset(&b, 0, sizeof(b));
	if (!lim) {
		launch_limits_default(&dl);
		lim = &dl;
	}
	if (candidate_parse(&c, text, strlen(text), err) < 0 ||
	    kernel_sigs_parse(&sigs, c.device_src, err) < 0 ||
	    launch_lex(c.launch_text, c.launch_line, &b.ps.t, &b.ps.n, err) < 0)
		goto out;
	b.ps.p = p;
	b.ps.lp = lp;
	b.ps.err = err;
	b.lp = lp;
	b.sigs = &sigs;
	b.lim = lim;
	while (lp_peek(&b.ps, 0)->kind != L_EOF) {
		const struct ltok *t = lp_peek(&b.ps, 0);
		if (lp_is(&b.ps, 0, "scratch") && lp_peek(&b.ps, 1)->kind == L_IDENT) {
			if (parse_scratch(&b) < 0)
				goto out;
		} else if (t->kind == L_IDENT && lp_is(&b.ps, 1, "<<<")) {
			if (parse_launch(&b) < 0)
				goto out;
		} else if (lp_is(&b.ps, 0, "for") && lp_is(&b.ps, 1, "(")) {
			if (parse_for(&b) < 0)
				goto out;
		} else if (lp_is(&b.ps, 0, "}")) {
			if (close_loop(&b) < 0)
				goto out;
		} else {
			lp_fail(&b.ps, t, "expected a launch `KERNEL<<<grid, block[, smem]>>>(args);`, "
				"`scratch [zeroed] TYPE NAME[COUNT];` or a loop `for (int t = 0; t < N; "
				"++t) { ... }`, found `%s`", t->kind == L_EOF ? "the end" : t->text);
			goto out;
		}
	}
	if (b.n_open) {
		const struct launch_loop *L = &lp->loops[b.open[b.n_open - 1]];
		bfail(&b, L->line, L->col, "the loop over `%s` has no closing `}`", L->var);
		goto out;
	}
	if (lp->n_steps == 0) {
		lp_fail(&b.ps, NULL, "the launch block launches no kernel");
		goto out;
	}
	/* Every launch of every iteration checked; counts the launches. */
	lp->n_launches = 0;
	if (launch_plan_walk(lp, check_launch, &b, err) != 0)
		goto out;
	ret = 0;
out:
	if (ret < 0)
		launch_plan_release(lp);
	free(b.ps.code);
	free(b.ps.t);
	kernel_sigs_release(&sigs);
	candidate_release(&c);
	return ret;
}
