/* A launch plan as JSON: for logs, the store and the GPU worker protocol. */
#include "launch.h"

#include <stdlib.h>
#include <string.h>
#include "core/json.h"

static const char *const kind_names[] = { "tensor", "scratch", "int", "float" };

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
			if (a->kind == LARG_TENSOR || a->kind == LARG_SCRATCH)
				json_object_set_new(ja, "index", json_integer(a->index));
			else if (a->kind == LARG_INT)
				json_object_set_new(ja, "value", json_integer(a->ival));
			else
				json_object_set_new(ja, "value", json_real(a->fval));
			json_array_append_new(args, ja);
		}
		json_array_append_new(steps, json_pack("{s:s, s:[I,I,I], s:[I,I,I], s:I, s:i, s:o}",
						       "kernel", st->kernel, "grid",
						       (json_int_t)st->grid[0], (json_int_t)st->grid[1],
						       (json_int_t)st->grid[2], "block",
						       (json_int_t)st->block[0], (json_int_t)st->block[1],
						       (json_int_t)st->block[2], "smem",
						       (json_int_t)st->smem, "line", st->line, "args", args));
	}
	json_object_set_new(o, "scratch", sc);
	json_object_set_new(o, "steps", steps);
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

int launch_plan_from_json(struct launch_plan *lp, const char *text, struct buf *err)
{
	json_t *o, *sc, *steps, *v;
	size_t i, j;
	int ret = -1;

	launch_plan_release(lp);
	o = json_parse_bounded(text, strlen(text), 4u << 20, err);
	if (!o)
		return -1;
	sc = json_object_get(o, "scratch");
	steps = json_object_get(o, "steps");
	if (!json_is_array(sc) || !json_is_array(steps) ||
	    json_array_size(sc) > LAUNCH_MAX_SCRATCH || json_array_size(steps) > LAUNCH_MAX_STEPS) {
		kf_err(err, "launch plan: bad or oversized scratch/steps");
		goto out;
	}
	lp->scratch = calloc(json_array_size(sc) + 1, sizeof(*lp->scratch));
	lp->steps = calloc(json_array_size(steps) + 1, sizeof(*lp->steps));
	if (!lp->scratch || !lp->steps)
		abort();
	json_array_foreach(sc, i, v) {
		struct launch_scratch *s = &lp->scratch[i];
		const char *name = jget_str(v, "name", NULL);
		json_int_t es = jget_int(v, "elem_size", 0), n = jget_int(v, "count", 0);
		if (!name || (es != 1 && es != 2 && es != 4 && es != 8) || n <= 0 ||
		    n > LAUNCH_MAX_SCRATCH_BYTES / es) {
			kf_err(err, "launch plan: bad scratch %zu", i);
			goto out;
		}
		s->name = strdup(name);
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
		st->kernel = strdup(k);
		lp->n_steps++;
		for (int d = 0; d < 3; d++)
			if (get_uint(json_array_get(g, (size_t)d), 0x7fffffffLL, &st->grid[d]) < 0 ||
			    get_uint(json_array_get(b, (size_t)d), 1024, &st->block[d]) < 0) {
				kf_err(err, "launch plan: bad grid or block in step %zu", i);
				goto out;
			}
		st->smem = smem;
		st->line = (int)jget_int(v, "line", 0);
		args = json_object_get(v, "args");
		if (!json_is_array(args) || json_array_size(args) > LAUNCH_MAX_ARGS) {
			kf_err(err, "launch plan: bad args in step %zu", i);
			goto out;
		}
		st->args = calloc(json_array_size(args) + 1, sizeof(*st->args));
		if (!st->args)
			abort();
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
			if (kd == LARG_TENSOR || kd == LARG_SCRATCH) {
				la->index = (int)jget_int(a, "index", -1);
				if (la->index < 0 || (kd == LARG_TENSOR && la->index >= PROBLEM_MAX_TENSORS) ||
				    (kd == LARG_SCRATCH && la->index >= lp->n_scratch)) {
					kf_err(err, "launch plan: bad index in step %zu", i);
					goto out;
				}
			} else if (kd == LARG_INT) {
				la->ival = jget_int(a, "value", 0);
			} else {
				la->fval = jget_num(a, "value", 0);
				la->is_double = la->size == 8;
			}
			st->n_args++;
		}
	}
	ret = 0;
out:
	if (ret < 0)
		launch_plan_release(lp);
	json_decref(o);
	return ret;
}
