/* The graph template's double-precision path (param f64, for problems whose
 * fp32 forward misses the double reference: spec "ill_conditioned"). The
 * fp32 rendering is rewritten token by token, so the two never diverge in
 * what they compute: in the kernels every `float` becomes `double`, the
 * float math functions their double forms (expf: exp) and float literals
 * lose their suffix; the scratch buffers are declared double; each float32
 * input is copied into its part of one double buffer f64_io (the engine
 * allows 64 scratch buffers, a net has hundreds of weights) by a first
 * kernel, the graph writes its result into the output's part and a last
 * kernel rounds it into the float32 output. What has no double form here (vector types, half, bit
 * casts, fast-math and tensor-core intrinsics) is refused, never left in
 * fp32; the tensor-core emitters are off (render_pass ignores tc). The
 * dmma kernels (builtin_graph_dmma.c) are double already; their mma helper
 * goes in after the header line, past the rewriting. */
#include "kernels/graph/builtin_graph.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/graph_f64_cuh.h"

#define F64_IO "f64_io"
#define F64_LAUNCH "\n/*@launch\n"
#define F64_END "@*/\n"

static const char *const promote[][2] = {
	{ "float", "double" }, { "expf", "exp" }, { "__expf", "exp" }, { "exp2f", "exp2" },
	{ "expm1f", "expm1" }, { "logf", "log" }, { "__logf", "log" }, { "log2f", "log2" },
	{ "log1pf", "log1p" }, { "powf", "pow" }, { "__powf", "pow" }, { "sqrtf", "sqrt" },
	{ "rsqrtf", "rsqrt" }, { "cbrtf", "cbrt" }, { "tanhf", "tanh" }, { "sinhf", "sinh" },
	{ "coshf", "cosh" }, { "sinf", "sin" }, { "cosf", "cos" }, { "tanf", "tan" },
	{ "atanf", "atan" }, { "atan2f", "atan2" }, { "asinf", "asin" }, { "acosf", "acos" },
	{ "erff", "erf" }, { "erfcf", "erfc" }, { "fmaf", "fma" }, { "fabsf", "fabs" },
	{ "fmaxf", "fmax" }, { "fminf", "fmin" }, { "fmodf", "fmod" }, { "floorf", "floor" },
	{ "ceilf", "ceil" }, { "roundf", "round" }, { "truncf", "trunc" },
	{ "copysignf", "copysign" }, { "hypotf", "hypot" },
};

/* The double form of identifier w[0..n): its replacement, w itself (in tmp)
 * where it is type-neutral, NULL where it has none. __int_as_float stays:
 * it makes infinities, exact in double too. */
static const char *promoted(const char *w, size_t n, char *tmp, size_t tn)
{
	static const char *const bad[] = { "float", "half", "bf16", "bfloat", "wmma", "tf32", NULL };

	for (size_t i = 0; i < sizeof(promote) / sizeof(promote[0]); i++)
		if (strlen(promote[i][0]) == n && !memcmp(promote[i][0], w, n))
			return promote[i][1];
	if (n >= tn)
		return NULL;
	memcpy(tmp, w, n);
	tmp[n] = 0;
	if (!strcmp(tmp, "__int_as_float"))
		return tmp;
	for (int i = 0; bad[i]; i++)
		if (strstr(tmp, bad[i]))
			return NULL;
	if (!strcmp(tmp, "asm") || !strcmp(tmp, "reinterpret_cast") ||
	    (n > 3 && !strncmp(tmp, "__", 2) && tmp[n - 1] == 'f'))
		return NULL;
	return tmp;
}

static int id_start(int c)
{
	return isalpha(c) || c == '_';
}

static int id_char(int c)
{
	return isalnum(c) || c == '_';
}

/* The kernels' text s[0..n) in double into o. */
static int rewrite_code(const char *s, size_t n, struct buf *o, struct buf *err)
{
	char tmp[128];
	size_t i = 0, e;

	while (i < n) {
		const char c = s[i];
		e = i + 1;
		if (c == '/' && e < n && s[e] == '/') {
			while (e < n && s[e] != '\n')
				e++;
		} else if (c == '/' && e < n && s[e] == '*') {
			for (e = i + 2; e + 1 < n && !(s[e] == '*' && s[e + 1] == '/'); e++)
				;
			e = e + 1 < n ? e + 2 : n;
		} else if (c == '"' || c == '\'') {
			while (e < n && s[e] != c)
				e += s[e] == '\\' ? 2 : 1;
			e = e < n ? e + 1 : n;
		} else if (id_start((unsigned char)c)) {
			const char *r;
			while (e < n && id_char((unsigned char)s[e]))
				e++;
			if (!(r = promoted(s + i, e - i, tmp, sizeof(tmp))))
				return kf_err(err, "graph: f64: '%.*s' has no double form here", (int)(e - i > 64 ? 64 : e - i),
					      s + i);
			buf_adds(o, r);
			i = e;
			continue;
		} else if (isdigit((unsigned char)c) || (c == '.' && e < n && isdigit((unsigned char)s[e]))) {
			/* a pp-number: a float literal's f suffix goes */
			const int hex = c == '0' && e < n && (s[e] == 'x' || s[e] == 'X');
			int real = c == '.';
			while (e < n && (id_char((unsigned char)s[e]) || s[e] == '.')) {
				real |= s[e] == '.' || (!hex && (s[e] == 'e' || s[e] == 'E'));
				if (!hex && (s[e] == 'e' || s[e] == 'E') && e + 1 < n && (s[e + 1] == '+' || s[e + 1] == '-'))
					e++;
				e++;
			}
			buf_add(o, s + i, e - i - (!hex && real && (s[e - 1] == 'f' || s[e - 1] == 'F')));
			i = e;
			continue;
		}
		buf_add(o, s + i, e - i);
		i = e;
	}
	return 0;
}

/* The tensors moved to double buffers: the float32 inputs and the output. */
static int moved(const struct gr_plan *p, int k)
{
	return (p->t[k].spec && !p->t[k].is_bool) || k == p->n[p->nn - 1].out;
}

/* A launch block's line with every moved tensor k's name among a launch's
 * arguments replaced by its part of f64_io (off[k]); kernel names, grids
 * and loop heads as they are. */
static void rename_line(const struct gr_plan *p, const long long *off, const char *s, size_t n,
			struct buf *o)
{
	size_t i = 0, e;

	for (; i + 4 <= n && memcmp(s + i, ">>>(", 4); i++)
		;
	i = i + 4 <= n ? i + 4 : n;
	buf_add(o, s, i);
	while (i < n) {
		e = i + 1;
		if (s[i] == '/' && e < n && s[e] == '/') {
			buf_add(o, s + i, n - i);
			return;
		}
		if (id_start((unsigned char)s[i]) || isdigit((unsigned char)s[i])) {
			int k;
			while (e < n && id_char((unsigned char)s[e]))
				e++;
			for (k = 0; id_start((unsigned char)s[i]) && k < p->nt; k++)
				if (moved(p, k) && strlen(p->t[k].name) == e - i && !memcmp(p->t[k].name, s + i, e - i))
					break;
			if (id_start((unsigned char)s[i]) && k < p->nt) {
				buf_addf(o, F64_IO " + %lld", off[k]);
				i = e;
				continue;
			}
		}
		buf_add(o, s + i, e - i);
		i = e;
	}
}

static void convert_launch(struct buf *o, const char *name, long long off, long long n, int in)
{
	buf_addf(o, "gf64_%s<<<min(ceil_div(%lld, 256), 65536), 256>>>(", in ? "in" : "out", n);
	if (in)
		buf_addf(o, "%s, " F64_IO " + %lld, %lld);\n", name, off, n);
	else
		buf_addf(o, F64_IO " + %lld, %s, %lld);\n", off, name, n);
}

int gr_f64_promote(const struct gr_plan *p, struct buf *s, struct buf *err)
{
	const json_t *sizes = json_object_get(p->spec, "sizes");
	const char *l = strstr(s->s, F64_LAUNCH), *end, *q;
	const int out = p->n[p->nn - 1].out;
	struct buf o = BUF_INIT;
	long long total = 0, io = 0, *off;
	int rc, decl = 0;

	if (!l || s->len < strlen(F64_END) || strcmp(s->s + s->len - strlen(F64_END), F64_END))
		return kf_err(err, "graph: f64: no launch block");
	for (int j = 0; j < p->nt; j++)
		if (!strcmp(p->t[j].name, F64_IO))
			return kf_err(err, "graph: f64: a tensor is named " F64_IO);
	if (json_object_get(sizes, F64_IO))
		return kf_err(err, "graph: f64: a size is named " F64_IO);
	if (!(off = calloc((size_t)p->nt, sizeof(*off))))
		return kf_err(err, "out of memory");
	for (int k = 0; k < p->nt; k++)
		if (moved(p, k)) {
			off[k] = io;
			io += p->t[k].numel;
		}
	total = io * 8;
	for (int b = 0; b < p->nbuf; b++)
		total += p->buf_cap[b] * 8;
	if (total > GR_MAX_SCRATCH)
		rc = kf_err(err, "graph: f64: %lld bytes of scratch, over the engine's 8 GiB", total);
	else {
		/* the header line, the mma helper the dmma kernels call (its asm has no
		 * rewriting), then the kernels */
		const char *nl = memchr(s->s, '\n', (size_t)(l - s->s));
		size_t h = nl ? (size_t)(nl + 1 - s->s) : 0;
		rc = rewrite_code(s->s, h, &o, err);
		if (!rc && strstr(s->s, "gf64_dmma("))
			bt_cuh_section(&o, graph_f64_cuh, "dmma");
		if (!rc)
			rc = rewrite_code(s->s + h, (size_t)(l - s->s) - h, &o, err);
	}
	if (rc) {
		free(off);
		buf_release(&o);
		return rc;
	}
	buf_adds(&o, "\n");
	bt_cuh_fill(&o, graph_f64_cuh, "convert", "NAME", "gf64_in", "FROM", "float", "TO", "double", NULL);
	bt_cuh_fill(&o, graph_f64_cuh, "convert", "NAME", "gf64_out", "FROM", "double", "TO", "float", NULL);
	buf_adds(&o, F64_LAUNCH + 1);
	end = s->s + s->len - strlen(F64_END);
	for (q = l + strlen(F64_LAUNCH); q <= end; q++) {
		const char *nl = q < end ? memchr(q, '\n', (size_t)(end - q)) : NULL;
		size_t n = nl ? (size_t)(nl - q) : (size_t)(end - q);
		if (n >= 8 && !strncmp(q, "scratch ", 8)) {
			if (n >= 14 && !strncmp(q, "scratch float ", 14))
				buf_addf(&o, "scratch double %.*s\n", (int)(n - 14), q + 14);
			else
				buf_addf(&o, "%.*s\n", (int)n, q);
		} else {
			if (!decl) {
				decl = 1;
				buf_addf(&o, "scratch double " F64_IO "[%lld];\n", io);
				for (int k = 0; k < p->nt; k++)
					if (moved(p, k) && k != out)
						convert_launch(&o, p->t[k].name, off[k], p->t[k].numel, 1);
			}
			if (q == end)
				break;
			rename_line(p, off, q, n, &o);
			buf_adds(&o, "\n");
		}
		if (!nl)
			break;
		q = nl;
	}
	convert_launch(&o, p->t[out].name, off[out], p->t[out].numel, 0);
	free(off);
	buf_adds(&o, F64_END);
	buf_reset(s);
	buf_add(s, o.s, o.len);
	buf_release(&o);
	return 0;
}
