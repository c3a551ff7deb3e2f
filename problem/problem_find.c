/* Finding problem directories under ROOT/problems/levelN/NNN_Name. */
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

int problem_list_dirs(const char *root, int level, char ***dirs, int *n, struct buf *err)
{
	struct pdir *v = NULL;
	int cnt = 0, cap = 0;

	*dirs = NULL;
	*n = 0;
	for (int l = level ? level : 1; l <= (level ? level : 9); l++)
		if (scan_level(root, l, &v, &cnt, &cap, err) < 0) {
			for (int i = 0; i < cnt; i++)
				free(v[i].path);
			free(v);
			return -1;
		}
	if (cnt)
		qsort(v, (size_t)cnt, sizeof(*v), cmp_pdir);
	*dirs = xcalloc((size_t)cnt + 1, sizeof(char *));
	for (int i = 0; i < cnt; i++)
		(*dirs)[i] = v[i].path;
	*n = cnt;
	free(v);
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
	char **dirs = NULL;
	struct problem_name *v;
	int n = 0, r;

	if (problem_list_dirs(root, 0, &dirs, &n, err) < 0)
		return -1;
	v = xcalloc((size_t)n + 1, sizeof(*v));
	for (int i = 0; i < n; i++) {
		const char *id = problem_dir_id(dirs[i]);
		v[i].id = id;
		v[i].level = atoi(id + 5);
		v[i].number = atoi(strchr(id, '/') + 1);
	}
	r = problem_name_one(v, n, query, err);
	if (r >= 0) {
		buf_reset(dir_out);
		buf_adds(dir_out, dirs[r]);
	}
	for (int i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	free(v);
	return r < 0 ? r : 0;
}
