/* One JSON shape per field across all rows, so that readers that infer a
 * column type from the rows (Arrow's JSON reader under Hugging Face
 * `datasets`) load every file: a problem spec writes `kernel_size: 3` in one
 * problem and `[3, 5]` in another, a shape mixes size names and numbers.
 * The store keeps the specs as they are; only the exported rows change
 * (docs/dataset.md, "One shape per field"). */
#include "ds_int.h"
#include "core/json.h"

#include <math.h>
#include <string.h>

static void int_to_real(json_t *o, const char *k, json_t *v)
{
	if (json_is_integer(v))
		json_object_set_new(o, k, json_real((double)json_integer_value(v)));
}

static void wrap_list(json_t *o, const char *k, json_t *v)
{
	if (v && !json_is_array(v) && !json_is_null(v)) {
		json_t *a = json_array();
		json_array_append(a, v);
		json_object_set_new(o, k, a);
	}
}

/* Shapes: every dimension a string, a size name or a decimal number. */
static void tensor_shapes(json_t *list)
{
	size_t i, j;
	json_t *t, *d;

	json_array_foreach(list, i, t) {
		json_t *shape = json_object_get(t, "shape"), *dist = json_object_get(t, "dist");
		const char *k;
		json_t *v;
		json_array_foreach(shape, j, d)
			if (json_is_integer(d))
				json_array_set_new(shape, j, json_sprintf("%" JSON_INTEGER_FORMAT,
									  json_integer_value(d)));
		/* dist: post always a list of steps, parameters always reals */
		wrap_list(dist, "post", json_object_get(dist, "post"));
		json_object_foreach(dist, k, v)
			int_to_real(dist, k, v);
	}
}

/* Graph nodes: dims always a list, value always a string (a real's
 * shortest text, or "-inf", which JSON has no number for). */
static void graph_nodes(json_t *graph)
{
	size_t i;
	json_t *n, *v;

	json_array_foreach(graph, i, n) {
		wrap_list(n, "dims", json_object_get(n, "dims"));
		v = json_object_get(n, "value");
		if (json_is_number(v)) {
			struct buf b = BUF_INIT;
			json_add_real(&b, json_number_value(v));
			json_object_set_new(n, "value", json_string(b.s));
			buf_release(&b);
		}
	}
}

void ds_spec_shape(json_t *spec)
{
	json_t *ia = json_object_get(spec, "init_args"), *sc = json_object_get(spec, "scalars"), *v;
	const char *k;

	/* init_args: every argument a list (3 -> [3]); None stays null */
	json_object_foreach(ia, k, v)
		wrap_list(ia, k, v);
	json_object_foreach(sc, k, v)
		int_to_real(sc, k, v);
	tensor_shapes(json_object_get(spec, "inputs"));
	tensor_shapes(json_object_get(spec, "outputs"));
	graph_nodes(json_object_get(json_object_get(spec, "attrs"), "graph"));
}

/* Reals by path: a spec writes `scaling_factor: 2` in one problem and
 * `0.5` in another; Arrow would widen that column to double, but
 * `datasets` casts later batches to the first one's types. Integers at a
 * path where any row of the file has a real become reals. Path: the keys
 * and "[]" for list items, "/"-joined. */
static void reals_walk(json_t *v, struct buf *path, json_t *reals, int apply)
{
	size_t len = path->len, i;
	const char *k;
	json_t *x;

	if (json_is_object(v)) {
		json_object_foreach(v, k, x) {
			buf_addf(path, "/%s", k);
			if (apply && json_is_integer(x) && json_object_get(reals, path->s))
				json_object_set_new_nocheck(v, k, json_real((double)json_integer_value(x)));
			else
				reals_walk(x, path, reals, apply);
			buf_truncate(path, len);
		}
	} else if (json_is_array(v)) {
		buf_adds(path, "/[]");
		json_array_foreach(v, i, x) {
			if (apply && json_is_integer(x) && json_object_get(reals, path->s))
				json_array_set_new(v, i, json_real((double)json_integer_value(x)));
			else
				reals_walk(x, path, reals, apply);
		}
		buf_truncate(path, len);
	} else if (!apply && json_is_real(v)) {
		json_object_set_new(reals, path->s, json_true());
	}
}

void ds_reals_collect(const json_t *row, json_t *reals)
{
	struct buf path = BUF_INIT;
	buf_adds(&path, "");
	reals_walk((json_t *)row, &path, reals, 0);
	buf_release(&path);
}

static void reals_apply(json_t *row, json_t *reals)
{
	struct buf path = BUF_INIT;
	buf_adds(&path, "");
	reals_walk(row, &path, reals, 1);
	buf_release(&path);
}

/* Profiles: a column of the store is typeless, so each field takes its
 * declared type here: reals real (2 -> 2.0), integers integer (a whole
 * real -> its integer), anything else (a missing field, text in a number
 * column, a fraction in an integer one) null. */
static const char *const prof_reals[] = {
	"kernel_ms", "dram_pct", "l2_hit_pct", "sm_pct", "tensor_pct", "occupancy_pct", "cost_ms",
	"duration_ms", NULL,
};
static const char *const prof_ints[] = {
	"launches", "dram_read_bytes", "dram_write_bytes", "idx", "registers", "shared_bytes",
	"block_threads", "grid_blocks", NULL,
};
static const char *const prof_fields[] = { "dram_read_bytes", "dram_write_bytes", "dram_pct",
	"l2_hit_pct", "sm_pct", "tensor_pct", "occupancy_pct", "limiter", NULL };
static const char *const prof_top[] = { "eval_id", "kernel_hash", "problem_id", "gpu_name",
	"launches", "kernel_ms", "cost_ms", "tool", "created_at", NULL };
static const char *const prof_kern[] = { "idx", "name", "duration_ms", "registers",
	"shared_bytes", "block_threads", "grid_blocks", NULL };

static int in(const char *const *l, const char *k)
{
	for (int i = 0; l[i]; i++)
		if (!strcmp(l[i], k))
			return 1;
	return 0;
}

static void prof_fix(json_t *o, const char *const *names)
{
	for (int i = 0; names[i]; i++) {
		const char *k = names[i];
		json_t *v = json_object_get(o, k), *nv = NULL;
		if (in(prof_reals, k)) {
			if (json_is_real(v) && isfinite(json_real_value(v)))
				continue;
			if (json_is_integer(v))
				nv = json_real((double)json_integer_value(v));
		} else if (in(prof_ints, k)) {
			double d = json_is_real(v) ? json_real_value(v) : 0.5;
			if (json_is_integer(v))
				continue;
			if (d == floor(d) && fabs(d) < 9e15)
				nv = json_integer((json_int_t)d);
		} else if (json_is_string(v)) {
			continue;
		}
		json_object_set_new(o, k, nv ? nv : json_null());
	}
}

void ds_profile_shape(json_t *row)
{
	json_t *ks = json_object_get(row, "kernels"), *k;
	size_t i;

	prof_fix(row, prof_top);
	prof_fix(row, prof_fields);
	if (!json_is_array(ks))
		json_object_set_new(row, "kernels", (ks = json_array()));
	json_array_foreach(ks, i, k) {
		prof_fix(k, prof_kern);
		prof_fix(k, prof_fields);
	}
}

/* A search session's problems are a list of strings and its levels a list
 * of integers; anything else (text that did not parse) becomes [] or
 * loses the odd element, so the field keeps one Arrow type. */
void ds_session_shape(json_t *row)
{
	static const char *const lists[] = { "problems", "levels" };
	for (int l = 0; l < 2; l++) {
		json_t *a = json_object_get(row, lists[l]), *v;
		size_t i;
		if (!json_is_array(a)) {
			json_object_set_new(row, lists[l], json_array());
			continue;
		}
		for (i = json_array_size(a); i-- > 0;) {
			v = json_array_get(a, i);
			if (l ? !json_is_integer(v) : !json_is_string(v))
				json_array_remove(a, i);
		}
	}
}

int ds_gpu_null(const char *field)
{
	return !strcmp(field, "gpu_name");
}

void ds_row_shape(const char *table, json_t *row, json_t *reals)
{
	const char *k;
	json_t *v;

	/* Compile-only rows have no GPU: null, not "" (an empty name would
	 * read as a GPU called ""). */
	json_object_foreach(row, k, v)
		if (ds_gpu_null(k) && json_is_string(v) && !json_string_length(v))
			json_object_set_new_nocheck(row, k, json_null());
	if (!strcmp(table, "profiles"))
		ds_profile_shape(row);
	if (!strcmp(table, "search_sessions"))
		ds_session_shape(row);
	if (!strcmp(table, "problems") && json_is_object(json_object_get(row, "spec")))
		ds_spec_shape(json_object_get(row, "spec"));
	if (reals && json_object_size(reals))
		reals_apply(row, reals);
}
