#include "problem_list.h"
#include "core/fsutil.h"

#include <ctype.h>
#include <dirent.h>
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
		l->v = realloc(l->v, (size_t)l->alloc * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	l->v[l->n].id = strdup(r->id);
	l->v[l->n].dir = strdup(r->dir);
	if (!l->v[l->n].id || !l->v[l->n].dir)
		abort();
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

/* "023_Softmax" -> number 23, name "Softmax"; 0 or -1 when not a problem dir. */
static int parse_dirname(const char *d, int *number, const char **name)
{
	char *end;
	long n;

	if (!isdigit((unsigned char)d[0]))
		return -1;
	n = strtol(d, &end, 10);
	if (*end != '_' || !end[1] || n < 0 || n > 100000)
		return -1;
	*number = (int)n;
	*name = end + 1;
	return 0;
}

/* Every problem under ROOT/problems, sorted. */
static int scan_all(struct problem_list *all, const char *root, struct buf *err)
{
	struct buf base = BUF_INIT, p = BUF_INIT, id = BUF_INIT;
	DIR *top, *lv;
	struct dirent *e, *f;

	path_join(&base, root, "problems");
	top = opendir(base.s);
	if (!top) {
		kf_err(err, "no problem suite at %s", base.s);
		buf_release(&base);
		return -1;
	}
	while ((e = readdir(top))) {
		char *end;
		long level;
		if (strncmp(e->d_name, "level", 5) || !isdigit((unsigned char)e->d_name[5]))
			continue;
		level = strtol(e->d_name + 5, &end, 10);
		if (*end || level < 0 || level > 100)
			continue;
		buf_reset(&p);
		buf_addf(&p, "%s/%s", base.s, e->d_name);
		lv = opendir(p.s);
		if (!lv)
			continue;
		while ((f = readdir(lv)) && all->n < PROBLEM_LIST_MAX) {
			struct problem_ref r;
			const char *name;
			struct buf dir = BUF_INIT, spec = BUF_INIT;
			if (parse_dirname(f->d_name, &r.number, &name) < 0)
				continue;
			buf_addf(&dir, "%s/%s", p.s, f->d_name);
			path_join(&spec, dir.s, "spec.json");
			if (file_exists(spec.s)) {
				buf_reset(&id);
				buf_addf(&id, "%s/%s", e->d_name, f->d_name);
				r.id = id.s;
				r.dir = dir.s;
				r.level = (int)level;
				add(all, &r);
			}
			buf_release(&dir);
			buf_release(&spec);
		}
		closedir(lv);
	}
	closedir(top);
	qsort(all->v, (size_t)all->n, sizeof(all->v[0]), cmp_ref);
	buf_release(&base);
	buf_release(&p);
	buf_release(&id);
	return 0;
}

static const char *ref_name(const struct problem_ref *r)
{
	const char *slash = strchr(r->id, '/');
	const char *us = slash ? strchr(slash, '_') : NULL;
	return us ? us + 1 : r->id;
}

static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[64];
	if (lb >= 63 || la >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int prev = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int cur = row[j];
			int c = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			int best = prev + c;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
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

static int match_item(const struct problem_list *all, struct problem_list *out, const char *item,
		      struct buf *err)
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
				return kf_err(err, "PROBLEMS: no problems in %s", item);
			return 0;
		}
		if (*end != '/' && *end != ':')
			return kf_err(err, "PROBLEMS: cannot parse '%s'", item);
		rest = end + 1;
	}
	if (parse_range(rest, &lo, &hi)) {
		if (hi < lo)
			return kf_err(err, "PROBLEMS: empty range '%s'", item);
		for (int i = 0; i < all->n; i++)
			if (all->v[i].level == level && all->v[i].number >= lo &&
			    all->v[i].number <= hi) {
				add(out, &all->v[i]);
				found++;
			}
		if (!found)
			return kf_err(err, "PROBLEMS: no level-%d problem numbered %s", level, rest);
		return 0;
	}
	for (int i = 0; i < all->n; i++) {
		const struct problem_ref *r = &all->v[i];
		const char *slash = strchr(r->id, '/');
		if (!strcasecmp(item, r->id) || !strcasecmp(rest, ref_name(r)) ||
		    (rest != item && slash && !strcasecmp(rest, slash + 1))) {
			if (rest != item && r->level != level)
				continue;
			add(out, r);
			found++;
		}
	}
	if (!found) {
		const char *best = NULL;
		int bestd = 4;
		for (int i = 0; i < all->n; i++) {
			int d = edit_distance(rest, ref_name(&all->v[i]));
			if (d < bestd) {
				bestd = d;
				best = all->v[i].id;
			}
		}
		if (best)
			return kf_err(err, "PROBLEMS: no problem '%s' (did you mean %s?)", item, best);
		return kf_err(err, "PROBLEMS: no problem '%s'", item);
	}
	return 0;
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
		return kf_err(err, "PROBLEMS: list longer than %d bytes", PROBLEM_LIST_SPEC_MAX);
	problem_list_init(&all);
	problem_list_init(&got);
	if (scan_all(&all, root, err) < 0)
		goto out;
	copy = strdup(spec);
	if (!copy)
		abort();
	for (tok = strtok_r(copy, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save))
		if (match_item(&all, &got, tok, err) < 0) {
			free(copy);
			add_forms(&all, err);
			goto out;
		}
	free(copy);
	if (!got.n) {
		kf_err(err, "PROBLEMS: empty list");
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
