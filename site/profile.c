#include "profile.h"
#include "html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/xalloc.h"

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void pct(struct buf *b, const json_t *o, const char *k)
{
	fmt_pct(b, num(o, k) / 100.0);
}

void profile_rows(const json_t *p, void (*row)(void *ctx, const char *label, const char *value),
		  void *ctx)
{
	struct buf b = BUF_INIT;

	row(ctx, "Limiter", jget_str(p, "limiter", "—"));
	fmt_ms(&b, num(p, "kernel_ms"));
	buf_addf(&b, " (%lld launch%s)", (long long)jget_int(p, "launches", 0),
		 jget_int(p, "launches", 0) == 1 ? "" : "es");
	row(ctx, "Kernel time", b.s);
	buf_reset(&b);
	fmt_bytes(&b, num(p, "dram_read_bytes"));
	row(ctx, "DRAM read", b.s);
	buf_reset(&b);
	fmt_bytes(&b, num(p, "dram_write_bytes"));
	row(ctx, "DRAM write", b.s);
	buf_reset(&b);
	pct(&b, p, "dram_pct");
	row(ctx, "DRAM bandwidth, % of peak", b.s);
	buf_reset(&b);
	pct(&b, p, "l2_hit_pct");
	row(ctx, "L2 hit rate", b.s);
	buf_reset(&b);
	pct(&b, p, "sm_pct");
	row(ctx, "SM throughput, % of peak", b.s);
	buf_reset(&b);
	pct(&b, p, "tensor_pct");
	row(ctx, "Tensor pipes, % of peak", b.s);
	buf_reset(&b);
	pct(&b, p, "occupancy_pct");
	row(ctx, "Achieved occupancy", b.s);
	buf_release(&b);
}

const char *const profile_kernel_heads[] = {
	"Kernel", "Time", "DRAM % of peak", "SM % of peak", "Registers", "Shared memory",
	"Block × grid", "Limiter", NULL,
};

static void int_or_dash(struct buf *b, const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	if (json_is_integer(v))
		buf_addf(b, "%lld", (long long)json_integer_value(v));
	else
		buf_adds(b, "—");
}

void profile_kernel_cells(const json_t *k, void (*cell)(void *ctx, int i, const char *value),
			  void *ctx)
{
	struct buf b = BUF_INIT;

	cell(ctx, 0, jget_str(k, "name", ""));
	fmt_ms(&b, num(k, "duration_ms"));
	cell(ctx, 1, b.s);
	buf_reset(&b);
	pct(&b, k, "dram_pct");
	cell(ctx, 2, b.s);
	buf_reset(&b);
	pct(&b, k, "sm_pct");
	cell(ctx, 3, b.s);
	buf_reset(&b);
	int_or_dash(&b, k, "registers");
	cell(ctx, 4, b.s);
	buf_reset(&b);
	fmt_bytes(&b, num(k, "shared_bytes"));
	cell(ctx, 5, b.s);
	buf_reset(&b);
	int_or_dash(&b, k, "block_threads");
	buf_adds(&b, " × ");
	int_or_dash(&b, k, "grid_blocks");
	cell(ctx, 6, b.s);
	cell(ctx, 7, jget_str(k, "limiter", "—"));
	buf_release(&b);
}

struct group {
	const char *name;
	int launches;
	double ms;
	size_t first;              /* launch order, for ties */
};

static int by_time(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->ms != y->ms)
		return x->ms < y->ms ? 1 : -1;
	return (x->first > y->first) - (x->first < y->first);
}

json_t *profile_by_name(const json_t *p)
{
	const json_t *ks = json_object_get(p, "kernels"), *k;
	size_t i, n = json_array_size(ks), ng = 0;
	struct group *g = xcalloc(n ? n : 1, sizeof(*g));
	double total = 0;
	json_t *out = json_array();

	json_array_foreach(ks, i, k) {
		const char *name = jget_str(k, "name", "");
		double d = num(k, "duration_ms");
		size_t j;
		for (j = 0; j < ng && strcmp(g[j].name, name); j++)
			;
		if (j == ng)
			g[ng++] = (struct group){ name, 0, 0, i };
		g[j].launches++;
		if (isfinite(d)) {
			g[j].ms += d;
			total += d;
		}
	}
	qsort(g, ng, sizeof(*g), by_time);
	for (i = 0; i < ng && i < PROFILE_MAX_KERNELS; i++) {
		struct buf t = BUF_INIT, s = BUF_INIT;
		fmt_ms(&t, total > 0 ? g[i].ms : NAN);
		fmt_pct(&s, total > 0 ? g[i].ms / total : NAN);
		json_array_append_new(out, json_pack("{s:s,s:i,s:s,s:s}", "name", g[i].name, "launches",
						     g[i].launches, "time", t.s, "share", s.s));
		buf_release(&t);
		buf_release(&s);
	}
	free(g);
	return out;
}

static void view_row(void *ctx, const char *label, const char *value)
{
	json_array_append_new(ctx, json_pack("{s:s,s:s}", "label", label, "value", value));
}

static void view_cell(void *ctx, int i, const char *value)
{
	static const char *const keys[] = { "name", "time", "dram", "sm", "registers", "shared",
					    "shape", "limiter" };

	json_object_set_new(ctx, keys[i], json_string(value));
}

json_t *profile_view(const json_t *p)
{
	json_t *v = json_object(), *rows = json_array(), *ks = json_array(), *k;
	size_t i, n = json_array_size(json_object_get(p, "kernels"));

	profile_rows(p, view_row, rows);
	json_array_remove(rows, 0);   /* the limiter is the badge */
	json_object_set_new(v, "limiter", json_string(jget_str(p, "limiter", "")));
	json_object_set_new(v, "rows", rows);
	json_array_foreach(json_object_get(p, "kernels"), i, k) {
		if (i == PROFILE_MAX_KERNELS)
			break;
		json_t *o = json_object();
		profile_kernel_cells(k, view_cell, o);
		json_array_append_new(ks, o);
	}
	json_object_set_new(v, "kernels", ks);
	{
		json_t *g = profile_by_name(p);
		if (json_array_size(g) > 1) {
			json_object_set_new(v, "by_name", g);
			json_object_set_new(v, "has_by_name", json_true());
		} else
			json_decref(g);
	}
	if (n > PROFILE_MAX_KERNELS)
		json_object_set_new(v, "more_kernels", json_integer((json_int_t)(n - PROFILE_MAX_KERNELS)));
	json_object_set_new(v, "tool", json_string(jget_str(p, "tool", "")));
	json_object_set_new(v, "created_at", json_string(jget_str(p, "created_at", "")));
	return v;
}
