/* Mustache renderer: walks the node array with a context stack of jansson
 * values. Indentation of standalone partials, parents and blocks is kept
 * as one string (indent[base..len]) written before the first output of
 * each template line (bol), so partials are never re-parsed. */
#include "mustache_int.h"
#include "xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


struct frame {                 /* a parent being expanded: its arguments */
	const struct mustache_tpl *t;
	uint32_t idx;
};

struct rstate {
	const struct mustache_partials *partials;
	struct buf *out, *err;
	size_t cap;                 /* out->len may not pass it */
	size_t max_out;
	const json_t **ctx;
	size_t nctx, actx;
	struct buf indent;
	size_t ibase;
	int bol;
	struct frame *frames;
	size_t nframes, aframes;
	int depth;                  /* partials, parents, blocks */
	int nest;                   /* everything, bounds the C stack */
};

/* Sections inside partials inside sections...: the C recursion depth. */
#define MAX_RENDER_NEST 2048

static int render_range(struct rstate *st, const struct mustache_tpl *t, uint32_t i, uint32_t end);

static int put(struct rstate *st, const char *p, size_t n)
{
	if (n > st->cap - st->out->len)
		return kf_err(st->err, "rendered output is over the limit of %zu bytes",
			      st->max_out);
	buf_add(st->out, p, n);
	return 0;
}

static int put_indent(struct rstate *st)
{
	st->bol = 0;
	if (st->indent.len > st->ibase)
		return put(st, st->indent.s + st->ibase, st->indent.len - st->ibase);
	return 0;
}

/* Bytes that {{x}} does not copy as they are. */
static const char *const esc_tab[256] = {
	['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;", ['\''] = "&#39;",
	[0x00] = "&#xFFFD;", [0x01] = "&#xFFFD;", [0x02] = "&#xFFFD;", [0x03] = "&#xFFFD;",
	[0x04] = "&#xFFFD;", [0x05] = "&#xFFFD;", [0x06] = "&#xFFFD;", [0x07] = "&#xFFFD;",
	[0x08] = "&#xFFFD;", [0x0b] = "&#xFFFD;", [0x0c] = "&#xFFFD;", [0x0e] = "&#xFFFD;",
	[0x0f] = "&#xFFFD;", [0x10] = "&#xFFFD;", [0x11] = "&#xFFFD;", [0x12] = "&#xFFFD;",
	[0x13] = "&#xFFFD;", [0x14] = "&#xFFFD;", [0x15] = "&#xFFFD;", [0x16] = "&#xFFFD;",
	[0x17] = "&#xFFFD;", [0x18] = "&#xFFFD;", [0x19] = "&#xFFFD;", [0x1a] = "&#xFFFD;",
	[0x1b] = "&#xFFFD;", [0x1c] = "&#xFFFD;", [0x1d] = "&#xFFFD;", [0x1e] = "&#xFFFD;",
	[0x1f] = "&#xFFFD;", [0x7f] = "&#xFFFD;",
};

static int put_escaped(struct rstate *st, const char *s, size_t n)
{
	size_t i = 0, run = 0;

	while (i < n) {
		const char *r = esc_tab[(unsigned char)s[i]];
		if (!r) {
			i++;
			continue;
		}
		if (put(st, s + run, i - run) < 0 || put(st, r, strlen(r)) < 0)
			return -1;
		run = ++i;
	}
	return put(st, s + run, n - run);
}

static int put_value(struct rstate *st, const json_t *v, int escape)
{
	char num[40];
	const char *s = NULL;
	size_t n = 0;

	if (!v)
		return 0;
	switch (json_typeof(v)) {
	case JSON_STRING:
		s = json_string_value(v);
		n = json_string_length(v);
		break;
	case JSON_INTEGER:
		n = (size_t)snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		s = num;
		break;
	case JSON_REAL: {
		double d = json_real_value(v);
		/* shortest form that reads back to the same double */
		for (int prec = 15; prec <= 17; prec++) {
			n = (size_t)snprintf(num, sizeof(num), "%.*g", prec, d);
			if (prec == 17 || strtod(num, NULL) == d)
				break;    /* 17 digits always read back */
		}
		s = num;
		break;
	}
	case JSON_TRUE:
		s = "true";
		n = 4;
		break;
	case JSON_FALSE:
		s = "false";
		n = 5;
		break;
	default:
		return 0;
	}
	return escape ? put_escaped(st, s, n) : put(st, s, n);
}

static int truthy(const json_t *v)
{
	if (!v)
		return 0;
	switch (json_typeof(v)) {
	case JSON_FALSE:
	case JSON_NULL:
		return 0;
	case JSON_ARRAY:
		return json_array_size(v) > 0;
	case JSON_STRING:
		return json_string_length(v) > 0;
	default:
		return 1;
	}
}

static const json_t *lookup(const struct rstate *st, const struct mustache_tpl *t,
			    const struct mustache_node *nd)
{
	const char *k = t->text.s + nd->off;
	const json_t *v = NULL;

	if (nd->nparts == 0)
		return st->nctx ? st->ctx[st->nctx - 1] : NULL;
	for (size_t i = st->nctx; i-- > 0;) {
		if (json_is_object(st->ctx[i]) && (v = json_object_get(st->ctx[i], k)))
			break;
	}
	for (uint16_t part = 1; v && part < nd->nparts; part++) {
		k += strlen(k) + 1;
		v = json_is_object(v) ? json_object_get(v, k) : NULL;
	}
	return v;
}

static void push_ctx(struct rstate *st, const json_t *v)
{
	if (st->nctx == st->actx) {
		st->actx = st->actx ? st->actx * 2 : 32;
		st->ctx = xrealloc(st->ctx, st->actx * sizeof(*st->ctx));
	}
	st->ctx[st->nctx++] = v;
}

static int too_deep(struct rstate *st, const struct mustache_tpl *t, const struct mustache_node *nd)
{
	struct buf w = BUF_INIT;

	mustache_where(t, nd->pos, &w);
	if (st->nest >= MAX_RENDER_NEST)
		kf_err(st->err, "%s: sections and partials nested deeper than %d while rendering",
		       w.s, MAX_RENDER_NEST);
	else
		kf_err(st->err, "%s: partials, parents or blocks nested deeper than %d "
		       "(recursive partial '%s'?)", w.s, MUSTACHE_MAX_PARTIAL_DEPTH, t->text.s + nd->off);
	buf_release(&w);
	return -1;
}

static int render_section(struct rstate *st, const struct mustache_tpl *t, uint32_t i)
{
	const struct mustache_node *nd = &t->nodes[i];
	const json_t *v = lookup(st, t, nd);
	int ret = 0;

	if (st->nest >= MAX_RENDER_NEST)
		return too_deep(st, t, nd);

	if (!(nd->flags & MF_STANDALONE) && st->bol && put_indent(st) < 0)
		return -1;
	if (nd->type == MN_INVERTED) {
		if (truthy(v))
			return 0;
		st->nest++;
		ret = render_range(st, t, i + 1, nd->end);
		st->nest--;
		return ret;
	}
	if (!truthy(v))
		return 0;
	st->nest++;
	if (json_is_array(v)) {
		size_t n = json_array_size(v);
		for (size_t k = 0; k < n && !ret; k++) {
			push_ctx(st, json_array_get(v, k));
			ret = render_range(st, t, i + 1, nd->end);
			st->nctx--;
		}
	} else {
		push_ctx(st, v);
		ret = render_range(st, t, i + 1, nd->end);
		st->nctx--;
	}
	st->nest--;
	return ret;
}

enum { INC_INLINE, INC_STANDALONE, INC_BLOCK, INC_BLOCK_PAIR };

/* Renders nodes [i, end) of t. A standalone partial or parent, and a
 * block, add ind to the current indentation; an inline partial starts
 * with none (its lines are not the including template's lines). */
static int render_included(struct rstate *st, const struct mustache_tpl *t, uint32_t i, uint32_t end,
			   const char *ind, size_t ind_len, int mode)
{
	size_t old_len = st->indent.len, old_base = st->ibase;
	int ret;

	if (mode != INC_INLINE) {
		buf_add(&st->indent, ind, ind_len);
		if (mode != INC_BLOCK)
			st->bol = 1;
	} else {
		if (st->bol && put_indent(st) < 0)
			return -1;
		st->ibase = st->indent.len;
	}
	ret = render_range(st, t, i, end);
	buf_truncate(&st->indent, old_len);
	st->ibase = old_base;
	if (mode == INC_STANDALONE)
		st->bol = 1;     /* the next template line starts */
	else if (mode == INC_INLINE)
		st->bol = 0;
	return ret;
}

static int render_partial(struct rstate *st, const struct mustache_tpl *t, uint32_t i)
{
	const struct mustache_node *nd = &t->nodes[i];
	const struct mustache_tpl *pt = NULL;
	int ret;

	if (!st->partials)
		return 0;
	if (st->depth >= MUSTACHE_MAX_PARTIAL_DEPTH || st->nest >= MAX_RENDER_NEST)
		return too_deep(st, t, nd);
	if (mustache_partial_get(st->partials, t->text.s + nd->off, &pt, st->err) < 0)
		return -1;
	if (!pt || !pt->nnodes)
		return (!(nd->flags & MF_STANDALONE) && st->bol) ? put_indent(st) : 0;
	if (nd->type == MN_PARENT) {
		if (st->nframes == st->aframes) {
			st->aframes = st->aframes ? st->aframes * 2 : 8;
			st->frames = xrealloc(st->frames, st->aframes * sizeof(*st->frames));
		}
		st->frames[st->nframes].t = t;
		st->frames[st->nframes].idx = i;
		st->nframes++;
	}
	st->depth++;
	st->nest++;
	ret = render_included(st, pt, 0, pt->nnodes, t->text.s + nd->ind_off, nd->ind_len,
			      (nd->flags & MF_STANDALONE) ? INC_STANDALONE : INC_INLINE);
	st->depth--;
	st->nest--;
	if (nd->type == MN_PARENT)
		st->nframes--;
	return ret;
}

/* A block outside a parent: the outermost parent's argument of that
 * name wins, else its own content. */
static int render_block(struct rstate *st, const struct mustache_tpl *t, uint32_t i)
{
	const struct mustache_node *nd = &t->nodes[i];
	const char *name = t->text.s + nd->off;
	const struct mustache_tpl *bt = t;
	uint32_t bi = i;
	int ret;

	for (size_t f = 0; f < st->nframes && bt == t && bi == i; f++) {
		const struct mustache_tpl *ft = st->frames[f].t;
		uint32_t pe = ft->nodes[st->frames[f].idx].end;
		for (uint32_t k = st->frames[f].idx + 1; k < pe; k = ft->nodes[k].end) {
			if (ft->nodes[k].type == MN_BLOCK && !strcmp(ft->text.s + ft->nodes[k].off, name)) {
				bt = ft;
				bi = k;
				break;
			}
		}
	}
	if (st->depth >= MUSTACHE_MAX_PARTIAL_DEPTH || st->nest >= MAX_RENDER_NEST)
		return too_deep(st, t, nd);
	st->depth++;
	st->nest++;
	ret = render_included(st, bt, bi + 1, bt->nodes[bi].end, t->text.s + nd->ind_off, nd->ind_len,
			      (nd->flags & MF_PAIR) ? INC_BLOCK_PAIR : INC_BLOCK);
	st->depth--;
	st->nest--;
	return ret;
}

static int render_text(struct rstate *st, const char *s, size_t n)
{
	const char *nl;

	if (!n)
		return 0;
	if (st->bol && put_indent(st) < 0)
		return -1;
	if (st->indent.len == st->ibase)
		return put(st, s, n) < 0 ? -1 : (st->bol = s[n - 1] == '\n', 0);
	while ((nl = memchr(s, '\n', n))) {
		size_t k = (size_t)(nl - s) + 1;
		if (put(st, s, k) < 0)
			return -1;
		s += k;
		n -= k;
		if (!n) {
			st->bol = 1;
			return 0;
		}
		if (put_indent(st) < 0)
			return -1;
	}
	return put(st, s, n);
}

static int render_range(struct rstate *st, const struct mustache_tpl *t, uint32_t i, uint32_t end)
{
	while (i < end) {
		const struct mustache_node *nd = &t->nodes[i];
		int ret = 0;

		switch (nd->type) {
		case MN_TEXT:
			ret = render_text(st, t->text.s + nd->off, nd->len);
			break;
		case MN_VAR:
		case MN_RAW:
			if (st->bol)
				ret = put_indent(st);
			if (!ret)
				ret = put_value(st, lookup(st, t, nd), nd->type == MN_VAR);
			break;
		case MN_SECTION:
		case MN_INVERTED:
			ret = render_section(st, t, i);
			break;
		case MN_PARTIAL:
		case MN_PARENT:
			ret = render_partial(st, t, i);
			break;
		case MN_BLOCK:
			ret = render_block(st, t, i);
			break;
		}
		if (ret < 0)
			return -1;
		i = nd->end;
	}
	return 0;
}

int mustache_render_capped(const struct mustache_tpl *tpl, const json_t *data,
			   const struct mustache_partials *partials, struct buf *out,
			   size_t max_out, struct buf *err)
{
	struct rstate st;
	int ret;

	memset(&st, 0, sizeof(st));
	st.partials = partials;
	st.out = out;
	st.err = err;
	st.max_out = max_out;
	st.cap = out->len + max_out < out->len ? SIZE_MAX : out->len + max_out;
	st.bol = 1;
	buf_init(&st.indent);
	if (data)
		push_ctx(&st, data);
	ret = render_range(&st, tpl, 0, tpl->nnodes);
	free(st.ctx);
	free(st.frames);
	buf_release(&st.indent);
	return ret;
}

int mustache_render(const struct mustache_tpl *tpl, const json_t *data,
		    const struct mustache_partials *partials, struct buf *out, struct buf *err)
{
	return mustache_render_capped(tpl, data, partials, out, MUSTACHE_MAX_OUTPUT, err);
}
