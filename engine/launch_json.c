/* A launch plan as JSON: for logs, the store and the GPU worker protocol. */
#include "launch.h"

#include <stdlib.h>
#include <string.h>
#include "core/json.h"
#include "core/xalloc.h"

static const char *const kind_names[] = { "tensor", "scratch", "int", "float" };
static const char *const op_names[] = { [LX_NEG] = "neg", [LX_ADD] = "+", [LX_SUB] = "-",
					[LX_MUL] = "*", [LX_DIV] = "/", [LX_MOD] = "%",
					[LX_MIN] = "min", [LX_MAX] = "max", [LX_CEIL_DIV] = "ceil_div" };
static const char *const cmp_names[] = { "<", "<=", ">", ">=" };

static json_t *expr_json(const struct launch_expr *e)
{
	json_t *a = json_array();
	for (int i = 0; i < e->n; i++) {
		const struct lx_op *o = &e->op[i];
		if (o->op == LX_CONST)
			json_array_append_new(a, json_integer(o->v));
		else if (o->op == LX_VAR)
			json_array_append_new(a, json_sprintf("$%lld", o->v));
		else
			json_array_append_new(a, json_string(op_names[o->op]));
	}
	return a;
}

/* Postfix checked: known operations, operands there, one value left, loop
 * variables among the `depth` around. */
static int expr_from_json(const json_t *j, int depth, struct launch_expr *e)
{
	size_t i;
	json_t *v;
	int sp = 0;

	e->op = NULL;
	e->n = 0;
	if (!json_is_array(j) || json_array_size(j) < 1 || json_array_size(j) > LAUNCH_MAX_EXPR)
		return -1;
	e->op = xcalloc(json_array_size(j), sizeof(*e->op));
	json_array_foreach(j, i, v) {
		struct lx_op *o = &e->op[e->n++];
		const char *s = json_string_value(v);
		if (json_is_integer(v)) {
			o->op = LX_CONST;
			o->v = json_integer_value(v);
			sp++;
			continue;
		}
		if (!s)
			return -1;
		if (s[0] == '$' && s[1] >= '0' && s[1] < '0' + depth && !s[2]) {
			o->op = LX_VAR;
			o->v = s[1] - '0';
			sp++;
			continue;
		}
		for (o->op = LX_NEG; o->op <= LX_CEIL_DIV && strcmp(s, op_names[o->op]); o->op++)
			;
		if (o->op > LX_CEIL_DIV || sp < (o->op == LX_NEG ? 1 : 2))
			return -1;
		sp -= o->op == LX_NEG ? 0 : 1;
	}
	return sp == 1 ? 0 : -1;
}

void launch_plan_to_json(const struct launch_plan *lp, struct buf *out)
{
	json_t *o = json_object(), *sc = json_array(), *steps = json_array();
	for (int i = 0; i < lp->n_scratch; i++) {
		const struct launch_scratch *s = &lp->scratch[i];
		json_array_append_new(sc, json_pack("{s:s, s:I, s:I, s:b}", "name", s->name,
						    "elem_size", (json_int_t)s->elem_size, "count",
						    (json_int_t)s->count, "zeroed", s->zeroed));
	}
	for (int i = 0; i < lp->n_steps; i++) {
		const struct launch_step *st = &lp->steps[i];
		json_t *args = json_array();
		for (int j = 0; j < st->n_args; j++) {
			const struct launch_arg *a = &st->args[j];
			json_t *ja = json_pack("{s:s, s:i}", "kind", kind_names[a->kind], "size", a->size);
			if (a->kind == LARG_TENSOR || a->kind == LARG_SCRATCH) {
				json_object_set_new(ja, "index", json_integer(a->index));
				if (a->ival)
					json_object_set_new(ja, "offset", json_integer(a->ival));
			} else if (a->kind == LARG_INT) {
				json_object_set_new(ja, "value", json_integer(a->ival));
			} else {
				json_object_set_new(ja, "value", json_real(a->fval));
			}
			if (a->expr.n)
				json_object_set_new(ja, "expr", expr_json(&a->expr));
			json_array_append_new(args, ja);
		}
		{
			json_t *js = json_pack("{s:s, s:[I,I,I], s:[I,I,I], s:I, s:i, s:o}",
					       "kernel", st->kernel, "grid",
					       (json_int_t)st->grid[0], (json_int_t)st->grid[1],
					       (json_int_t)st->grid[2], "block",
					       (json_int_t)st->block[0], (json_int_t)st->block[1],
					       (json_int_t)st->block[2], "smem",
					       (json_int_t)st->smem, "line", st->line, "args", args);
			if (st->dyn)
				json_object_set_new(js, "dyn", json_pack("{s:[o,o,o], s:[o,o,o], s:o}",
					"grid", expr_json(&st->dims[0]), expr_json(&st->dims[1]),
					expr_json(&st->dims[2]), "block", expr_json(&st->dims[3]),
					expr_json(&st->dims[4]), expr_json(&st->dims[5]),
					"smem", expr_json(&st->dims[6])));
			json_array_append_new(steps, js);
		}
	}
	json_object_set_new(o, "scratch", sc);
	json_object_set_new(o, "steps", steps);
	if (lp->n_loops) {
		json_t *loops = json_array();
		for (int i = 0; i < lp->n_loops; i++) {
			const struct launch_loop *L = &lp->loops[i];
			json_array_append_new(loops, json_pack("{s:s, s:i, s:i, s:i, s:s, s:o, s:o, s:o, s:i}",
				"var", L->var, "depth", L->depth, "first", L->first, "end", L->end,
				"cmp", cmp_names[L->cmp], "init", expr_json(&L->init),
				"bound", expr_json(&L->bound), "step", expr_json(&L->step),
				"line", L->line));
		}
		json_object_set_new(o, "loops", loops);
		json_object_set_new(o, "launches", json_integer(lp->n_launches));
	}
	buf_reset(out);
	json_add_compact(out, o);
	json_decref(o);
}

static int get_uint(json_t *v, long long max, unsigned *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
		return -1;
	*out = (unsigned)json_integer_value(v);
	return 0;
}

/* The loops: in source order, properly nested, at most LAUNCH_MAX_LOOP_DEPTH
 * deep, none empty; depth[s] gets the loops around step s. */
static int loops_from_json(struct launch_plan *lp, const json_t *loops, int n_steps, int *depth,
			   struct buf *err)
{
	int stack[LAUNCH_MAX_LOOP_DEPTH], sp = 0;
	size_t i;
	json_t *v;

	if (!loops)
		return 0;
	if (!json_is_array(loops) ||
	    json_array_size(loops) > (size_t)LAUNCH_MAX_STEPS * LAUNCH_MAX_LOOP_DEPTH)
		return kf_err(err, "launch plan: bad loops");
	lp->loops = xcalloc(json_array_size(loops) + 1, sizeof(*lp->loops));
	json_array_foreach(loops, i, v) {
		struct launch_loop *L = &lp->loops[i];
		const char *var = jget_str(v, "var", NULL), *cmp = jget_str(v, "cmp", "");
		lp->n_loops++;
		L->depth = (int)jget_int(v, "depth", -1);
		L->first = (int)jget_int(v, "first", -1);
		L->end = (int)jget_int(v, "end", -1);
		L->line = (int)jget_int(v, "line", 0);
		for (L->cmp = 0; L->cmp < 4 && strcmp(cmp, cmp_names[L->cmp]); L->cmp++)
			;
		while (sp && lp->loops[stack[sp - 1]].end <= L->first)
			sp--;
		if (!var || L->cmp == 4 || L->first < 0 || L->end <= L->first || L->end > n_steps ||
		    L->depth != sp || sp >= LAUNCH_MAX_LOOP_DEPTH ||
		    (i && L->first < lp->loops[i - 1].first) ||
		    (sp && L->end > lp->loops[stack[sp - 1]].end))
			return kf_err(err, "launch plan: bad loop %zu", i);
		L->var = xstrdup(var);
		if (expr_from_json(json_object_get(v, "init"), L->depth, &L->init) < 0 ||
		    expr_from_json(json_object_get(v, "bound"), L->depth + 1, &L->bound) < 0 ||
		    expr_from_json(json_object_get(v, "step"), L->depth + 1, &L->step) < 0)
			return kf_err(err, "launch plan: bad expression in loop %zu", i);
		stack[sp++] = (int)i;
		depth[L->first]++;
		if (L->end < n_steps)
			depth[L->end]--;
	}
	for (int k = 0; k < lp->n_loops; k++) {
		int j = k + 1;
		while (j < lp->n_loops && lp->loops[j].first < lp->loops[k].end)
			j++;
		lp->loops[k].skip = j;
	}
	for (int s = 1; s < n_steps; s++)
		depth[s] += depth[s - 1];
	return 0;
}

static int count_launch(void *ctx, int s, const long long *vars)
{
	(void)s, (void)vars;
	++*(long long *)ctx;
	return 0;
}

int launch_plan_from_json(struct launch_plan *lp, const char *text, struct buf *err)
{
	json_t *o, *sc, *steps, *v;
	size_t i, j;
	int ret = -1, *depth = NULL;

	launch_plan_release(lp);
	o = json_parse_bounded(text, strlen(text), LAUNCH_JSON_MAX, err);
	if (!o)
		return -1;
	sc = json_object_get(o, "scratch");
	steps = json_object_get(o, "steps");
	if (!json_is_array(sc) || !json_is_array(steps) ||
	    json_array_size(sc) > LAUNCH_MAX_SCRATCH || json_array_size(steps) > LAUNCH_MAX_STEPS) {
		kf_err(err, "launch plan: bad or oversized scratch/steps");
		goto out;
	}
	depth = xcalloc(json_array_size(steps) + 1, sizeof(*depth));
	if (loops_from_json(lp, json_object_get(o, "loops"), (int)json_array_size(steps), depth,
			    err) < 0)
		goto out;
	lp->scratch = xcalloc(json_array_size(sc) + 1, sizeof(*lp->scratch));
	lp->steps = xcalloc(json_array_size(steps) + 1, sizeof(*lp->steps));
	json_array_foreach(sc, i, v) {
		struct launch_scratch *s = &lp->scratch[i];
		const char *name = jget_str(v, "name", NULL);
		json_int_t es = jget_int(v, "elem_size", 0), n = jget_int(v, "count", 0);
		if (!name || (es != 1 && es != 2 && es != 4 && es != 8) || n <= 0 ||
		    n > LAUNCH_MAX_SCRATCH_BYTES / es) {
			kf_err(err, "launch plan: bad scratch %zu", i);
			goto out;
		}
		s->name = xstrdup(name);
		s->elem_size = (size_t)es;
		s->count = n;
		s->zeroed = jget_bool(v, "zeroed", 0);
		lp->n_scratch++;
	}
	json_array_foreach(steps, i, v) {
		struct launch_step *st = &lp->steps[i];
		json_t *g = json_object_get(v, "grid"), *b = json_object_get(v, "block"), *args, *a;
		const char *k = jget_str(v, "kernel", NULL);
		unsigned smem = 0;
		if (!k || !json_is_array(g) || !json_is_array(b) || json_array_size(g) != 3 ||
		    json_array_size(b) != 3 ||
		    get_uint(json_object_get(v, "smem"), 0xffffffffLL, &smem) < 0) {
			kf_err(err, "launch plan: bad step %zu", i);
			goto out;
		}
		st->kernel = xstrdup(k);
		lp->n_steps++;
		for (int d = 0; d < 3; d++)
			if (get_uint(json_array_get(g, (size_t)d), 0x7fffffffLL, &st->grid[d]) < 0 ||
			    get_uint(json_array_get(b, (size_t)d), 1024, &st->block[d]) < 0) {
				kf_err(err, "launch plan: bad grid or block in step %zu", i);
				goto out;
			}
		st->smem = smem;
		st->line = (int)jget_int(v, "line", 0);
		st->depth = depth[i];
		if (json_object_get(v, "dyn")) {
			json_t *dy = json_object_get(v, "dyn"), *dg = json_object_get(dy, "grid"),
			       *db = json_object_get(dy, "block");
			st->dyn = 1;
			if (json_array_size(dg) != 3 || json_array_size(db) != 3 || !st->depth) {
				kf_err(err, "launch plan: bad dyn in step %zu", i);
				goto out;
			}
			for (int d = 0; d < 7; d++)
				if (expr_from_json(d < 3 ? json_array_get(dg, (size_t)d)
						   : d < 6 ? json_array_get(db, (size_t)d - 3)
							   : json_object_get(dy, "smem"),
						   st->depth, &st->dims[d]) < 0) {
					kf_err(err, "launch plan: bad expression in step %zu", i);
					goto out;
				}
		}
		args = json_object_get(v, "args");
		if (!json_is_array(args) || json_array_size(args) > LAUNCH_MAX_ARGS) {
			kf_err(err, "launch plan: bad args in step %zu", i);
			goto out;
		}
		st->args = xcalloc(json_array_size(args) + 1, sizeof(*st->args));
		json_array_foreach(args, j, a) {
			struct launch_arg *la = &st->args[j];
			const char *kind = jget_str(a, "kind", "");
			int kd = -1;
			for (int q = 0; q < 4; q++)
				if (!strcmp(kind, kind_names[q]))
					kd = q;
			la->kind = (enum launch_arg_kind)kd;
			la->size = (int)jget_int(a, "size", 0);
			if (kd < 0 || (la->size != 4 && la->size != 8)) {
				kf_err(err, "launch plan: bad argument %zu of step %zu", j, i);
				goto out;
			}
			st->n_args++;
			if (json_object_get(a, "expr") &&
			    expr_from_json(json_object_get(a, "expr"), st->depth, &la->expr) < 0) {
				kf_err(err, "launch plan: bad expression in argument %zu of step %zu", j, i);
				goto out;
			}
			if (kd == LARG_TENSOR || kd == LARG_SCRATCH) {
				la->index = (int)jget_int(a, "index", -1);
				la->ival = jget_int(a, "offset", 0);
				if (la->index < 0 || (kd == LARG_TENSOR && la->index >= PROBLEM_MAX_TENSORS) ||
				    (kd == LARG_SCRATCH && la->index >= lp->n_scratch) || la->ival < 0 ||
				    (kd == LARG_SCRATCH && la->ival >= lp->scratch[la->index].count)) {
					kf_err(err, "launch plan: bad index in step %zu", i);
					goto out;
				}
			} else if (kd == LARG_INT) {
				la->ival = jget_int(a, "value", 0);
			} else {
				la->fval = jget_num(a, "value", 0);
				la->is_double = la->size == 8;
			}
		}
	}
	/* The walk checks the loops' arithmetic and counts the launches. */
	lp->n_launches = lp->n_steps;
	if (lp->n_loops) {
		struct buf e2 = BUF_INIT;
		long long n = 0;
		int r = launch_plan_walk(lp, count_launch, &n, &e2);
		if (r != 0) {
			kf_err(err, "launch plan: %s", e2.s);
			buf_release(&e2);
			goto out;
		}
		buf_release(&e2);
		lp->n_launches = n;
	}
	ret = 0;
out:
	if (ret < 0)
		launch_plan_release(lp);
	free(depth);
	json_decref(o);
	return ret;
}
