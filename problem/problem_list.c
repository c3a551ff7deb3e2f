#include "problem_list.h"
#include "core/fsutil.h"
#include "problem/problem.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void problem_list_init(struct problem_list *l)
{
	memset(l, 0, sizeof(*l));
}

void problem_list_release(struct problem_list *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->v[i].id);
		free(l->v[i].dir);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static void add(struct problem_list *l, const struct problem_ref *r)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 64;
		l->v = xrealloc(l->v, (size_t)l->alloc * sizeof(*l->v));
	}
	l->v[l->n].id = xstrdup(r->id);
	l->v[l->n].dir = xstrdup(r->dir);
	l->v[l->n].level = r->level;
	l->v[l->n].number = r->number;
	l->n++;
}

static int cmp_ref(const void *a, const void *b)
{
	const struct problem_ref *x = a, *y = b;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	if (x->number != y->number)
		return x->number < y->number ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Every problem under ROOT/problems, sorted: the problem index. */
static int scan_all(struct problem_list *all, const char *root, struct buf *err)
{
	struct problem_index ix;
	struct buf base = BUF_INIT;
	int ret = -1;

	path_join(&base, root, "problems");
	if (!is_dir(base.s)) {
		kf_err(err, "no problem suite at %s", base.s);
		goto out;
	}
	if (problem_index_load(&ix, root, 0, err) < 0)
		goto out;
	for (int i = 0; i < ix.n && all->n < PROBLEM_LIST_MAX; i++) {
		struct problem_ref r = { (char *)ix.v[i].id, ix.dirs[i], ix.v[i].level, ix.v[i].number };
		add(all, &r);
	}
	problem_index_release(&ix);
	ret = 0;
out:
	buf_release(&base);
	return ret;
}

/* A list that names nothing is the user's error (exit 2), not a failure. */
static int unknown(struct buf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int unknown(struct buf *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	buf_reset(err);
	buf_vaddf(err, fmt, ap);
	va_end(ap);
	return PROBLEM_UNKNOWN;
}

/* Number or range "a-b": 1 with lo/hi set, 0 when not numeric. */
static int parse_range(const char *s, long *lo, long *hi)
{
	char *end;
	if (!isdigit((unsigned char)*s))
		return 0;
	*lo = strtol(s, &end, 10);
	if (!*end) {
		*hi = *lo;
		return 1;
	}
	if (*end != '-' || !isdigit((unsigned char)end[1]))
		return 0;
	*hi = strtol(end + 1, &end, 10);
	return *end ? 0 : 1;
}

/* One problem, or a name several share, through the shared matcher. */
static int match_names(const struct problem_list *all, struct problem_list *out, const char *item,
		       struct buf *err)
{
	struct problem_name *v = xcalloc((size_t)all->n + 1, sizeof(*v));
	int *idx = xcalloc((size_t)all->n + 1, sizeof(*idx)), r;

	for (int i = 0; i < all->n; i++) {
		v[i].id = all->v[i].id;
		v[i].level = all->v[i].level;
		v[i].number = all->v[i].number;
	}
	r = problem_name_find(v, all->n, item, idx, all->n, err);
	for (int i = 0; i < r; i++)
		add(out, &all->v[idx[i]]);
	free(v);
	free(idx);
	return r < 0 ? r : 0;
}

/* *named: the item was taken as a problem's name, whose error already says
 * what it could have meant. */
static int match_item(const struct problem_list *all, struct problem_list *out, const char *item,
		      int *named, struct buf *err)
{
	int level = 1, found = 0;
	long lo, hi;
	const char *rest = item;

	if (!strcmp(item, "all")) {
		for (int i = 0; i < all->n; i++)
			add(out, &all->v[i]);
		return 0;
	}
	if (!strncmp(item, "level", 5) && isdigit((unsigned char)item[5])) {
		char *end;
		level = (int)strtol(item + 5, &end, 10);
		if (!*end) {
			for (int i = 0; i < all->n; i++)
				if (all->v[i].level == level) {
					add(out, &all->v[i]);
					found++;
				}
			if (!found)
				return unknown(err, "PROBLEMS: no problems in %s", item);
			return 0;
		}
		if (*end != '/' && *end != ':')
			return unknown(err, "PROBLEMS: cannot parse '%s'", item);
		rest = end + 1;
	}
	if (strchr(rest, '-') && parse_range(rest, &lo, &hi)) {
		if (hi < lo)
			return unknown(err, "PROBLEMS: empty range '%s'", item);
		for (int i = 0; i < all->n; i++)
			if (all->v[i].level == level && all->v[i].number >= lo &&
			    all->v[i].number <= hi) {
				add(out, &all->v[i]);
				found++;
			}
		if (!found)
			return unknown(err, "PROBLEMS: no level-%d problem numbered %s", level, rest);
		return 0;
	}
	*named = 1;
	return match_names(all, out, item, err);
}

/* The valid forms, on the same line as the error: one line says it all. */
static void add_forms(const struct problem_list *all, struct buf *err)
{
	char seen[101] = { 0 };
	int n = 0;

	for (int i = 0; i < all->n; i++)
		seen[all->v[i].level] = 1; /* scan_all keeps levels 0-100 */
	buf_adds(err, " (PROBLEMS takes a level: ");
	for (int lv = 0; lv <= 100; lv++)
		if (seen[lv])
			buf_addf(err, "%slevel%d", n++ ? ", " : "", lv);
	buf_adds(err, "; all; ids 1,5,23 or level2/12; ranges 1-10 or level2/3-7; names Softmax "
		      "or level1/023_Softmax)");
}

int problem_list_resolve(struct problem_list *l, const char *root, const char *spec,
			 struct buf *err)
{
	struct problem_list all, got;
	char *copy, *save = NULL, *tok;
	int ret = -1;

	if (strlen(spec) > PROBLEM_LIST_SPEC_MAX)
		return unknown(err, "PROBLEMS: list longer than %d bytes", PROBLEM_LIST_SPEC_MAX);
	problem_list_init(&all);
	problem_list_init(&got);
	if (scan_all(&all, root, err) < 0)
		goto out;
	copy = xstrdup(spec);
	for (tok = strtok_r(copy, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save)) {
		int named = 0;
		if ((ret = match_item(&all, &got, tok, &named, err)) < 0) {
			free(copy);
			if (!named)
				add_forms(&all, err);
			goto out;
		}
	}
	free(copy);
	if (!got.n) {
		ret = unknown(err, "PROBLEMS: empty list");
		goto out;
	}
	qsort(got.v, (size_t)got.n, sizeof(got.v[0]), cmp_ref);
	for (int i = 0; i < got.n; i++)
		if (!i || strcmp(got.v[i].id, got.v[i - 1].id))
			add(l, &got.v[i]);
	ret = 0;
out:
	problem_list_release(&all);
	problem_list_release(&got);
	return ret;
}
