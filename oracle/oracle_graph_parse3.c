/* The level-3 ops of the graph oracle's parser (docs/graph-ir.md): expand,
 * slice, pad, cumsum, masked_fill, const, take, roll, compare and rnn. */
#include "oracle/oracle_graph_pctx.h"
#include "core/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* expand, slice, pad, cumsum, masked_fill (level 3) */
int gxp_parse_l3(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t,
		    const long long *want, int want_nd)
{
	const struct gx_t *in = &g->t[t->in[0]];
	long long d = 0, stop = 0;
	int has;

	if (gxp_want_nin(x, t->nin, 1, t->op == GX_MFILL ? 2 : 1) < 0)
		return -1;
	t->nd = in->nd;
	memcpy(t->shape, in->shape, sizeof(t->shape));
	switch (t->op) {
	case GX_EXPAND:
		if (want_nd < in->nd)
			return gxp_perr(x, "expand to %d dims of a tensor of %d", want_nd, in->nd);
		for (int i = 0; i < in->nd; i++) {
			long long a = in->shape[i], w = want[want_nd - in->nd + i];
			if (a != 1 && a != w)
				return gxp_perr(x, "dim %d of size %lld does not expand to %lld", i, a, w);
		}
		t->nd = want_nd;
		memcpy(t->shape, want, sizeof(long long) * (size_t)want_nd);
		return 0;
	case GX_SLICE:
		t->step = 1;
		if (gxp_get_int(x, o, "dim", -8, 7, &d, &has) < 0 || !has ||
		    gxp_norm_dim(x, d, in->nd, "slice dim", &t->dim) < 0)
			return has ? -1 : gxp_perr(x, "\"dim\" is missing");
		if (gxp_get_int(x, o, "start", 0, 1LL << 40, &t->start, &has) < 0 || !has ||
		    gxp_get_int(x, o, "stop", 1, 1LL << 40, &stop, &has) < 0 || !has ||
		    gxp_get_int(x, o, "step", 1, 1LL << 40, &t->step, &has) < 0)
			return gxp_perr(x, "slice wants \"start\" >= 0 and \"stop\" > 0 (\"step\" >= 1)");
		if (stop > in->shape[t->dim])
			stop = in->shape[t->dim];
		if (t->start >= stop)
			return gxp_perr(x, "empty slice [%lld:%lld]", t->start, stop);
		t->shape[t->dim] = (stop - t->start + t->step - 1) / t->step;
		return 0;
	case GX_PAD: {
		for (int side = 0; side < 2; side++) {
			json_t *v = json_object_get(o, side ? "after" : "before");
			if (!json_is_array(v) || (int)json_array_size(v) != in->nd)
				return gxp_perr(x, "\"%s\" must list %d integers", side ? "after" : "before",
					    in->nd);
			for (int i = 0; i < in->nd; i++) {
				json_t *e = json_array_get(v, (size_t)i);
				if (!json_is_integer(e) || json_integer_value(e) < 0 ||
				    json_integer_value(e) > (1 << 20))
					return gxp_perr(x, "padding must be integers in [0, 2^20]");
				if (side)
					t->shape[i] += json_integer_value(e);
				else
					t->shape[i] += t->before[i] = json_integer_value(e);
			}
		}
		return 0;
	}
	case GX_CUMSUM:
		if (gxp_get_int(x, o, "dim", -8, 7, &d, &has) < 0 || !has ||
		    gxp_norm_dim(x, d, in->nd, "cumsum dim", &t->dim) < 0)
			return has ? -1 : gxp_perr(x, "\"dim\" is missing");
		return 0;
	case GX_MFILL: {
		const char *wh = json_string_value(json_object_get(o, "where"));
		json_t *v = json_object_get(o, "value");
		if (t->nin == 2) {  /* the mask operand, broadcast to x */
			const struct gx_t *m = &g->t[t->in[1]];
			if (wh || json_object_get(o, "diagonal"))
				return gxp_perr(x, "a masked_fill with a mask operand takes no \"where\" "
					    "or \"diagonal\"");
			if (m->nd > in->nd)
				return gxp_perr(x, "the mask has more dims than x");
			for (int i = 0; i < m->nd; i++)
				if (m->shape[i] != 1 && m->shape[i] != in->shape[in->nd - m->nd + i])
					return gxp_perr(x, "the mask does not broadcast to x");
			t->fn = 2;
		} else {
			if (in->nd < 2)
				return gxp_perr(x, "masked_fill wants at least 2 dims");
			if (!wh || (strcmp(wh, "upper") && strcmp(wh, "lower")))
				return gxp_perr(x, "\"where\" must be \"upper\" or \"lower\"");
			t->fn = wh[0] == 'u';
			if (gxp_get_int(x, o, "diagonal", -(1LL << 40), 1LL << 40, &t->diag, &has) < 0 ||
			    !has)
				return has ? -1 : gxp_perr(x, "\"diagonal\" is missing");
		}
		if (json_is_string(v) && !strcmp(json_string_value(v), "-inf"))
			t->a[0] = -INFINITY;
		else if (json_is_string(v) && !strcmp(json_string_value(v), "inf"))
			t->a[0] = INFINITY;
		else if (gxp_get_num(x, o, "value", &t->a[0], &has) < 0 || !has)
			return gxp_perr(x, "\"value\" must be a number, \"-inf\" or \"inf\"");
		return 0;
	}
	default:
		return gxp_perr(x, "internal: op %d", (int)t->op);
	}
}

/* const, take, roll, compare (level 3: SwinV2's constants) */
int gxp_parse_l3b(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t,
		     const long long *want, int want_nd)
{
	json_t *v, *e;
	size_t k;
	int has;

	if (t->op == GX_CONST) {
		long long n = 1;
		if (t->nin != 0)
			return gxp_perr(x, "a const has no operands");
		t->nd = want_nd;
		memcpy(t->shape, want, sizeof(long long) * (size_t)want_nd);
		for (int i = 0; i < want_nd; i++)
			n *= want[i];
		v = json_object_get(o, "values");
		if (!json_is_array(v) || (long long)json_array_size(v) != n || n > 4096)
			return gxp_perr(x, "\"values\" must list the %lld values of the shape (at most 4096)",
				    n);
		t->cvals = gx_alloc(n);
		json_array_foreach(v, k, e) {
			if (!json_is_number(e) || !isfinite(json_number_value(e)))
				return gxp_perr(x, "\"values\" must be finite numbers");
			t->cvals[k] = json_number_value(e);
		}
		return 0;
	}
	if (gxp_want_nin(x, t->nin, 1, 1) < 0)
		return -1;
	const struct gx_t *in = &g->t[t->in[0]];
	t->nd = in->nd;
	memcpy(t->shape, in->shape, sizeof(t->shape));
	switch (t->op) {
	case GX_TAKE:
		v = json_object_get(o, "index");
		if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > (1u << 24) ||
		    in->nd < 1)
			return gxp_perr(x, "\"index\" must list 1 to 2^24 rows of an operand with dims");
		t->nidx = (long long)json_array_size(v);
		t->idx = xcalloc((size_t)t->nidx, sizeof(*t->idx));
		json_array_foreach(v, k, e) {
			if (!json_is_integer(e) || json_integer_value(e) < 0 ||
			    json_integer_value(e) >= in->shape[0])
				return gxp_perr(x, "index %zu is not a row of the operand (0..%lld)", k,
					    in->shape[0] - 1);
			t->idx[k] = json_integer_value(e);
		}
		t->shape[0] = t->nidx;
		return 0;
	case GX_ROLL: {
		json_t *sh = json_object_get(o, "shifts"), *dm = json_object_get(o, "dims");
		if (!json_is_array(sh) || !json_is_array(dm) || json_array_size(sh) != json_array_size(dm) ||
		    json_array_size(sh) < 1 || json_array_size(sh) > (size_t)in->nd)
			return gxp_perr(x, "\"shifts\" and \"dims\" must be lists of the same length");
		for (k = 0; k < json_array_size(sh); k++) {
			json_t *s = json_array_get(sh, k), *d = json_array_get(dm, k);
			long long dd = json_is_integer(d) ? json_integer_value(d) : -99;
			if (dd < 0)
				dd += in->nd;
			if (dd < 0 || dd >= in->nd || !json_is_integer(s) || json_integer_value(s) < 0 ||
			    json_integer_value(s) >= in->shape[dd] || t->shift[dd])
				return gxp_perr(x, "roll %zu: a dim of the operand, once, and a shift in "
					    "[0, its size)", k);
			t->shift[dd] = json_integer_value(s);
		}
		return 0;
	}
	case GX_COMPARE: {
		const char *fn = json_string_value(json_object_get(o, "fn"));
		if (!fn || (strcmp(fn, "ne") && strcmp(fn, "eq")))
			return gxp_perr(x, "\"fn\" must be \"ne\" or \"eq\"");
		t->fn = !strcmp(fn, "eq");
		if (gxp_get_num(x, o, "const", &t->a[0], &has) < 0 || !has)
			return gxp_perr(x, "\"const\" must be a number");
		return 0;
	}
	default:
		return gxp_perr(x, "internal: op %d", (int)t->op);
	}
}

static int want_shape(const struct pctx *x, const struct gx_t *w, int nd, long long s0,
		      long long s1, long long s2)
{
	long long s[3] = { s0, s1, s2 };
	int ok = w->nd == nd;
	for (int i = 0; ok && i < nd; i++)
		ok = w->shape[i] == s[i];
	if (!ok) {
		struct buf a = BUF_INIT;
		gxp_fmt_shape(&a, nd, s);
		gxp_perr(x, "operand \"%s\" must have shape %s", w->name, a.s);
		buf_release(&a);
		return -1;
	}
	return 0;
}

/* nn.LSTM / GRU / RNN (docs/graph-ir.md, "Recurrent layers") */
int gxp_parse_rnn(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t)
{
	static const char *const kinds[] = { "lstm", "gru", "rnn_tanh", "rnn_relu", NULL };
	static const char *const outs[] = { "output", "h_n", "c_n", NULL };
	const struct gx_t *in = &g->t[t->in[0]];
	long long L, H, T, B, G, per;
	int bd = 0, k;

	t->rnn.kind = gxp_lookup(kinds, json_string_value(json_object_get(o, "kind")));
	t->rnn.which = gxp_lookup(outs, json_string_value(json_object_get(o, "output")));
	if (t->rnn.kind < 0 || t->rnn.which < 0)
		return gxp_perr(x, "\"kind\" (lstm, gru, rnn_tanh, rnn_relu) and \"output\" (output, h_n, "
			    "c_n) are required");
	if (gxp_get_int(x, o, "layers", 1, 64, &L, &k) < 0 || !k ||
	    gxp_get_int(x, o, "hidden", 1, 1 << 20, &H, &k) < 0 || !k)
		return gxp_perr(x, "\"layers\" (1 to 64) and \"hidden\" are required");
	if (gxp_get_bool(x, o, "bidirectional", 0, &bd) < 0 ||
	    gxp_get_bool(x, o, "batch_first", 0, &t->rnn.bf) < 0 ||
	    gxp_get_bool(x, o, "bias", 1, &t->rnn.bias) < 0 || gxp_get_bool(x, o, "h0", 0, &t->rnn.h0) < 0 ||
	    gxp_get_bool(x, o, "c0", 0, &t->rnn.c0) < 0)
		return -1;
	if (t->rnn.kind != RN_LSTM && (t->rnn.c0 || t->rnn.which == RO_CN))
		return gxp_perr(x, "only an lstm has a cell state");
	t->rnn.layers = (int)L;
	t->rnn.dirs = bd ? 2 : 1;
	t->rnn.hidden = H;
	G = t->rnn.kind == RN_LSTM ? 4 : t->rnn.kind == RN_GRU ? 3 : 1;
	per = t->rnn.bias ? 4 : 2;
	if (gxp_want_nin(x, t->nin, 1 + t->rnn.h0 + t->rnn.c0 + (int)(L * t->rnn.dirs * per),
		     1 + t->rnn.h0 + t->rnn.c0 + (int)(L * t->rnn.dirs * per)) < 0)
		return -1;
	if (in->nd != 3)
		return gxp_perr(x, "rnn wants x of 3 dims, has %d", in->nd);
	T = in->shape[t->rnn.bf ? 1 : 0];
	B = in->shape[t->rnn.bf ? 0 : 1];
	k = 1;
	for (int s = 0; s < t->rnn.h0 + t->rnn.c0; s++)
		if (want_shape(x, &g->t[t->in[k++]], 3, L * t->rnn.dirs, B, H) < 0)
			return -1;
	for (long long l = 0; l < L; l++)
		for (int d = 0; d < t->rnn.dirs; d++) {
			long long I = l ? t->rnn.dirs * H : in->shape[2];
			if (want_shape(x, &g->t[t->in[k++]], 2, G * H, I, 0) < 0 ||
			    want_shape(x, &g->t[t->in[k++]], 2, G * H, H, 0) < 0)
				return -1;
			for (int bb = 0; t->rnn.bias && bb < 2; bb++)
				if (want_shape(x, &g->t[t->in[k++]], 1, G * H, 0, 0) < 0)
					return -1;
		}
	t->nd = 3;
	if (t->rnn.which == RO_OUTPUT) {
		t->shape[0] = t->rnn.bf ? B : T;
		t->shape[1] = t->rnn.bf ? T : B;
		t->shape[2] = t->rnn.dirs * H;
	} else {
		t->shape[0] = L * t->rnn.dirs;
		t->shape[1] = B;
		t->shape[2] = H;
	}
	return 0;
}

