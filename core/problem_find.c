/* Finding problem directories under ROOT/problems/levelN/NNN_Name. */
#include "core/problem.h"
#include "core/fsutil.h"

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
			*v = realloc(*v, (size_t)*cap * sizeof(**v));
			if (!*v)
				abort();
		}
		(*v)[*n].level = level;
		(*v)[*n].number = (int)num;
		(*v)[*n].path = strdup(sub.s);
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
	*dirs = calloc((size_t)cnt + 1, sizeof(char *));
	if (!*dirs)
		abort();
	for (int i = 0; i < cnt; i++)
		(*dirs)[i] = v[i].path;
	*n = cnt;
	free(v);
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

int problem_find(const char *root, const char *query, struct buf *dir_out, struct buf *err)
{
	char **dirs = NULL;
	int n = 0, level = 0, hits = 0, ret = -1;
	const char *q = query, *hit = NULL;
	struct buf cands = BUF_INIT;

	if (!query || !*query || strlen(query) > 256)
		return kf_err(err, "no problem given");
	if (!strncmp(q, "level", 5) && isdigit((unsigned char)q[5])) {
		level = q[5] - '0';
		q += 6;
		if (*q != '/' && *q != '\0')
			return kf_err(err, "problem \"%s\": expected levelN/ID", query);
		if (*q == '/')
			q++;
	}
	/* A bare number is a level-1 problem, as in PROBLEMS lists (levels share
	 * numbers); levelN/NUM or a name reaches the others. */
	if (!level && all_digits(q))
		level = 1;
	if (problem_list_dirs(root, level, &dirs, &n, err) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		const char *b = base_name(dirs[i]), *nm = strchr(b, '_');
		int match;
		if (all_digits(q))
			match = atoi(q) == atoi(b);
		else
			match = !strcmp(q, b) || (nm && !strcasecmp(q, nm + 1));
		if (match) {
			hits++;
			hit = dirs[i];
			buf_addf(&cands, " %s", dirs[i]);
		}
	}
	if (hits == 1) {
		buf_reset(dir_out);
		buf_adds(dir_out, hit);
		ret = 0;
	} else if (hits == 0) {
		kf_err(err, "no problem \"%s\" under %s/problems", query, root);
	} else {
		kf_err(err, "problem \"%s\" is ambiguous:%s", query, cands.s);
	}
	for (int i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	buf_release(&cands);
	return ret;
}
