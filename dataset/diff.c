/* kforge dataset diff: rows per file, problems added and removed, best
 * eager speedups per problem and GPU that moved. */
#include "dataset.h"
#include "ds_int.h"
#include "core/json.h"
#include "core/xalloc.h"

#include <archive.h>
#include <archive_entry.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MOVE_EPS 0.01   /* relative change worth reporting */

struct summary {
	json_t *lines;      /* file -> lines */
	json_t *problems;   /* id -> true */
	json_t *best;       /* "problem on gpu" -> best speedup_eager */
};

static void on_line(struct summary *s, const char *name, const char *p, size_t n)
{
	int probs = !strcmp(name, "data/problems.jsonl"), evals = !strcmp(name, "data/evaluations.jsonl");
	json_t *o;

	if (!probs && !evals)
		return;
	o = json_loadb(p, n, 0, NULL);
	if (probs && json_is_string(json_object_get(o, "id")))
		json_object_set_new(s->problems, jget_str(o, "id", ""), json_true());
	if (evals && !strcmp(jget_str(o, "status", ""), "correct") &&
	    json_is_number(json_object_get(o, "speedup_eager"))) {
		char key[600];
		double v = jget_num(o, "speedup_eager", 0);
		snprintf(key, sizeof(key), "%s on %s", jget_str(o, "problem_id", "?"),
			 jget_str(o, "gpu_name", "?"));
		if (!json_object_get(s->best, key) || v > jget_num(s->best, key, 0))
			json_object_set_new(s->best, key, json_real(v));
	}
	json_decref(o);
}

struct sum_ctx {
	struct summary *s;
	const char *path, *name;
	struct buf *err;
};

static int sum_line(void *ctx, long long lineno, const char *p, size_t n)
{
	struct sum_ctx *c = ctx;
	(void)lineno;
	on_line(c->s, c->name, p, n);
	return 0;
}

static int sum_over(void *ctx, long long lineno)
{
	struct sum_ctx *c = ctx;
	(void)lineno;
	return kf_err(c->err, "%s: %s: a line over %zu bytes", c->path, c->name, DATASET_MAX_LINE);
}

static int summarize(const char *path, struct summary *s, struct buf *err)
{
	struct ds_reader rd;
	struct archive_entry *e;
	struct ds_lines lines = { BUF_INIT, 0, 0 };
	struct sum_ctx c = { s, path, NULL, err };
	char chunk[1 << 16];
	const char *name;
	int r, ret = -1;

	if (ds_reader_open(&rd, path, err) < 0)
		return -1;
	while ((r = ds_reader_next(&rd, &e, &name, err)) == 1) {
		size_t nl = name ? strlen(name) : 0;
		la_ssize_t n;
		if (!name || nl < 7 || strcmp(name + nl - 6, ".jsonl") || !ds_safe_path(name))
			continue;
		ds_lines_reset(&lines);
		c.name = name;
		while ((n = archive_read_data(rd.a, chunk, sizeof(chunk))) > 0)
			if (ds_lines_feed(&lines, chunk, (size_t)n, sum_line, sum_over, &c))
				goto out;
		if (n < 0) {
			kf_err(err, "%s: %s", path, archive_error_string(rd.a));
			goto out;
		}
		json_object_set_new(s->lines, name, json_integer(lines.n));
	}
	if (r < 0)
		goto out;
	ret = 0;
out:
	ds_reader_close(&rd);
	buf_release(&lines.line);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Keys of a and b together, sorted (new strings; free_keys). */
static char **union_keys(json_t *a, json_t *b, size_t *n)
{
	json_t *u = json_object();
	const char *k;
	char **v;
	json_t *x;
	size_t i = 0;
	json_object_update(u, a);
	json_object_update(u, b);
	*n = json_object_size(u);
	v = xcalloc(*n + 1, sizeof(*v));
	json_object_foreach(u, k, x)
		v[i++] = xstrdup(k);
	json_decref(u);
	qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void free_keys(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

int dataset_diff(const char *pa, const char *pb, struct buf *out, struct buf *err)
{
	struct summary s[2];
	int ret = -1, moved = 0;
	size_t n, added = 0, removed = 0;
	char **keys = NULL;

	for (int i = 0; i < 2; i++) {
		s[i].lines = json_object();
		s[i].problems = json_object();
		s[i].best = json_object();
	}
	if (summarize(pa, &s[0], err) < 0 || summarize(pb, &s[1], err) < 0)
		goto out;
	buf_addf(out, "rows per file (%s -> %s):\n", pa, pb);
	keys = union_keys(s[0].lines, s[1].lines, &n);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_object_get(s[0].lines, keys[i]), *y = json_object_get(s[1].lines, keys[i]);
		long long a = x ? json_integer_value(x) : 0, b = y ? json_integer_value(y) : 0;
		buf_addf(out, "  %-28s %8lld -> %-8lld", keys[i], a, b);
		if (!x || !y)
			buf_addf(out, " (%s)", x ? "removed" : "added");
		else if (a != b)
			buf_addf(out, " (%+lld)", b - a);
		buf_addc(out, '\n');
	}
	free_keys(keys);
	keys = union_keys(s[0].problems, s[1].problems, &n);
	for (size_t i = 0; i < n; i++) {
		int ina = json_object_get(s[0].problems, keys[i]) != NULL;
		int inb = json_object_get(s[1].problems, keys[i]) != NULL;
		if (ina != inb) {
			buf_addf(out, "problem %s: %s\n", inb ? "added" : "removed", keys[i]);
			if (inb)
				added++;
			else
				removed++;
		}
	}
	buf_addf(out, "problems: %zu added, %zu removed\n", added, removed);
	free_keys(keys);
	keys = union_keys(s[0].best, s[1].best, &n);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_object_get(s[0].best, keys[i]), *y = json_object_get(s[1].best, keys[i]);
		double a = x ? json_number_value(x) : 0, b = y ? json_number_value(y) : 0;
		if (x && y && fabs(b - a) <= MOVE_EPS * fabs(a))
			continue;
		moved++;
		if (x && y)
			buf_addf(out, "best speedup %s: %.3fx -> %.3fx\n", keys[i], a, b);
		else if (y)
			buf_addf(out, "best speedup %s: new, %.3fx\n", keys[i], b);
		else
			buf_addf(out, "best speedup %s: %.3fx, gone\n", keys[i], a);
	}
	buf_addf(out, "best speedups moved: %d\n", moved);
	ret = 0;
out:
	free_keys(keys);
	for (int i = 0; i < 2; i++) {
		json_decref(s[i].lines);
		json_decref(s[i].problems);
		json_decref(s[i].best);
	}
	return ret;
}
