/* The tensor-core emitters' scratch in the graph's arena (render pass 2,
 * past GR_NAMED_BUFS buffers). Each emitter declares its own scratch
 * (a conv's repacked weights, the wgmma core's channels-last copy of x, a
 * split GEMM's partials) as `scratch float NAME[COUNT];`, and the engine
 * takes 64 declarations: DenseNet201 has about 100 tensor-core convs. Such
 * a buffer lives only during its emitter's own launches (their first
 * kernel writes it, the next reads it; the launch block runs in order), so
 * every emitter's scratch shares one region of the float arena past the
 * graph's buffers: the declarations are dropped and NAME in the emitter's
 * launches becomes `arena + OFFSET`. The region is as large as the largest
 * emitter's scratch. */
#include "kernels/graph/builtin_graph.h"

#include <string.h>

#include "kernels/builtin_util.h"

#define ARENA_MAX_DECL 8	/* declarations of one emitter (they write 1 or 2) */
#define EV_MAX_DEPTH 32

/* COUNT: integers, + - * / %, unary minus, parentheses, ceil_div, min and
 * max in checked 64-bit arithmetic, as the engine evaluates it. */
struct ev {
	const char *at;
	int bad, depth;
};

static long long ev_sum(struct ev *e);

static void ev_ws(struct ev *e)
{
	while (*e->at == ' ')
		e->at++;
}

static int ev_eat(struct ev *e, const char *tok)
{
	size_t n = strlen(tok);

	ev_ws(e);
	if (strncmp(e->at, tok, n))
		return 0;
	e->at += n;
	return 1;
}

static long long ev_atom(struct ev *e)
{
	long long v = 0, a, b;
	int f;

	ev_ws(e);
	if (++e->depth > EV_MAX_DEPTH) {
		e->bad = 1;
		return 0;
	}
	if (ev_eat(e, "-")) {
		v = -ev_atom(e);
	} else if (ev_eat(e, "(")) {
		v = ev_sum(e);
		e->bad |= !ev_eat(e, ")");
	} else if (*e->at >= '0' && *e->at <= '9') {
		while (*e->at >= '0' && *e->at <= '9' && !e->bad) {
			e->bad |= __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *e->at - '0', &v);
			e->at++;
		}
	} else if ((f = ev_eat(e, "ceil_div(") ? 1 : ev_eat(e, "min(") ? 2 : ev_eat(e, "max(") ? 3 : 0)) {
		a = ev_sum(e);
		e->bad |= !ev_eat(e, ",");
		b = ev_sum(e);
		e->bad |= !ev_eat(e, ")");
		if (f == 1)
			e->bad |= b <= 0 || a < 0;
		v = e->bad ? 0 : f == 1 ? a / b + (a % b != 0) : f == 2 ? (a < b ? a : b) : (a > b ? a : b);
	} else {
		e->bad = 1;
	}
	e->depth--;
	return v;
}

static long long ev_prod(struct ev *e)
{
	long long v = ev_atom(e), r;
	char op;

	for (ev_ws(e); !e->bad && (*e->at == '*' || *e->at == '/' || *e->at == '%'); ev_ws(e)) {
		op = *e->at++;
		r = ev_atom(e);
		if (op == '*')
			e->bad |= __builtin_mul_overflow(v, r, &v);
		else if (r == 0 || (r == -1 && v == (-9223372036854775807LL - 1)))
			e->bad = 1;
		else
			v = op == '/' ? v / r : v % r;
	}
	return v;
}

static long long ev_sum(struct ev *e)
{
	long long v = ev_prod(e), r;
	char op;

	for (ev_ws(e); !e->bad && (*e->at == '+' || *e->at == '-'); ev_ws(e)) {
		op = *e->at++;
		r = ev_prod(e);
		e->bad |= op == '+' ? __builtin_add_overflow(v, r, &v) : __builtin_sub_overflow(v, r, &v);
	}
	return v;
}

/* The value of the whole text s[0..n), -1 where it is not one. */
static long long ev_count(const char *s, size_t n)
{
	char tmp[512];
	struct ev e = { tmp, 0, 0 };
	long long v;

	if (n >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	v = ev_sum(&e);
	ev_ws(&e);
	return e.bad || *e.at ? -1 : v;
}

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* `scratch float NAME[COUNT];\n` at s (line of n bytes): NAME's length and
 * COUNT, else 0. */
static size_t read_decl(const char *s, size_t n, long long *count)
{
	const char *nm = s + 14, *e = nm, *end = s + n;

	if (n < 14 || strncmp(s, "scratch float ", 14))
		return 0;
	while (e < end && ident_char(*e))
		e++;
	if (e == nm || (*nm >= '0' && *nm <= '9') || e - nm > 64 || *e != '[' || end - e < 4 ||
	    strncmp(end - 3, "];\n", 3) || (*count = ev_count(e + 1, (size_t)(end - 3 - e - 1))) < 1)
		return 0;
	return (size_t)(e - nm);
}

/* s[0..n) with each top-level comma-separated item that is a constant
 * expression written as its value, inside dim3(...) too. */
static void fold_items(struct buf *o, const char *s, size_t n)
{
	size_t a = 0;

	while (a <= n) {
		size_t b = a, lead, end;
		int depth = 0;
		long long v;

		while (b < n && (depth || s[b] != ',')) {
			depth += (s[b] == '(') - (s[b] == ')');
			b++;
		}
		for (lead = a; lead < b && s[lead] == ' '; lead++)
			;
		end = b;
		buf_add(o, s + a, lead - a);
		if (end - lead > 6 && !strncmp(s + lead, "dim3(", 5) && s[end - 1] == ')') {
			buf_adds(o, "dim3(");
			fold_items(o, s + lead + 5, end - lead - 6);
			buf_addc(o, ')');
		} else if ((v = ev_count(s + lead, end - lead)) >= 0) {
			buf_addf(o, "%lld", v);
		} else {
			buf_add(o, s + lead, end - lead);
		}
		if (b < n)
			buf_addc(o, ',');
		a = b + 1;
	}
}

/* A launch line `K<<<CONFIG>>>(ARGS);\n` with its constant expressions
 * folded (the emitters write the sizes' products and ceil_divs for their
 * symbolic uses; at level 3 the launch block takes most of the source
 * limit, here about 100 bytes a conv); another line as it is. */
static void fold_launch(struct buf *o, const char *s, size_t n)
{
	const char *c = strstr(s, "<<<"), *e = c ? strstr(c, ">>>(") : NULL;

	if (!e || e > s + n || n < 3 || strncmp(s + n - 3, ");\n", 3) || e + 4 > s + n - 3) {
		buf_add(o, s, n);
		return;
	}
	buf_add(o, s, (size_t)(c + 3 - s));
	fold_items(o, c + 3, (size_t)(e - c - 3));
	buf_adds(o, ">>>(");
	fold_items(o, e + 4, (size_t)(s + n - 3 - e - 4));
	buf_adds(o, ");\n");
}

int gr_arena_scratch(struct gr_plan *p, size_t from, struct buf *err)
{
	char name[ARENA_MAX_DECL][65], to[ARENA_MAX_DECL][48];
	int nd = 0, rc = 0;
	long long used = 0;
	struct buf o = BUF_INIT, l = BUF_INIT;
	size_t i = from;

	if (!p->off || from >= p->launch.len)
		return 0;
	buf_add(&o, p->launch.s, from);
	while (i < p->launch.len && !rc) {
		const char *s = p->launch.s + i, *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s), k;
		long long count = 0;

		if (!strncmp(s, "scratch ", 8)) {
			/* only plain float buffers (0xFF-filled as the arena), sized by a
			 * constant, within the engine's 8 GiB with the graph's arenas */
			k = read_decl(s, n, &count);
			if (!k || nd == ARENA_MAX_DECL || count > GR_MAX_SCRATCH / 4 - p->tc_base - used ||
			    (p->tc_base + used + count) * 4 + p->arenad_bytes > GR_MAX_SCRATCH) {
				rc = 1;
				break;
			}
			memcpy(name[nd], s + 14, k);
			name[nd][k] = '\0';
			snprintf(to[nd++], sizeof(to[0]), "arena + %lld", p->tc_base + used);
			used += (count + GR_ARENA_ALIGN - 1) / GR_ARENA_ALIGN * GR_ARENA_ALIGN;
			i += n;
			continue;
		}
		/* NAME, a whole identifier, becomes its place in the arena */
		buf_reset(&l);
		for (k = 0; k < n;) {
			size_t e = k;
			int d = -1;

			if (!ident_char(s[k]) || (k && ident_char(s[k - 1]))) {
				buf_addc(&l, s[k++]);
				continue;
			}
			while (e < n && ident_char(s[e]))
				e++;
			for (int j = 0; j < nd && d < 0; j++)
				if (strlen(name[j]) == e - k && !strncmp(s + k, name[j], e - k))
					d = j;
			if (d >= 0)
				buf_adds(&l, to[d]);
			else
				buf_add(&l, s + k, e - k);
			k = e;
		}
		fold_launch(&o, l.s, l.len);
		i += n;
	}
	if (!rc) {
		buf_release(&p->launch);
		p->launch = o;
		if (used > p->tc_scratch)
			p->tc_scratch = used;
	} else {
		buf_release(&o);
	}
	buf_release(&l);
	(void)err;
	return rc;
}
