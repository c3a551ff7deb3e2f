/* The graph template's kernels, deduplicated. gr_kernel records each kernel
 * and leaves a marker in the source and the launch block; gr_dedup_finish
 * writes them out. A kernel whose text (defines, signature, body) equals
 * one already recorded is not written again: its launches name the first.
 * Kernels that differ only in integer constants (sizes in `123LL`
 * literals, `const int NB = 8, ...` geometry, `/ 123.0` divisors) form a
 * family; where the source is over its budget (deep
 * level-3 nets: ResNet101's blocks, DenseNet's layers, an unrolled RNN),
 * the families that save most become one kernel each whose differing
 * constants are arguments (`lcK`). A family written once keeps its literal
 * constants, which the compiler folds. Comments do not count (they name
 * tensors): a shared kernel keeps its first user's. */
#include "kernels/graph/builtin_graph.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/launch.h"

/* Markers: \1K\1 in the source, \2K\n in the launch block; in a kernel's
 * text \5 is its name, \6 the end of its parameters, \4 a comment (those
 * of the first kernel of a kind are written), \3 + kind a constant. */
enum { LV_LL = 'L', LV_DIV = 'D', LV_GEO = 'G' };

struct gr_krec {
	char *name;
	char *text;		/* pre, head, \5, (params, \6, ) body post */
	char *key;		/* the text with each comment \4: what must be equal */
	char *grid, *args;
	long long block, smem;
	unsigned long long hash;
	int same;		/* the first record of identical text (itself if new) */
	int fam;		/* its family (records with equal skeletons), -1 none */
	int out;		/* the record whose kernel it launches */
	int nparams;		/* parameters of its signature */
	long long *val;		/* constants, in order (family representatives) */
	char *skel;
	int nv;
};

static unsigned long long fnv(const char *s)
{
	unsigned long long h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int ident(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

int gr_kernel(struct gr_plan *p, const char *name, const char *params, const char *body,
	      const char *grid, long long block, const char *args, struct buf *err)
{
	struct buf t = BUF_INIT;
	struct gr_krec *r;
	int k;

	if (p->launches >= GR_MAX_LAUNCHES)
		return kf_err(err, "graph: over %d launches", GR_MAX_LAUNCHES);
	if (strchr(grid, '(') == NULL && atoll(grid) >= (1LL << 31))
		return kf_err(err, "graph: %s: grid of %s blocks", name, grid);
	if (p->nkr == p->kcap) {
		int cap = p->kcap ? 2 * p->kcap : 64;
		struct gr_krec *n = realloc(p->kr, (size_t)cap * sizeof(*n));
		if (!n)
			return kf_err(err, "out of memory");
		p->kr = n;
		p->kcap = cap;
	}
	r = &p->kr[p->nkr];
	memset(r, 0, sizeof(*r));
	buf_addf(&t, "%sextern \"C\" __global__ void %s\5(%s\6)\n{\n%s}\n\n%s", p->pre ? p->pre : "",
		 p->qual ? p->qual : "", params, body, p->post ? p->post : "");
	r->text = buf_detach(&t, NULL);
	r->name = dup_str(name);
	r->grid = dup_str(grid);
	r->args = dup_str(args);
	if (!r->text || !r->name || !r->grid || !r->args) {
		free(r->text);
		free(r->name);
		free(r->grid);
		free(r->args);
		return kf_err(err, "out of memory");
	}
	for (const char *c = r->text; *c; c++) {
		const char *e = c[0] == '/' && c[1] == '*' ? strstr(c + 2, "*/") : NULL;
		if (e) {
			buf_addc(&t, '\4');
			c = e + 1;
		} else {
			buf_addc(&t, *c);
		}
	}
	if (!(r->key = buf_detach(&t, NULL))) {
		free(r->text);
		free(r->name);
		free(r->grid);
		free(r->args);
		return kf_err(err, "out of memory");
	}
	r->block = block;
	r->smem = p->smem;
	r->hash = fnv(r->key);
	r->same = p->nkr;
	r->fam = -1;
	r->nparams = !!*params;
	for (const char *c = params; *c; c++)
		r->nparams += *c == ',';
	for (k = 0; p->dedup && k < p->nkr; k++)
		if (p->kr[k].same == k && p->kr[k].hash == r->hash && !strcmp(p->kr[k].key, r->key)) {
			r->same = k;
			break;
		}
	if (r->same == p->nkr)	/* the source so far, for gr_tc_fits */
		p->kbytes += strlen(r->text) + strlen(name);
	buf_addf(&p->src, "\1%d\1", p->nkr);
	buf_addf(&p->launch, "\2%d\n", p->nkr);
	p->nkr++;
	p->qual = p->pre = p->post = NULL;
	p->smem = 0;
	p->launches++;
	return 0;
}

int gr_array(struct gr_plan *p, const char *type, const char *prefix, int gi, size_t n,
	     const char *vals, char *name, size_t nn, struct buf *err)
{
	struct buf t = BUF_INIT;
	char *v;

	buf_addf(&t, "%s[%zu] = {%s};\n", type, n, vals);
	for (int k = 0; p->dedup && k < p->narr; k++)
		if (!strcmp(p->arr[k].text, t.s)) {
			snprintf(name, nn, "%s", p->arr[k].name);
			buf_release(&t);
			return 0;
		}
	snprintf(name, nn, "%s%d", prefix, gi);
	buf_addf(&p->src, "__device__ const %s %s[%zu] = {%s};\n", type, name, n, vals);
	if (p->narr == p->acap) {
		int cap = p->acap ? 2 * p->acap : 16;
		struct gr_array *a = realloc(p->arr, (size_t)cap * sizeof(*a));
		if (!a) {
			buf_release(&t);
			return kf_err(err, "out of memory");
		}
		p->arr = a;
		p->acap = cap;
	}
	if (!(v = buf_detach(&t, NULL)))
		return kf_err(err, "out of memory");
	p->arr[p->narr].text = v;
	snprintf(p->arr[p->narr++].name, sizeof(p->arr[0].name), "%s", name);
	return 0;
}

void gr_dedup_release(struct gr_plan *p)
{
	for (int k = 0; k < p->narr; k++)
		free(p->arr[k].text);
	free(p->arr);
	p->arr = NULL;
	p->narr = p->acap = 0;
	for (int k = 0; k < p->nkr; k++) {
		free(p->kr[k].text);
		free(p->kr[k].key);
		free(p->kr[k].name);
		free(p->kr[k].grid);
		free(p->kr[k].args);
		free(p->kr[k].val);
		free(p->kr[k].skel);
	}
	free(p->kr);
	p->kr = NULL;
	p->nkr = p->kcap = 0;
}

/* A digit run at s[i] (not inside an identifier or a number) that is a
 * constant: its kind and length, else 0. */
static int constant_at(const char *s, size_t i, size_t line, size_t *len)
{
	size_t j = i;

	if (i > 0 && (ident(s[i - 1]) || s[i - 1] == '.'))
		return 0;
	while (s[j] >= '0' && s[j] <= '9')
		j++;
	if (j == i || j - i > 18 || (s[i] == '0' && j - i > 1))
		return 0;
	*len = j - i;
	if (s[j] == 'L' && s[j + 1] == 'L' && !ident(s[j + 2])) {
		*len += 2;
		return LV_LL;
	}
	if (s[j] == '.' && s[j + 1] == '0' && !ident(s[j + 2]) && s[j + 2] != '.') {
		*len += 2;
		return LV_DIV;
	}
	if ((s[j] == ',' || s[j] == ';') && i >= 2 && s[i - 1] == ' ' && s[i - 2] == '=' &&
	    !strncmp(s + line, "    const int ", 14) && strtoll(s + i, NULL, 10) <= INT_MAX)
		return LV_GEO;
	return 0;
}

/* The record's skeleton (constants as \3 + kind) and their values. */
static int lift_scan(struct gr_krec *r)
{
	const char *s = r->key;
	struct buf sk = BUF_INIT;
	size_t i = 0, line = 0, len, cap = 0;
	int kind;

	while (s[i]) {
		if (s[i] >= '0' && s[i] <= '9' && (kind = constant_at(s, i, line, &len))) {
			if ((size_t)r->nv == cap) {
				long long *v;
				cap = cap ? 2 * cap : 16;
				v = realloc(r->val, cap * sizeof(*v));
				if (!v) {
					buf_release(&sk);
					return -1;
				}
				r->val = v;
			}
			r->val[r->nv++] = strtoll(s + i, NULL, 10);
			buf_addc(&sk, '\3');
			buf_addc(&sk, (char)kind);
			i += len;
			continue;
		}
		if (s[i] == '\n')
			line = i + 1;
		buf_addc(&sk, s[i++]);
	}
	r->skel = buf_detach(&sk, NULL);
	return r->skel ? 0 : -1;
}

/* A family: its representatives (records of distinct text) and, once
 * lifted, the parameter of each constant (par[v]: lcK, or -1: literal). */
struct fam {
	int *rep, nrep, cap;
	int *par, npar;
	char ptype[LAUNCH_MAX_ARGS];
	long long save;
	int lifted;
};

/* Writes record r's kernel as `name`: constants literal, or, in lifted
 * family f, those that vary as parameters. */
static void write_kernel(struct buf *o, const struct gr_krec *r, const char *name, const struct fam *f)
{
	const char *s = f ? r->skel : r->key, *c = r->text;
	int v = 0;

	for (; *s; s++) {
		if (*s == '\4') {	/* the next comment of the text */
			const char *e;
			c = strstr(c, "/*");
			e = strstr(c + 2, "*/") + 2;
			buf_add(o, c, (size_t)(e - c));
			c = e;
		} else if (*s == '\5') {
			buf_adds(o, name);
		} else if (*s == '\6') {
			for (int k = 0; f && k < f->npar; k++)
				buf_addf(o, "%s%s lc%d", r->nparams || k ? ", " : "",
					 f->ptype[k] == LV_GEO ? "int" : "long long", k);
		} else if (*s == '\3' && f) {
			int kind = *++s, pk = f->par[v];
			long long x = r->val[v++];
			if (pk < 0)
				buf_addf(o, "%lld%s", x, kind == LV_LL ? "LL" : kind == LV_DIV ? ".0" : "");
			else
				buf_addf(o, kind == LV_DIV ? "(double)lc%d" : "lc%d", pk);
		} else {
			buf_addc(o, *s);
		}
	}
}

/* The launch of record r: the kernel it runs, and the values of the
 * lifted constants. */
static void write_launch(struct buf *o, const struct gr_plan *p, int r, const struct fam *fams)
{
	const struct gr_krec *k = &p->kr[r], *rep = &p->kr[k->same];
	const struct fam *f = rep->fam >= 0 && fams[rep->fam].lifted ? &fams[rep->fam] : NULL;

	buf_addf(o, "%s<<<%s, %lld", p->kr[k->out].name, k->grid, k->block);
	if (k->smem)
		buf_addf(o, ", %lld", k->smem);
	buf_addf(o, ">>>(%s", k->args);
	for (int q = 0; f && q < f->npar; q++)
		for (int v = 0; v < rep->nv; v++)
			if (f->par[v] == q) {
				buf_addf(o, "%s%lld", *k->args || q ? ", " : "", rep->val[v]);
				break;
			}
	buf_adds(o, ");\n");
}

/* Sets par of family f: constants that vary among its representatives
 * become parameters (equal columns share one); 0, or -1 past the launch
 * block's argument limit. */
static int plan_params(const struct gr_plan *p, struct fam *f)
{
	const struct gr_krec *r0 = &p->kr[f->rep[0]];
	int v = 0;

	f->npar = 0;
	for (const char *s = r0->skel; *s; s++) {
		int kind, vary = 0, pk = -1;
		char ty;
		if (*s != '\3')
			continue;
		kind = *++s;
		ty = kind == LV_GEO ? LV_GEO : LV_LL;
		for (int i = 1; i < f->nrep && !vary; i++)
			vary = p->kr[f->rep[i]].val[v] != r0->val[v];
		if (vary) {
			for (int u = 0; u < v && pk < 0; u++) {
				int eq = f->par[u] >= 0 && f->ptype[f->par[u]] == ty;
				for (int i = 0; eq && i < f->nrep; i++)
					eq = p->kr[f->rep[i]].val[u] == p->kr[f->rep[i]].val[v];
				if (eq)
					pk = f->par[u];
			}
			if (pk < 0) {
				if (f->npar + r0->nparams >= LAUNCH_MAX_ARGS)
					return -1;
				pk = f->npar++;
				f->ptype[pk] = ty;
			}
		}
		f->par[v++] = pk;
	}
	return 0;
}

/* The source and the launch block with their markers replaced. */
static void build_out(const struct gr_plan *p, const struct fam *fams, struct buf *src,
		      struct buf *launch)
{
	const char *s;

	for (s = p->src.s; s && *s; s++) {
		if (*s != '\1') {
			buf_addc(src, *s);
			continue;
		}
		char *end;
		int r = (int)strtol(s + 1, &end, 10);
		const struct gr_krec *k = &p->kr[r];
		const struct fam *f = k->fam >= 0 && fams[k->fam].lifted ? &fams[k->fam] : NULL;
		if (k->out == r)
			write_kernel(src, k, k->name, f);
		s = end;
	}
	for (s = p->launch.s; s && *s; s++) {
		if (*s != '\2') {
			buf_addc(launch, *s);
			continue;
		}
		char *end;
		write_launch(launch, p, (int)strtol(s + 1, &end, 10), fams);
		s = end;
	}
}

static void write_out(struct gr_plan *p, const struct fam *fams)
{
	struct buf src = BUF_INIT, launch = BUF_INIT;

	build_out(p, fams, &src, &launch);
	buf_release(&p->src);
	buf_release(&p->launch);
	p->src = src;
	p->launch = launch;
}

static void free_fams(struct fam *fams, int n)
{
	for (int i = 0; i < n; i++) {
		free(fams[i].rep);
		free(fams[i].par);
	}
	free(fams);
}

/* Families of the distinct kernels (dedup >= 2); their count, or -1. */
static int find_fams(struct gr_plan *p, struct fam **out)
{
	struct fam *fams = calloc((size_t)p->nkr + 1, sizeof(*fams));
	unsigned long long *h = calloc((size_t)p->nkr + 1, sizeof(*h));
	int nf = 0;

	if (!fams || !h)
		goto fail;
	for (int r = 0; r < p->nkr; r++) {
		struct gr_krec *k = &p->kr[r];
		struct fam *f = NULL;
		unsigned long long hs;
		int i;
		if (k->same != r)
			continue;
		if (lift_scan(k))
			goto fail;
		hs = fnv(k->skel);
		for (i = 0; i < nf; i++)
			if (h[i] == hs && !strcmp(p->kr[fams[i].rep[0]].skel, k->skel))
				break;
		if (i == nf) {
			h[nf++] = hs;
		}
		f = &fams[i];
		if (f->nrep == f->cap) {
			int cap = f->cap ? 2 * f->cap : 4, *n = realloc(f->rep, (size_t)cap * sizeof(int));
			if (!n)
				goto fail;
			f->rep = n;
			f->cap = cap;
		}
		f->rep[f->nrep++] = r;
		k->fam = i;
		if (!f->par && !(f->par = calloc((size_t)k->nv + 1, sizeof(int))))
			goto fail;
	}
	free(h);
	*out = fams;
	return nf;
fail:
	free(h);
	if (fams)
		free_fams(fams, nf + 1);
	return -1;
}

/* About how many bytes lifting family f saves: its kernels less the one
 * lifted, less the arguments its launches gain. */
static long long lift_saving(struct gr_plan *p, struct fam *f, int fi)
{
	const struct gr_krec *r0 = &p->kr[f->rep[0]];
	struct buf b = BUF_INIT;
	long long save = 0;

	for (int i = 0; i < f->nrep; i++)
		save += (long long)strlen(p->kr[f->rep[i]].text) + (long long)strlen(p->kr[f->rep[i]].name);
	write_kernel(&b, r0, r0->name, f);
	save -= (long long)b.len;
	for (int r = 0; r < p->nkr; r++) {
		const struct gr_krec *rep = &p->kr[p->kr[r].same];
		if (rep->fam != fi)
			continue;
		for (int q = 0; q < f->npar; q++)
			for (int v = 0; v < rep->nv; v++)
				if (f->par[v] == q) {
					buf_reset(&b);
					buf_addf(&b, ", %lld", rep->val[v]);
					save -= (long long)b.len;
					break;
				}
	}
	buf_release(&b);
	return save;
}

static int by_saving(const void *a, const void *b)
{
	const struct fam *x = *(struct fam *const *)a, *y = *(struct fam *const *)b;

	return x->save < y->save ? 1 : x->save > y->save ? -1 : 0;
}

/* Which kernel each launch runs; the source's size with the families
 * lifted so far. */
static long long place(struct gr_plan *p, const struct fam *fams)
{
	struct buf a = BUF_INIT, b = BUF_INIT;
	long long size;

	for (int r = 0; r < p->nkr; r++) {
		const struct gr_krec *rep = &p->kr[p->kr[r].same];
		p->kr[r].out = rep->fam >= 0 && fams[rep->fam].lifted ? fams[rep->fam].rep[0] : p->kr[r].same;
	}
	build_out(p, fams, &a, &b);
	size = (long long)(a.len + b.len);
	buf_release(&a);
	buf_release(&b);
	return size;
}

int gr_dedup_finish(struct gr_plan *p, struct buf *err)
{
	struct fam *fams = NULL, **order = NULL;
	int nf, n = 0, all = p->dedup >= 3;
	long long size;

	for (int r = 0; r < p->nkr; r++)
		p->kr[r].out = p->kr[r].same;
	if (p->dedup < 2 || p->nkr < 2) {
		write_out(p, NULL);
		return 0;
	}
	if ((nf = find_fams(p, &fams)) < 0 || !(order = malloc((size_t)(nf + 1) * sizeof(*order)))) {
		if (nf >= 0)
			free_fams(fams, nf + 1);
		return kf_err(err, "out of memory");
	}
	/* identical kernels once; then the families that save most, while
	 * over the budget (the savings are estimates: measured again) */
	size = place(p, fams);
	for (int i = 0; i < nf; i++) {
		if (fams[i].nrep < 2 || plan_params(p, &fams[i]))
			continue;
		fams[i].save = lift_saving(p, &fams[i], i);
		if (fams[i].save > 0 || all)
			order[n++] = &fams[i];
	}
	qsort(order, (size_t)n, sizeof(*order), by_saving);
	for (int i = 0; i < n && (all || size > p->src_budget); i++) {
		order[i]->lifted = 1;
		size -= order[i]->save;
		if (size <= p->src_budget || i == n - 1)
			size = place(p, fams);
	}
	place(p, fams);
	write_out(p, fams);
	free(order);
	free_fams(fams, nf + 1);
	return 0;
}
