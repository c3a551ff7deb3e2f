/* Mustache compiler: one pass over the text into a flat node array.
 * Standalone lines ("  {{#x}}\n") are removed here, so rendering never
 * looks at whitespace again. Block reindentation (~inheritance) is also
 * done here: the intrinsic indentation of a block whose opening tag ends
 * its line is stripped from every line of its content and recorded as the
 * block's indentation, which the renderer adds back where it expands. */
#include "mustache_int.h"
#include "xalloc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DELIM 16

struct mopen {
	uint32_t node, pos;
	uint32_t name_off, name_len;    /* in the source */
	int64_t ws_off;                 /* left-clear indentation start, -1 if not clear */
	int rclear;                     /* opening tag ended its line */
	uint32_t strip_off, strip_len;  /* strip prefix outside this block */
};

struct parser {
	struct mustache_tpl *t;
	const char *s;
	size_t n;
	char otag[MAX_DELIM + 1], ctag[MAX_DELIM + 2], cbrace[MAX_DELIM + 2], ceq[MAX_DELIM + 2];
	size_t olen, clen;
	struct mopen stack[MUSTACHE_MAX_NESTING];
	int depth;
	uint32_t strip_off, strip_len;  /* stripped from each line start */
	struct buf *err;
};

void mustache_init(struct mustache_tpl *tpl)
{
	memset(tpl, 0, sizeof(*tpl));
	buf_init(&tpl->text);
}

void mustache_release(struct mustache_tpl *tpl)
{
	free(tpl->nodes);
	free(tpl->name);
	buf_release(&tpl->text);
	mustache_init(tpl);
}

void mustache_set_name(struct mustache_tpl *tpl, const char *name)
{
	free(tpl->name);
	tpl->name = name ? xstrdup(name) : NULL;
}

void mustache_where(const struct mustache_tpl *t, uint32_t pos, struct buf *out)
{
	const char *s = t->text.s;
	size_t line = 1, col = 1;

	for (uint32_t i = 0; i < pos && i < t->text.len; i++) {
		if (s[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	buf_addf(out, "%s:%zu:%zu", t->name ? t->name : "template", line, col);
}

static int perr(struct parser *ps, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int perr(struct parser *ps, size_t pos, const char *fmt, ...)
{
	struct buf w = BUF_INIT;
	va_list ap;

	mustache_where(ps->t, (uint32_t)pos, &w);
	kf_err(ps->err, "%s: ", w.s);
	if (ps->err) {
		va_start(ap, fmt);
		buf_vaddf(ps->err, fmt, ap);
		va_end(ap);
	}
	buf_release(&w);
	return -1;
}

static struct mustache_node *add_node(struct parser *ps, int type, size_t pos)
{
	struct mustache_tpl *t = ps->t;
	struct mustache_node *nd;

	if (t->nnodes == t->anodes) {
		t->anodes = t->anodes ? t->anodes * 2 : 64;
		t->nodes = xrealloc(t->nodes, t->anodes * sizeof(*t->nodes));
	}
	nd = &t->nodes[t->nnodes++];
	memset(nd, 0, sizeof(*nd));
	nd->type = (uint8_t)type;
	nd->pos = (uint32_t)pos;
	nd->end = t->nnodes;
	return nd;
}

static int in_args(const struct parser *ps)
{
	return ps->depth > 0 && ps->t->nodes[ps->stack[ps->depth - 1].node].type == MN_PARENT;
}

/* Text [a, b); at_ls: a is at a line start. Lines inside a reindented
 * block lose the strip prefix; text directly inside a parent is dropped. */
static void emit_text(struct parser *ps, size_t a, size_t b, int at_ls)
{
	const char *s = ps->s;

	if (in_args(ps))
		return;
	while (a < b) {
		const char *nl;
		size_t e;

		if (at_ls && ps->strip_len && b - a >= ps->strip_len &&
		    !memcmp(s + a, s + ps->strip_off, ps->strip_len))
			a += ps->strip_len;
		if (!ps->strip_len) {
			e = b;
		} else {
			nl = memchr(s + a, '\n', b - a);
			e = nl ? (size_t)(nl - s) + 1 : b;
		}
		if (e > a) {
			struct mustache_node *nd = add_node(ps, MN_TEXT, a);
			nd->off = (uint32_t)a;
			nd->len = (uint32_t)(e - a);
		}
		a = e;
		at_ls = 1;
	}
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t';
}

/* Start of the line when only spaces/tabs precede ts on it, else -1. */
static int64_t left_clear(const struct parser *ps, size_t ts)
{
	size_t i = ts;

	while (i > 0 && is_ws(ps->s[i - 1]))
		i--;
	if (i == 0 || ps->s[i - 1] == '\n')
		return (int64_t)i;
	return -1;
}

/* Position after the line end when only spaces/tabs follow te, else -1. */
static int64_t right_clear(const struct parser *ps, size_t te)
{
	size_t i = te;

	while (i < ps->n && is_ws(ps->s[i]))
		i++;
	if (i == ps->n)
		return (int64_t)i;
	if (ps->s[i] == '\n')
		return (int64_t)i + 1;
	if (ps->s[i] == '\r' && i + 1 < ps->n && ps->s[i + 1] == '\n')
		return (int64_t)i + 2;
	return -1;
}

/* Where the indentation of a left-clear tag starts: after the strip prefix. */
static size_t indent_start(const struct parser *ps, size_t ls, size_t ts)
{
	if (ps->strip_len && ts - ls >= ps->strip_len &&
	    !memcmp(ps->s + ls, ps->s + ps->strip_off, ps->strip_len))
		return ls + ps->strip_len;
	return ls;
}

static int set_delims(struct parser *ps, const char *o, size_t olen, const char *c, size_t clen)
{
	if (!olen || !clen || olen > MAX_DELIM || clen > MAX_DELIM)
		return -1;
	memcpy(ps->otag, o, olen);
	ps->otag[olen] = 0;
	ps->olen = olen;
	memcpy(ps->ctag, c, clen);
	ps->ctag[clen] = 0;
	ps->clen = clen;
	ps->cbrace[0] = '}';
	memcpy(ps->cbrace + 1, c, clen);
	ps->ceq[0] = '=';
	memcpy(ps->ceq + 1, c, clen);
	return 0;
}

static int parse_delims(struct parser *ps, const char *a, const char *b, size_t pos)
{
	const char *o, *oe, *c, *ce;

	while (a < b && isspace((unsigned char)*a))
		a++;
	while (b > a && isspace((unsigned char)b[-1]))
		b--;
	o = a;
	while (a < b && !isspace((unsigned char)*a))
		a++;
	oe = a;
	while (a < b && isspace((unsigned char)*a))
		a++;
	c = a;
	while (a < b && !isspace((unsigned char)*a))
		a++;
	ce = a;
	if (oe == o || ce == c || a != b || memchr(o, '=', (size_t)(oe - o)) ||
	    memchr(c, '=', (size_t)(ce - c)) ||
	    set_delims(ps, o, (size_t)(oe - o), c, (size_t)(ce - c)) < 0)
		return perr(ps, pos, "bad delimiter change (want {{=OPEN CLOSE=}}, "
			    "each 1-16 characters without spaces or '=')");
	return 0;
}

/* Stores the name [a, b) in tpl->text split at '.' and checks it. */
static int store_name(struct parser *ps, struct mustache_node *nd, const char *a,
		      const char *b, int dotted, size_t pos)
{
	struct buf *tx = &ps->t->text;

	if (a == b)
		return perr(ps, pos, "empty tag");
	for (const char *q = a; q < b; q++)
		if (isspace((unsigned char)*q) || !*q)
			return perr(ps, pos, "tag name contains whitespace");
	nd->off = (uint32_t)tx->len;
	nd->len = (uint32_t)(b - a);
	if (!dotted) {
		buf_add(tx, a, (size_t)(b - a));
		buf_addc(tx, 0);
		return 0;
	}
	if (b - a == 1 && *a == '.') {
		nd->nparts = 0;
		buf_addc(tx, 0);
		return 0;
	}
	nd->nparts = 1;
	for (const char *q = a; q < b; q++) {
		if (*q == '.') {
			if (q == a || q + 1 == b || q[1] == '.')
				return perr(ps, pos, "bad dotted name");
			buf_addc(tx, 0);
			if (nd->nparts == UINT16_MAX)
				return perr(ps, pos, "name has too many parts");
			nd->nparts++;
		} else {
			buf_addc(tx, *q);
		}
	}
	buf_addc(tx, 0);
	return 0;
}

/* Cuts the indentation [ws, ts) off the text node just before node idx. */
static void cut_ws(struct parser *ps, uint32_t idx, size_t ws, size_t ts)
{
	struct mustache_node *prev;
	size_t cut;

	if (idx == 0)
		return;
	prev = &ps->t->nodes[idx - 1];
	if (prev->type != MN_TEXT || prev->off + prev->len != ts || prev->end != idx)
		return;
	cut = ts - ws;
	if (cut > prev->len)
		cut = prev->len;
	prev->len -= (uint32_t)cut;
}

static int push_open(struct parser *ps, uint32_t node, size_t ts, const char *na, const char *nb)
{
	struct mopen *o;

	if (ps->depth == MUSTACHE_MAX_NESTING)
		return perr(ps, ts, "sections nested too deeply");
	o = &ps->stack[ps->depth++];
	memset(o, 0, sizeof(*o));
	o->node = node;
	o->pos = (uint32_t)ts;
	o->name_off = (uint32_t)(na - ps->s);
	o->name_len = (uint32_t)(nb - na);
	o->ws_off = -1;
	o->strip_off = ps->strip_off;
	o->strip_len = ps->strip_len;
	return 0;
}

/* A block whose opening tag ends its line: the next line's leading
 * whitespace becomes the strip prefix, and what it adds to the outer
 * prefix is the block's indentation. */
static void begin_reindent(struct parser *ps, struct mustache_node *nd, size_t p)
{
	size_t e = p, olds = ps->strip_len;

	while (e < ps->n && is_ws(ps->s[e]))
		e++;
	if (e - p >= olds && (olds == 0 || !memcmp(ps->s + p, ps->s + ps->strip_off, olds))) {
		nd->ind_off = (uint32_t)(p + olds);
		nd->ind_len = (uint32_t)(e - p - olds);
	} else {
		nd->ind_off = (uint32_t)p;
		nd->ind_len = 0;
	}
	nd->flags |= MF_STANDALONE;
	ps->strip_off = (uint32_t)p;
	ps->strip_len = (uint32_t)(e - p);
}

static int compile(struct parser *ps)
{
	const char *s = ps->s;
	size_t p = 0, text_from = 0;
	int at_ls = 1;

	while (p < ps->n) {
		const char *q = memmem(s + p, ps->n - p, ps->otag, ps->olen);
		const char *a, *b, *close;
		size_t ts, te;
		int64_t lc, rc;
		char sig;
		struct mustache_node *nd;

		if (!q)
			break;
		ts = (size_t)(q - s);
		a = q + ps->olen;
		sig = a < s + ps->n ? *a : 0;
		if (sig && strchr("#^/>!=&{<$", sig))
			a++;
		else
			sig = 0;
		if (sig == '{')
			close = memmem(a, (size_t)(s + ps->n - a), ps->cbrace, ps->clen + 1);
		else if (sig == '=')
			close = memmem(a, (size_t)(s + ps->n - a), ps->ceq, ps->clen + 1);
		else
			close = memmem(a, (size_t)(s + ps->n - a), ps->ctag, ps->clen);
		if (!close)
			return perr(ps, ts, "unclosed tag (no '%s%s' after it)",
				    sig == '{' ? "}" : sig == '=' ? "=" : "", ps->ctag);
		te = (size_t)(close - s) + ps->clen + (sig == '{' || sig == '=');
		b = close;
		if (sig != '=' && sig != '!') {
			while (a < b && isspace((unsigned char)*a))
				a++;
			while (b > a && isspace((unsigned char)b[-1]))
				b--;
		}
		lc = sig ? left_clear(ps, ts) : -1;
		rc = sig ? right_clear(ps, te) : -1;

		switch (sig) {
		case 0:
		case '&':
		case '{':
			emit_text(ps, text_from, ts, at_ls);
			if (!in_args(ps)) {
				nd = add_node(ps, sig ? MN_RAW : MN_VAR, ts);
				if (store_name(ps, nd, a, b, 1, ts) < 0)
					return -1;
			} else if (a == b) {
				return perr(ps, ts, "empty tag");
			}
			p = te;
			at_ls = 0;
			break;
		case '<':
		case '$': {
			int blk = sig == '$';
			int args = in_args(ps);
			uint32_t idx;

			if (blk && args)
				;       /* text before an argument is dropped anyway */
			else if (blk && rc >= 0 && lc >= 0)
				emit_text(ps, text_from, (size_t)lc, at_ls);
			else
				emit_text(ps, text_from, ts, at_ls);
			idx = ps->t->nnodes;
			nd = add_node(ps, blk ? MN_BLOCK : MN_PARENT, ts);
			if (store_name(ps, nd, a, b, 0, ts) < 0 || push_open(ps, idx, ts, a, b) < 0)
				return -1;
			if (lc >= 0)
				ps->stack[ps->depth - 1].ws_off = (int64_t)indent_start(ps, (size_t)lc, ts);
			ps->stack[ps->depth - 1].rclear = rc >= 0;
			if (blk && rc >= 0) {
				p = (size_t)rc;
				begin_reindent(ps, &ps->t->nodes[idx], p);
				at_ls = 1;
			} else {
				p = te;
				at_ls = 0;
			}
			break;
		}
		case '#':
		case '^':
		case '>':
		case '!':
		case '=':
			if (lc >= 0 && rc >= 0)
				emit_text(ps, text_from, (size_t)lc, at_ls);
			else
				emit_text(ps, text_from, ts, at_ls);
			if (sig == '=') {
				if (parse_delims(ps, a, b, ts) < 0)
					return -1;
			} else if (sig == '!') {
				/* comment */
			} else if (sig == '>') {
				nd = add_node(ps, MN_PARTIAL, ts);
				if (store_name(ps, nd, a, b, 0, ts) < 0)
					return -1;
				if (lc >= 0 && rc >= 0) {
					size_t is = indent_start(ps, (size_t)lc, ts);
					nd->flags |= MF_STANDALONE;
					nd->ind_off = (uint32_t)is;
					nd->ind_len = (uint32_t)(ts - is);
				}
				if (in_args(ps))
					ps->t->nnodes--;
			} else {
				uint32_t idx = ps->t->nnodes;
				nd = add_node(ps, sig == '#' ? MN_SECTION : MN_INVERTED, ts);
				if (store_name(ps, nd, a, b, 1, ts) < 0 || push_open(ps, idx, ts, a, b) < 0)
					return -1;
				if (lc >= 0 && rc >= 0)
					nd->flags |= MF_STANDALONE;
			}
			if (lc >= 0 && rc >= 0) {
				p = (size_t)rc;
				at_ls = 1;
			} else {
				p = te;
				at_ls = 0;
			}
			break;
		case '/': {
			struct mopen *o;
			struct mustache_node *on;
			int type;
			int standalone = lc >= 0 && rc >= 0;
			char want[64], got[64];

			if (!ps->depth) {
				snprintf(got, sizeof(got), "%.*s", (int)(b - a), a);
				return perr(ps, ts, "closing tag '%s' has no open section", got);
			}
			o = &ps->stack[ps->depth - 1];
			if ((size_t)(b - a) != o->name_len || memcmp(a, s + o->name_off, o->name_len)) {
				struct buf w = BUF_INIT;
				snprintf(got, sizeof(got), "%.*s", (int)(b - a), a);
				snprintf(want, sizeof(want), "%.*s", (int)o->name_len, s + o->name_off);
				mustache_where(ps->t, o->pos, &w);
				perr(ps, ts, "closing tag '%s' does not match '%s'", got, want);
				if (ps->err)
					buf_addf(ps->err, " opened at %s", w.s);
				buf_release(&w);
				return -1;
			}
			/* nodes may move while text is added: index, not pointer */
			type = ps->t->nodes[o->node].type;
			if (type == MN_PARENT) {
				/* a parent pair is standalone when its opening tag
				 * starts its line and its closing tag ends one */
				emit_text(ps, text_from, ts, at_ls);
				standalone = o->ws_off >= 0 && rc >= 0;
				if (standalone) {
					cut_ws(ps, o->node, (size_t)o->ws_off, o->pos);
					on = &ps->t->nodes[o->node];
					on->flags |= MF_STANDALONE;
					on->ind_off = (uint32_t)o->ws_off;
					on->ind_len = (uint32_t)(o->pos - (size_t)o->ws_off);
				}
			} else if (type == MN_BLOCK && ps->depth >= 2 &&
				   ps->t->nodes[ps->stack[ps->depth - 2].node].type == MN_PARENT) {
				/* an argument's closing tag never removes its line */
				emit_text(ps, text_from, ts, at_ls);
				standalone = 0;
			} else if (type == MN_BLOCK && !standalone && !o->rclear &&
				   o->ws_off >= 0 && lc < 0 && rc >= 0) {
				/* "  {{$b}}...{{/b}}\n": the pair is indented as a whole */
				emit_text(ps, text_from, ts, at_ls);
				cut_ws(ps, o->node, (size_t)o->ws_off, o->pos);
				on = &ps->t->nodes[o->node];
				on->flags |= MF_PAIR;
				on->ind_off = (uint32_t)o->ws_off;
				on->ind_len = (uint32_t)(o->pos - (size_t)o->ws_off);
			} else {
				emit_text(ps, text_from, standalone ? (size_t)lc : ts, at_ls);
			}
			ps->strip_off = o->strip_off;
			ps->strip_len = o->strip_len;
			ps->t->nodes[o->node].end = ps->t->nnodes;
			ps->depth--;
			if (standalone) {
				p = (size_t)rc;
				at_ls = 1;
			} else {
				p = te;
				at_ls = 0;
			}
			break;
		}
		}
		text_from = p;
	}
	emit_text(ps, text_from, ps->n, at_ls);
	if (ps->depth) {
		char name[64];
		struct mopen *o = &ps->stack[ps->depth - 1];
		snprintf(name, sizeof(name), "%.*s", (int)o->name_len, s + o->name_off);
		return perr(ps, o->pos, "unclosed section '%s'", name);
	}
	return 0;
}

int mustache_compile(struct mustache_tpl *tpl, const char *text, size_t len, struct buf *err)
{
	struct parser *ps;
	int ret;

	tpl->nnodes = 0;
	buf_reset(&tpl->text);
	if (len > MUSTACHE_MAX_TEMPLATE)
		return kf_err(err, "%s: template of %zu bytes is over the limit of %u",
			      tpl->name ? tpl->name : "template", len, MUSTACHE_MAX_TEMPLATE);
	ps = xcalloc(1, sizeof(*ps));
	ps->t = tpl;
	ps->s = text;
	ps->n = len;
	ps->err = err;
	set_delims(ps, "{{", 2, "}}", 2);
	buf_add(&tpl->text, text, len);
	ret = compile(ps);
	free(ps);
	if (ret < 0)
		tpl->nnodes = 0;
	return ret;
}
