/* Partials: a callback or a directory gives the text; each name is
 * compiled once and kept (missing names too) in an open-addressing table. */
#include "mustache_int.h"
#include "xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct pentry {
	char *name;                 /* NULL: empty slot */
	struct mustache_tpl *tpl;   /* NULL: no such partial */
	uint64_t hash;
};

struct mustache_pcache {
	struct pentry *tab;
	size_t cap, n;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static void cache_new(struct mustache_partials *p)
{
	p->cache = xcalloc(1, sizeof(*p->cache));
}

void mustache_partials_init(struct mustache_partials *p, mustache_partial_fn fn, void *ud)
{
	memset(p, 0, sizeof(*p));
	p->fn = fn;
	p->ud = ud;
	p->max_size = MUSTACHE_MAX_TEMPLATE;
	cache_new(p);
}

int mustache_partial_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > 200 || name[0] == '/' || strstr(name, ".."))
		return 0;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr("_./-", *c)))
			return 0;
	return 1;
}

static int dir_load(void *ud, const char *name, struct buf *text, int *found, struct buf *err)
{
	const struct mustache_partials *p = ud;
	struct buf path = BUF_INIT;
	struct stat sb;
	int ret = 0;

	*found = 0;
	if (!mustache_partial_name_ok(name))
		return kf_err(err, "partial name '%.64s' refused: only [A-Za-z0-9_./-], "
			      "no leading '/', no '..', at most 200 bytes", name);
	buf_addf(&path, "%s/%s.mustache", p->dir, name);
	if (stat(path.s, &sb) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			ret = kf_err(err, "%s: %s", path.s, strerror(errno));
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		ret = kf_err(err, "%s: not a regular file", path.s);
		goto out;
	}
	if (buf_read_file(text, path.s, p->max_size, err) < 0) {
		ret = -1;
		goto out;
	}
	*found = 1;
out:
	buf_release(&path);
	return ret;
}

void mustache_partials_dir(struct mustache_partials *p, const char *dir)
{
	mustache_partials_init(p, dir_load, p);
	p->dir = xstrdup(dir);
}

void mustache_partials_release(struct mustache_partials *p)
{
	if (p->cache) {
		for (size_t i = 0; i < p->cache->cap; i++) {
			struct pentry *e = &p->cache->tab[i];
			if (!e->name)
				continue;
			free(e->name);
			if (e->tpl) {
				mustache_release(e->tpl);
				free(e->tpl);
			}
		}
		free(p->cache->tab);
		free(p->cache);
	}
	free(p->dir);
	memset(p, 0, sizeof(*p));
}

static struct pentry *slot_for(struct mustache_pcache *c, const char *name, uint64_t h)
{
	size_t i = (size_t)h & (c->cap - 1);

	while (c->tab[i].name && (c->tab[i].hash != h || strcmp(c->tab[i].name, name)))
		i = (i + 1) & (c->cap - 1);
	return &c->tab[i];
}

static void grow(struct mustache_pcache *c)
{
	struct pentry *old = c->tab;
	size_t oldcap = c->cap;

	c->cap = c->cap ? c->cap * 2 : 64;
	c->tab = xcalloc(c->cap, sizeof(*c->tab));
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].name)
			*slot_for(c, old[i].name, old[i].hash) = old[i];
	free(old);
}

int mustache_partial_get(const struct mustache_partials *p, const char *name,
			 const struct mustache_tpl **tpl, struct buf *err)
{
	struct mustache_pcache *c = p->cache;
	uint64_t h = fnv1a(name);
	struct pentry *e;
	struct buf text = BUF_INIT, e2 = BUF_INIT;
	struct mustache_tpl *t = NULL;
	int found = 0, ret = -1;

	*tpl = NULL;
	if (c->cap) {
		e = slot_for(c, name, h);
		if (e->name) {
			*tpl = e->tpl;
			return 0;
		}
	}
	if (c->n >= MUSTACHE_MAX_PARTIALS)
		return kf_err(err, "more than %d distinct partials", MUSTACHE_MAX_PARTIALS);
	if (p->fn(p->ud, name, &text, &found, &e2) < 0) {
		kf_err(err, "partial '%.64s': %s", name, e2.s);
		goto out;
	}
	if (found) {
		if (text.len > p->max_size) {
			kf_err(err, "partial '%.64s' is over the limit of %zu bytes", name, p->max_size);
			goto out;
		}
		t = xmalloc(sizeof(*t));
		mustache_init(t);
		if (p->dir) {
			struct buf path = BUF_INIT;
			buf_addf(&path, "%s/%s.mustache", p->dir, name);
			mustache_set_name(t, path.s);
			buf_release(&path);
		} else {
			mustache_set_name(t, name);
		}
		if (mustache_compile(t, text.s, text.len, err) < 0) {
			mustache_release(t);
			free(t);
			goto out;
		}
	}
	if ((c->n + 1) * 2 > c->cap)
		grow(c);
	e = slot_for(c, name, h);
	e->name = xstrdup(name);
	e->hash = h;
	e->tpl = t;
	c->n++;
	*tpl = t;
	ret = 0;
out:
	buf_release(&text);
	buf_release(&e2);
	return ret;
}
