/* The CPU oracle: context, inputs, dispatch by family, output sampling,
 * and the shared helpers (memo, threaded full-tensor passes). */
#include "oracle/oracle_int.h"
#include "core/xalloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct memo_ent {
	long long key;   /* -1: empty */
	double *v;
};

struct memo {
	struct memo_ent *e;
	size_t cap, used;
};

static void memo_free(void *m_)
{
	struct memo *m = m_;
	for (size_t i = 0; i < m->cap; i++)
		free(m->e[i].v);
	free(m->e);
	free(m);
}

static size_t memo_hash(long long k, size_t cap)
{
	unsigned long long h = (unsigned long long)k * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 20) & (cap - 1);
}

static void memo_insert(struct memo *m, long long key, double *v)
{
	size_t i = memo_hash(key, m->cap);
	while (m->e[i].key != -1)
		i = (i + 1) & (m->cap - 1);
	m->e[i].key = key;
	m->e[i].v = v;
	m->used++;
}

static void memo_grow(struct memo *m)
{
	struct memo_ent *old = m->e;
	size_t oldcap = m->cap;

	m->cap = oldcap ? 2 * oldcap : 256;
	m->e = xmalloc(m->cap * sizeof(*m->e));
	for (size_t i = 0; i < m->cap; i++)
		m->e[i].key = -1, m->e[i].v = NULL;
	m->used = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].key != -1)
			memo_insert(m, old[i].key, old[i].v);
	free(old);
}

double *oracle_memo(struct oracle_ctx *c, long long key, int n, int *fresh)
{
	struct memo *m = c->cache;
	size_t i;

	if (!m) {
		m = xcalloc(1, sizeof(*m));
		memo_grow(m);
		c->cache = m;
		c->cache_free = memo_free;
	}
	for (i = memo_hash(key, m->cap); m->e[i].key != -1; i = (i + 1) & (m->cap - 1))
		if (m->e[i].key == key) {
			*fresh = 0;
			return m->e[i].v;
		}
	if (2 * (m->used + 1) > m->cap)
		memo_grow(m);
	double *v = xcalloc((size_t)n, sizeof(double));
	memo_insert(m, key, v);
	*fresh = 1;
	return v;
}

void oracle_ctx_init_draw(struct oracle_ctx *c, const struct problem *p, unsigned long long seed,
			  const struct inputs_draw *d)
{
	memset(c, 0, sizeof(*c));
	c->p = p;
	c->seed = seed;
	inputs_gen_init_draw(&c->gen, p, seed, d);
}

void oracle_ctx_init(struct oracle_ctx *c, const struct problem *p, unsigned long long seed)
{
	oracle_ctx_init_draw(c, p, seed, NULL);
}

void oracle_ctx_release(struct oracle_ctx *c)
{
	if (c->cache && c->cache_free)
		c->cache_free(c->cache);
	inputs_gen_release(&c->gen);
	memset(c, 0, sizeof(*c));
}

double oracle_input(struct oracle_ctx *c, int t, long long i)
{
	return inputs_value(&c->gen, t, i);
}

const char *oracle_attr_str(const struct oracle_ctx *c, const char *key)
{
	json_t *a = json_object_get(c->p->spec, "attrs");
	json_t *v = json_object_get(a, key);
	return json_is_string(v) ? json_string_value(v) : "";
}

double oracle_attr_num(const struct oracle_ctx *c, const char *key, double def)
{
	json_t *a = json_object_get(c->p->spec, "attrs");
	json_t *v = json_object_get(a, key);
	return json_is_number(v) ? json_number_value(v) : def;
}

int oracle_unknown_op(const struct oracle_ctx *c, struct buf *err)
{
	return kf_err(err, "%s: oracle family \"%s\" has no op \"%s\" (spec attrs.op)", c->p->id,
		      c->p->family, oracle_attr_str(c, "op"));
}

void oracle_unravel(const struct problem_tensor *t, long long flat, long long *coord)
{
	for (int d = t->ndim - 1; d >= 0; d--) {
		coord[d] = flat % t->shape[d];
		flat /= t->shape[d];
	}
}

struct par_job {
	struct inputs_gen gen;
	long long lo, hi;
	oracle_acc_fn fn;
	const void *arg;
	double acc[8];
};

static void *par_run(void *j_)
{
	struct par_job *j = j_;
	for (long long k = j->lo; k < j->hi; k++)
		j->fn(&j->gen, k, j->arg, j->acc);
	return NULL;
}

void oracle_par_acc(struct oracle_ctx *c, long long n, oracle_acc_fn fn, const void *arg,
		    double *acc, int nacc)
{
	long nt = c->threads > 0 ? c->threads : sysconf(_SC_NPROCESSORS_ONLN);
	struct par_job *jobs;
	pthread_t *th;

	if (nt < 1)
		nt = 1;
	if (nt > 64)
		nt = 64;
	if (n < (1 << 16))
		nt = 1;
	jobs = xcalloc((size_t)nt, sizeof(*jobs));
	th = xcalloc((size_t)nt, sizeof(*th));
	for (long t = 0; t < nt; t++) {
		inputs_gen_fork(&jobs[t].gen, &c->gen);
		jobs[t].lo = n * t / nt;
		jobs[t].hi = n * (t + 1) / nt;
		jobs[t].fn = fn;
		jobs[t].arg = arg;
	}
	for (long t = 1; t < nt; t++)
		if (pthread_create(&th[t], NULL, par_run, &jobs[t]) != 0)
			par_run(&jobs[t]), th[t] = 0;
	par_run(&jobs[0]);
	for (long t = 1; t < nt; t++)
		if (th[t])
			pthread_join(th[t], NULL);
	for (long t = 0; t < nt; t++) {
		for (int k = 0; k < nacc && k < 8; k++)
			acc[k] += jobs[t].acc[k];
		inputs_gen_release(&jobs[t].gen);
	}
	free(jobs);
	free(th);
}

static const struct {
	const char *family;
	oracle_fn fn;
} families[] = {
	{ "elementwise", oracle_elementwise }, { "reduce", oracle_reduce },
	{ "norm", oracle_norm },               { "loss", oracle_loss },
	{ "scan", oracle_scan },               { "attention", oracle_attention },
	{ "matmul", oracle_matmul },           { "conv", oracle_conv },
	{ "pool", oracle_pool },                { "graph", oracle_graph },
};

int oracle_value(struct oracle_ctx *c, int out, long long flat, double *v, struct buf *err)
{
	const struct problem *p = c->p;

	if (out < 0 || out >= p->n_out)
		return kf_err(err, "%s: no output %d", p->id, out);
	if (flat < 0 || flat >= p->t[p->n_in + out].numel)
		return kf_err(err, "%s: index %lld outside output %s", p->id, flat,
			      p->t[p->n_in + out].name);
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (!strcmp(p->family, families[i].family))
			return families[i].fn(c, out, flat, v, err);
	return kf_err(err, "%s: no oracle for family \"%s\"", p->id, p->family);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

static unsigned long long mix64(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* First and last elements; for each dim, each of its values when it has at
 * most 128 (every channel/row class), else 0, 1, middle, last-1, last (with
 * random other coordinates); then random points. Sorted, unique. */
int oracle_sample(const struct problem *p, int out, unsigned long long seed, long long *idx,
		  int max)
{
	const struct problem_tensor *t;
	unsigned long long rs = seed ^ 0x5DEECE66Dull;
	int n = 0, m;

	if (out < 0 || out >= p->n_out || max <= 0)
		return 0;
	if (!strcmp(p->family, "graph") && (n = oracle_graph_sample(p, out, seed, idx, max)) >= 0)
		return n;
	n = 0;
	t = &p->t[p->n_in + out];
	if (t->numel <= max) { /* small: all of it */
		for (long long i = 0; i < t->numel; i++)
			idx[i] = i;
		return (int)t->numel;
	}
	idx[n++] = 0;
	if (n < max)
		idx[n++] = t->numel - 1;
	for (int d = 0; d < t->ndim && n < max; d++) {
		long long len = t->shape[d];
		long long vals[5] = { 0, 1, len / 2, len - 2, len - 1 };
		long long nv = len <= 128 ? len : 5;
		for (long long k = 0; k < nv && n < max; k++) {
			long long v = len <= 128 ? k : vals[k];
			long long flat = 0;
			if (v < 0 || v >= len)
				continue;
			for (int e = 0; e < t->ndim; e++) {
				long long ce = e == d ? v : (long long)(mix64(&rs) % (unsigned long long)t->shape[e]);
				flat = flat * t->shape[e] + ce;
			}
			idx[n++] = flat;
		}
	}
	while (n < max && n < t->numel)
		idx[n++] = (long long)(mix64(&rs) % (unsigned long long)t->numel);
	qsort(idx, (size_t)n, sizeof(*idx), cmp_ll);
	m = 0;
	for (int i = 0; i < n; i++)
		if (m == 0 || idx[m - 1] != idx[i])
			idx[m++] = idx[i];
	return m;
}
