/* Launch plans: the statements of a launch block, resolved against the
 * problem, the device limits and the kernels' parameter lists. */
#include "launch_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "candidate.h"
#include "core/json.h"

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

void launch_plan_release(struct launch_plan *lp)
{
	for (int i = 0; i < lp->n_steps; i++) {
		free(lp->steps[i].kernel);
		free(lp->steps[i].args);
	}
	for (int i = 0; i < lp->n_scratch; i++)
		free(lp->scratch[i].name);
	free(lp->steps);
	free(lp->scratch);
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
};

static int name_taken(struct bstate *b, const char *name)
{
	long long v;
	double d;
	if (problem_size(b->ps.p, name, &v) == 0 || problem_scalar(b->ps.p, name, &d) == 0 ||
	    problem_tensor_index(b->ps.p, name) >= 0)
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
	b->lp->scratch = realloc(b->lp->scratch, (size_t)(b->lp->n_scratch + 1) * sizeof(*s));
	if (!b->lp->scratch)
		abort();
	s = &b->lp->scratch[b->lp->n_scratch];
	s->name = strdup(nm->text);
	s->elem_size = st->size;
	s->count = count;
	s->zeroed = zeroed;
	b->scratch_base[b->lp->n_scratch++] = st->base;
	return 0;
}

/* dim3(a[, b[, c]]) or an integer expression. */
static int parse_dims(struct bstate *b, long long d[3], const struct ltok **at)
{
	struct lparser *ps = &b->ps;
	*at = lp_peek(ps, 0);
	d[0] = d[1] = d[2] = 1;
	if (lp_is(ps, 0, "dim3") && lp_is(ps, 1, "(")) {
		ps->pos += 2;
		for (int i = 0; i < 3; i++) {
			if (lp_expr(ps, &d[i]) < 0)
				return -1;
			if (!lp_is(ps, 0, ",") || i == 2)
				break;
			ps->pos++;
		}
		return lp_expect(ps, ")", "to close dim3(...) (at most 3 dimensions)");
	}
	return lp_expr(ps, &d[0]);
}

static int check_dims(struct bstate *b, const char *what, const long long d[3],
		      const struct ltok *at, unsigned out[3])
{
	static const char xyz[] = "xyz";
	long long total = 1;
	for (int i = 0; i < 3; i++) {
		long long lim = what[0] == 'g' ? b->lim->max_grid[i] : b->lim->max_block[i];
		if (d[i] < 0)
			return lp_fail(&b->ps, at, "%s.%c = %lld is negative", what, xyz[i], d[i]);
		if (d[i] == 0)
			return lp_fail(&b->ps, at, "%s.%c is 0: a launch needs at least one %s", what,
				       xyz[i], what[0] == 'g' ? "block" : "thread");
		if (d[i] > lim)
			return lp_fail(&b->ps, at, "%s.%c = %lld is over the device limit %lld", what,
				       xyz[i], d[i], lim);
		out[i] = (unsigned)d[i];
		total *= d[i];
	}
	if (what[0] == 'b' && total > b->lim->max_threads_per_block)
		return lp_fail(&b->ps, at, "block of %lld threads is over the device limit of %d "
			       "threads per block", total, b->lim->max_threads_per_block);
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

static int parse_arg(struct bstate *b, const struct kernel_sig *k, int idx, struct launch_arg *a)
{
	struct lparser *ps = &b->ps;
	const struct ltok *t = lp_peek(ps, 0);
	const struct sig_param *sp = idx < k->n_params ? &k->params[idx] : NULL;
	int ends = lp_is(ps, 1, ",") || lp_is(ps, 1, ")");
	double d;

	memset(a, 0, sizeof(*a));
	if (!sp)
		return lp_fail(ps, t, "too many arguments: kernel `%s` takes %d parameter%s", k->name,
			       k->n_params, k->n_params == 1 ? "" : "s");
	if (sp->is_ref)
		return lp_fail(ps, t, "parameter %d (`%s`) of `%s` is a reference (%s); kforge passes "
			       "pointers and scalars only", idx + 1, pname(sp), k->name, sp->type_text);
	if (t->kind == L_IDENT && ends && (a->index = problem_tensor_index(ps->p, t->text)) >= 0) {
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
		return 0;
	}
	if (t->kind == L_IDENT && ends) {
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
			return 0;
		}
	}
	if (sp->is_pointer)
		return lp_fail(ps, t, "parameter `%s` of `%s` is the pointer `%s`: pass an input, "
			       "output or scratch buffer by name, found `%s`", pname(sp), k->name,
			       sp->type_text, t->kind == L_EOF ? "nothing" : t->text);
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
			if (lp_expr(ps, &v) < 0)
				return -1;
			a->fval = (double)v;
			return 0;
		}
	}
	{
		long long lo, hi, v;
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
		if (lp_expr(ps, &v) < 0)
			return -1;
		if (v < lo || v > hi)
			return lp_fail(ps, t, "value %lld does not fit parameter `%s` of `%s` (`%s`)", v,
				       pname(sp), k->name, sp->type_text);
		a->kind = LARG_INT;
		a->ival = v;
		return 0;
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
	long long g[3], bl[3], smem = 0;
	int n = 0;

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
		return lp_fail(ps, kt, "too many launches (at most %d)", LAUNCH_MAX_STEPS);
	ps->pos++;
	if (lp_expect(ps, "<<<", "after the kernel name") < 0 || parse_dims(b, g, &gat) < 0 ||
	    lp_expect(ps, ",", "between grid and block (`<<<grid, block>>>`)") < 0 ||
	    parse_dims(b, bl, &bat) < 0)
		return -1;
	sat = lp_peek(ps, 0);
	if (lp_is(ps, 0, ",")) {
		ps->pos++;
		sat = lp_peek(ps, 0);
		if (lp_expr(ps, &smem) < 0)
			return -1;
		if (lp_is(ps, 0, ","))
			return lp_fail(ps, NULL, "a stream argument is not allowed: kforge launches "
				       "everything in order on its own stream");
	}
	if (lp_expect(ps, ">>>", "to close the launch configuration") < 0)
		return -1;
	if (check_dims(b, "grid", g, gat, st.grid) < 0 || check_dims(b, "block", bl, bat, st.block) < 0)
		return -1;
	if (k->launch_bounds && bl[0] * bl[1] * bl[2] > k->launch_bounds)
		return lp_fail(ps, bat, "block of %lld threads is over the kernel's "
			       "__launch_bounds__(%d)", bl[0] * bl[1] * bl[2], k->launch_bounds);
	if (smem < 0)
		return lp_fail(ps, sat, "shared memory size %lld is negative", smem);
	if (smem > b->lim->max_smem_optin)
		return lp_fail(ps, sat, "%lld bytes of dynamic shared memory is over the device limit "
			       "of %lld", smem, b->lim->max_smem_optin);
	st.smem = (unsigned)smem;
	st.line = kt->line;
	if (lp_expect(ps, "(", "to open the argument list") < 0)
		return -1;
	st.args = calloc(LAUNCH_MAX_ARGS, sizeof(*st.args));
	if (!st.args)
		abort();
	if (!lp_is(ps, 0, ")")) {
		for (;;) {
			if (n >= LAUNCH_MAX_ARGS || parse_arg(b, k, n, &st.args[n]) < 0) {
				if (n >= LAUNCH_MAX_ARGS)
					lp_fail(ps, NULL, "too many arguments");
				free(st.args);
				return -1;
			}
			n++;
			if (!lp_is(ps, 0, ","))
				break;
			ps->pos++;
		}
	}
	if (lp_expect(ps, ")", "to close the argument list") < 0 ||
	    lp_expect(ps, ";", "after the launch") < 0) {
		free(st.args);
		return -1;
	}
	if (n != k->n_params) {
		free(st.args);
		return lp_fail(ps, kt, "kernel `%s` takes %d parameter%s, the launch passes %d",
			       k->name, k->n_params, k->n_params == 1 ? "" : "s", n);
	}
	st.n_args = n;
	st.kernel = strdup(k->name);
	b->lp->steps = realloc(b->lp->steps, (size_t)(b->lp->n_steps + 1) * sizeof(st));
	if (!b->lp->steps)
		abort();
	b->lp->steps[b->lp->n_steps++] = st;
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
		} else {
			lp_fail(&b.ps, t, "expected a launch `KERNEL<<<grid, block[, smem]>>>(args);` or "
				"`scratch [zeroed] TYPE NAME[COUNT];`, found `%s`",
				t->kind == L_EOF ? "the end" : t->text);
			goto out;
		}
	}
	if (lp->n_steps == 0) {
		lp_fail(&b.ps, NULL, "the launch block launches no kernel");
		goto out;
	}
	ret = 0;
out:
	if (ret < 0)
		launch_plan_release(lp);
	free(b.ps.t);
	kernel_sigs_release(&sigs);
	candidate_release(&c);
	return ret;
}
