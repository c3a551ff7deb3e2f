/* The problem index: the one scan of ROOT/problems/levelN/NNN_Name. */
#include "problem/problem.h"
#include "core/fsutil.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct pdir {
	int level, number;
	char *path;
};

static int cmp_pdir(const void *a, const void *b)
{
	const struct pdir *x = a, *y = b;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	if (x->number != y->number)
		return x->number < y->number ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int scan_level(const char *root, int level, struct pdir **v, int *n, int *cap,
		      struct buf *err)
{
	struct buf path = BUF_INIT, sub = BUF_INIT;
	struct dirent *de;
	DIR *d;

	buf_addf(&path, "%s/problems/level%d", root, level);
	d = opendir(path.s);
	if (!d) {
		buf_release(&path);
		return 0; /* no such level */
	}
	while ((de = readdir(d))) {
		char *end;
		long num;
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		num = strtol(de->d_name, &end, 10);
		if (*end != '_' && *end != '\0')
			continue;
		path_join(&sub, path.s, de->d_name);
		if (!is_dir(sub.s))
			continue;
		if (*n >= 100000) {
			closedir(d);
			buf_release(&path);
			buf_release(&sub);
			return kf_err(err, "%s: too many problem directories", path.s);
		}
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*v = xrealloc(*v, (size_t)*cap * sizeof(**v));
		}
		(*v)[*n].level = level;
		(*v)[*n].number = (int)num;
		(*v)[*n].path = xstrdup(sub.s);
		(*n)++;
	}
	closedir(d);
	buf_release(&path);
	buf_release(&sub);
	return 0;
}

void problem_index_release(struct problem_index *ix)
{
	for (int i = 0; ix->dirs && i < ix->n; i++)
		free(ix->dirs[i]);
	free(ix->dirs);
	free(ix->v);
	memset(ix, 0, sizeof(*ix));
}

int problem_index_load(struct problem_index *ix, const char *root, int level, struct buf *err)
{
	struct pdir *v = NULL;
	struct buf spec = BUF_INIT;
	int cnt = 0, cap = 0;

	memset(ix, 0, sizeof(*ix));
	for (int l = level ? level : 1; l <= (level ? level : 9); l++)
		if (scan_level(root, l, &v, &cnt, &cap, err) < 0) {
			for (int i = 0; i < cnt; i++)
				free(v[i].path);
			free(v);
			return -1;
		}
	if (cnt)
		qsort(v, (size_t)cnt, sizeof(*v), cmp_pdir);
	ix->dirs = xcalloc((size_t)cnt + 1, sizeof(*ix->dirs));
	ix->v = xcalloc((size_t)cnt + 1, sizeof(*ix->v));
	for (int i = 0; i < cnt; i++) {
		/* a directory without a spec is not a problem */
		path_join(&spec, v[i].path, "spec.json");
		if (!file_exists(spec.s)) {
			free(v[i].path);
			continue;
		}
		ix->dirs[ix->n] = v[i].path;
		ix->v[ix->n].id = problem_dir_id(v[i].path);
		ix->v[ix->n].level = v[i].level;
		ix->v[ix->n].number = v[i].number;
		ix->n++;
	}
	free(v);
	buf_release(&spec);
	return 0;
}

int problem_list_dirs(const char *root, int level, char ***dirs, int *n, struct buf *err)
{
	struct problem_index ix;

	*dirs = NULL;
	*n = 0;
	if (problem_index_load(&ix, root, level, err) < 0)
		return -1;
	*dirs = ix.dirs; /* the caller owns the paths now */
	*n = ix.n;
	free(ix.v);
	return 0;
}

const char *problem_dir_id(const char *path)
{
	const char *s = path + strlen(path);
	int slashes = 0;
	while (s > path && !(s[-1] == '/' && ++slashes == 2))
		s--;
	return s;
}

int problem_find(const char *root, const char *query, struct buf *dir_out, struct buf *err)
{
	struct problem_index ix;
	int r;

	if (problem_index_load(&ix, root, 0, err) < 0)
		return -1;
	r = problem_name_one(ix.v, ix.n, query, err);
	if (r >= 0) {
		buf_reset(dir_out);
		buf_adds(dir_out, ix.dirs[r]);
	}
	problem_index_release(&ix);
	return r < 0 ? r : 0;
}
