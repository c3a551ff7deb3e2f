/* attrs.graph of a family "graph" spec (docs/graph-ir.md) parsed into a
 * struct gx and checked strictly: every error names the node. */
#include "oracle/oracle_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle_geom.h"
#include "oracle/oracle_graph_pctx.h"
#include "core/xalloc.h"

static const char *const op_names[] = {
	[GX_LINEAR] = "linear", [GX_MATMUL] = "matmul", [GX_CONV] = "conv", [GX_POOL] = "pool",
	[GX_APOOL] = "adaptive_avg_pool", [GX_ACT] = "act", [GX_BINARY] = "binary",
	[GX_REDUCE] = "reduce", [GX_SOFTMAX] = "softmax", [GX_NORM] = "norm",
	[GX_DROPOUT] = "dropout", [GX_RESHAPE] = "reshape", [GX_PERMUTE] = "permute",
	[GX_CONCAT] = "concat", [GX_EXPAND] = "expand", [GX_SLICE] = "slice", [GX_PAD] = "pad",
	[GX_CUMSUM] = "cumsum", [GX_MFILL] = "masked_fill", [GX_RNN] = "rnn", [GX_CONST] = "const",
	[GX_TAKE] = "take", [GX_ROLL] = "roll", [GX_COMPARE] = "compare",
};

/* Attributes each op accepts besides out, op, in, shape. */
static const char *const op_keys[][10] = {
	[GX_LINEAR] = { NULL },
	[GX_MATMUL] = { NULL },
	[GX_CONV] = { "dims", "kernel", "stride", "padding", "dilation", "groups", "transposed",
		      "output_padding", NULL },
	[GX_POOL] = { "kind", "dims", "kernel", "stride", "padding", "dilation", "ceil_mode",
		      "count_include_pad", NULL },
	[GX_APOOL] = { "output_size", NULL },
	[GX_ACT] = { "fn", "negative_slope", "beta", "threshold", "min_val", "max_val", "min",
		     "max", "alpha" },
	[GX_BINARY] = { "fn", "const", "swap", NULL },
	[GX_REDUCE] = { "fn", "dims", "keepdim", NULL },
	[GX_SOFTMAX] = { "dim", "log", NULL },
	[GX_NORM] = { "kind", "eps", "groups", "normalized_ndim", NULL },
	[GX_DROPOUT] = { "p", NULL },
	[GX_RESHAPE] = { NULL },
	[GX_PERMUTE] = { "perm", NULL },
	[GX_CONCAT] = { "dim", NULL },
	[GX_EXPAND] = { NULL },
	[GX_SLICE] = { "dim", "start", "stop", "step", NULL },
	[GX_PAD] = { "before", "after", NULL },
	[GX_CUMSUM] = { "dim", NULL },
	[GX_MFILL] = { "where", "diagonal", "value", NULL },
	[GX_RNN] = { "kind", "layers", "hidden", "bidirectional", "batch_first", "bias", "h0", "c0",
		     "output" },
	[GX_CONST] = { "values", NULL },
	[GX_TAKE] = { "index", NULL },
	[GX_ROLL] = { "shifts", "dims", NULL },
	[GX_COMPARE] = { "fn", "const", NULL },
};

static const char *const act_names[] = {
	"relu", "leaky_relu", "gelu", "gelu_tanh", "sigmoid", "tanh", "silu", "mish", "softplus",
	"hardswish", "hardsigmoid", "hardtanh", "clamp", "elu", "selu", "exp", "log", "abs",
	"neg", "sqrt", "rsqrt", "square", "identity", NULL,
};
static const char *const bin_names[] = { "add", "sub", "mul", "div", "max", "min", "pow", NULL };
static const char *const red_names[] = { "sum", "mean", "max", "min", "logsumexp", "prod", NULL };
static const char *const norm_names[] = { "batch", "group", "instance", "layer", NULL };

/* Per act fn: its parameters (a[0], a[1]) and their PyTorch defaults. */
static const struct {
	const char *k0, *k1;
	double d0, d1;
} act_params[] = {
	[A_LEAKY_RELU] = { "negative_slope", NULL, 0.01, 0 },
	[A_SOFTPLUS] = { "beta", "threshold", 1, 20 },
	[A_HARDTANH] = { "min_val", "max_val", -1, 1 },
	[A_CLAMP] = { "min", "max", 0, 0 },
	[A_ELU] = { "alpha", NULL, 1, 0 },
};

/* Error context: the problem, the node. */

__attribute__((format(printf, 2, 3))) int gxp_perr(const struct pctx *x, const char *fmt, ...)
{
	struct buf m = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&m, fmt, ap);
	va_end(ap);
	kf_err(x->err, "%s: attrs.graph[%d] (%s \"%s\"): %s", x->p->id, x->i, x->op ? x->op : "?",
	       x->out ? x->out : "?", m.s);
	buf_release(&m);
	return -1;
}

int gxp_lookup(const char *const *names, const char *s)
{
	for (int i = 0; s && names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

int gxp_get_bool(const struct pctx *x, json_t *o, const char *key, int def, int *out)
{
	json_t *v = json_object_get(o, key);
	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_boolean(v))
		return gxp_perr(x, "\"%s\" must be true or false", key);
	*out = json_is_true(v);
	return 0;
}

int gxp_get_num(const struct pctx *x, json_t *o, const char *key, double *out, int *has)
{
	json_t *v = json_object_get(o, key);
	*has = v != NULL;
	if (!v)
		return 0;
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return gxp_perr(x, "\"%s\" must be a finite number", key);
	*out = json_number_value(v);
	return 0;
}

int gxp_get_int(const struct pctx *x, json_t *o, const char *key, long long lo, long long hi,
		   long long *out, int *has)
{
	json_t *v = json_object_get(o, key);
	*has = v != NULL;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return gxp_perr(x, "\"%s\" must be an integer in [%lld, %lld]", key, lo, hi);
	*out = json_integer_value(v);
	return 0;
}

/* A list of n integers >= lo into out[3] right-aligned (absent: def). */
static int get_axes(const struct pctx *x, json_t *o, const char *key, int n, long long lo,
		    long long def, int required, long long out[3])
{
	json_t *v = json_object_get(o, key);
	for (int i = 0; i < 3; i++)
		out[i] = def;
	if (!v) {
		if (required)
			return gxp_perr(x, "\"%s\" is missing", key);
		return 0;
	}
	if (!json_is_array(v) || (int)json_array_size(v) != n)
		return gxp_perr(x, "\"%s\" must be a list of %d integers", key, n);
	for (int i = 0; i < n; i++) {
		json_t *e = json_array_get(v, (size_t)i);
		if (!json_is_integer(e) || json_integer_value(e) < lo ||
		    json_integer_value(e) > (1 << 20))
			return gxp_perr(x, "\"%s[%d]\" must be an integer in [%lld, 2^20]", key, i, lo);
		out[3 - n + i] = json_integer_value(e);
	}
	return 0;
}

static void set_strides(struct gx_t *t)
{
	long long s = 1;
	for (int d = t->nd - 1; d >= 0; d--) {
		t->st[d] = s;
		s *= t->shape[d];
	}
	t->numel = s;
}

int gxp_norm_dim(const struct pctx *x, long long d, int nd, const char *what, int *out)
{
	if (d < -nd || d >= (nd ? nd : 1))
		return gxp_perr(x, "%s %lld is out of range for %d dims", what, d, nd);
	*out = (int)(d < 0 ? d + nd : d);
	return 0;
}

void gxp_fmt_shape(struct buf *b, int nd, const long long *s)
{
	buf_addc(b, '[');
	for (int i = 0; i < nd; i++)
		buf_addf(b, "%s%lld", i ? ", " : "", s[i]);
	buf_addc(b, ']');
}

/* The result shape (computed into t) must be the node's "shape". */
static int check_shape(const struct pctx *x, const struct gx_t *t, int nd, const long long *want)
{
	struct buf a = BUF_INIT, b = BUF_INIT;
	int same = nd == t->nd;
	for (int i = 0; same && i < nd; i++)
		same = want[i] == t->shape[i];
	if (same)
		return 0;
	gxp_fmt_shape(&a, t->nd, t->shape);
	gxp_fmt_shape(&b, nd, want);
	gxp_perr(x, "\"shape\" is %s, but the operands give %s", b.s, a.s);
	buf_release(&a);
	buf_release(&b);
	return -1;
}

/* NumPy broadcasting of two shapes into t. */
static int bcast(const struct pctx *x, const struct gx_t *a, const struct gx_t *b, struct gx_t *t)
{
	t->nd = a->nd > b->nd ? a->nd : b->nd;
	for (int i = 0; i < t->nd; i++) {
		int ia = i - (t->nd - a->nd), ib = i - (t->nd - b->nd);
		long long sa = ia >= 0 ? a->shape[ia] : 1, sb = ib >= 0 ? b->shape[ib] : 1;
		if (sa != sb && sa != 1 && sb != 1)
			return gxp_perr(x, "operands \"%s\" and \"%s\" do not broadcast (dim %d: %lld vs %lld)",
				    a->name, b->name, i, sa, sb);
		t->shape[i] = sa == 1 ? sb : sa;
	}
	return 0;
}

int gxp_want_nin(const struct pctx *x, int nin, int lo, int hi)
{
	if (nin < lo || nin > hi) {
		if (lo == hi)
			return gxp_perr(x, "takes %d operand%s, has %d", lo, lo == 1 ? "" : "s", nin);
		return gxp_perr(x, "takes %d to %d operands, has %d", lo, hi, nin);
	}
	return 0;
}

static int is_vec(const struct gx_t *t, long long n)
{
	return t->nd == 1 && t->shape[0] == n;
}

static int parse_conv(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t)
{
	const struct gx_t *in = &g->t[t->in[0]], *w = &g->t[t->in[1]];
	long long dims, ci, co, ks[3];
	int has;

	if (gxp_want_nin(x, t->nin, 2, 3) < 0 || gxp_get_int(x, o, "dims", 1, 3, &dims, &has) < 0)
		return -1;
	if (!has)
		return gxp_perr(x, "\"dims\" is missing");
	t->sd = (int)dims;
	if (gxp_get_bool(x, o, "transposed", 0, &t->transposed) < 0 ||
	    get_axes(x, o, "stride", t->sd, 1, 1, 0, t->s) < 0 ||
	    get_axes(x, o, "padding", t->sd, 0, 0, 0, t->p) < 0 ||
	    get_axes(x, o, "dilation", t->sd, 1, 1, 0, t->d) < 0 ||
	    get_axes(x, o, "output_padding", t->sd, 0, 0, 0, t->opad) < 0 ||
	    gxp_get_int(x, o, "groups", 1, 1 << 20, &t->groups, &has) < 0)
		return -1;
	if (!has)
		t->groups = 1;
	if (in->nd != 2 + t->sd || w->nd != 2 + t->sd)
		return gxp_perr(x, "conv%dd wants x and weight of %d dims (have %d and %d)", t->sd,
			    2 + t->sd, in->nd, w->nd);
	/* "kernel", where given, repeats the weight's spatial dims */
	if (get_axes(x, o, "kernel", t->sd, 1, 0, 0, ks) < 0)
		return -1;
	for (int i = 0; json_object_get(o, "kernel") && i < t->sd; i++)
		if (ks[3 - t->sd + i] != w->shape[2 + i])
			return gxp_perr(x, "\"kernel\" differs from the weight's spatial dims");
	ci = in->shape[1];
	if (ci % t->groups)
		return gxp_perr(x, "groups %lld do not divide the %lld input channels", t->groups, ci);
	if (t->transposed) {
		if (w->shape[0] != ci)
			return gxp_perr(x, "transposed weight wants %lld input channels first, has %lld", ci,
				    w->shape[0]);
		co = w->shape[1] * t->groups;
	} else {
		co = w->shape[0];
		if (co % t->groups || w->shape[1] != ci / t->groups)
			return gxp_perr(x, "weight [%lld, %lld, ...] does not match %lld input channels in "
				    "%lld groups", w->shape[0], w->shape[1], ci, t->groups);
	}
	if (t->nin == 3 && !is_vec(&g->t[t->in[2]], co))
		return gxp_perr(x, "bias \"%s\" must have shape [%lld]", g->t[t->in[2]].name, co);
	t->nd = in->nd;
	t->shape[0] = in->shape[0];
	t->shape[1] = co;
	for (int i = 0; i < 3; i++) {
		int ax = i - (3 - t->sd);
		long long n = ax >= 0 ? in->shape[2 + ax] : 1, o2;
		t->k[i] = ks[i] = ax >= 0 ? w->shape[2 + ax] : 1;
		if (!t->transposed && t->opad[i])
			return gxp_perr(x, "\"output_padding\" goes with a transposed conv");
		if (t->transposed && t->opad[i] >= t->s[i] && t->opad[i] >= t->d[i])
			return gxp_perr(x, "output_padding %lld must be smaller than the stride or the dilation",
				    t->opad[i]);
		o2 = t->transposed ? geom_convt_out(n, ks[i], t->s[i], t->p[i], t->d[i], t->opad[i])
				   : geom_conv_out(n, ks[i], t->s[i], t->p[i], t->d[i]);
		if (o2 < 1)
			return gxp_perr(x, "empty output along spatial axis %d", ax);
		if (ax >= 0)
			t->shape[2 + ax] = o2;
	}
	return 0;
}

static int parse_pool(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t)
{
	const struct gx_t *in = &g->t[t->in[0]];
	const char *kind = json_string_value(json_object_get(o, "kind"));
	long long dims;
	int has;

	if (gxp_want_nin(x, t->nin, 1, 1) < 0 || gxp_get_int(x, o, "dims", 1, 3, &dims, &has) < 0)
		return -1;
	if (!has)
		return gxp_perr(x, "\"dims\" is missing");
	t->sd = (int)dims;
	if (!kind || (strcmp(kind, "max") && strcmp(kind, "avg")))
		return gxp_perr(x, "\"kind\" must be \"max\" or \"avg\"");
	t->fn = kind[0] == 'm';
	if (!t->fn && json_object_get(o, "dilation"))
		return gxp_perr(x, "avg pooling has no \"dilation\"");
	if (t->fn && json_object_get(o, "count_include_pad"))
		return gxp_perr(x, "max pooling has no \"count_include_pad\"");
	if (get_axes(x, o, "kernel", t->sd, 1, 1, 1, t->k) < 0 ||
	    get_axes(x, o, "padding", t->sd, 0, 0, 0, t->p) < 0 ||
	    get_axes(x, o, "dilation", t->sd, 1, 1, 0, t->d) < 0 ||
	    gxp_get_bool(x, o, "ceil_mode", 0, &t->ceil_mode) < 0 ||
	    gxp_get_bool(x, o, "count_include_pad", 1, &t->cip) < 0)
		return -1;
	if (json_object_get(o, "stride")) {
		if (get_axes(x, o, "stride", t->sd, 1, 1, 1, t->s) < 0)
			return -1;
	} else {
		memcpy(t->s, t->k, sizeof(t->s)); /* PyTorch: stride defaults to the kernel */
	}
	if (in->nd != 2 + t->sd)
		return gxp_perr(x, "pool%dd wants x of %d dims, has %d", t->sd, 2 + t->sd, in->nd);
	t->nd = in->nd;
	t->shape[0] = in->shape[0];
	t->shape[1] = in->shape[1];
	for (int i = 3 - t->sd; i < 3; i++) {
		long long n = in->shape[2 + i - (3 - t->sd)], o2;
		if (2 * t->p[i] > t->k[i])
			return gxp_perr(x, "padding %lld is more than half the kernel %lld", t->p[i], t->k[i]);
		o2 = geom_pool_out(n, t->k[i], t->s[i], t->p[i], t->d[i], t->ceil_mode);
		if (o2 < 1)
			return gxp_perr(x, "empty output along spatial axis %d", i - (3 - t->sd));
		t->shape[2 + i - (3 - t->sd)] = o2;
	}
	return 0;
}

static int parse_apool(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t)
{
	const struct gx_t *in = &g->t[t->in[0]];
	json_t *v = json_object_get(o, "output_size");

	if (gxp_want_nin(x, t->nin, 1, 1) < 0)
		return -1;
	if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > 3)
		return gxp_perr(x, "\"output_size\" must be a list of 1 to 3 integers");
	t->sd = (int)json_array_size(v);
	if (get_axes(x, o, "output_size", t->sd, 1, 1, 1, t->k) < 0)
		return -1;
	if (in->nd != 2 + t->sd)
		return gxp_perr(x, "adaptive pool over %d dims wants x of %d dims, has %d", t->sd,
			    2 + t->sd, in->nd);
	t->nd = in->nd;
	t->shape[0] = in->shape[0];
	t->shape[1] = in->shape[1];
	for (int i = 0; i < t->sd; i++)
		t->shape[2 + i] = t->k[3 - t->sd + i];
	return 0;
}

static int parse_act(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t)
{
	const char *fn = json_string_value(json_object_get(o, "fn"));
	const char *const keys[] = { "negative_slope", "beta", "threshold", "min_val", "max_val",
				     "min", "max", "alpha" };

	if (gxp_want_nin(x, t->nin, 1, 1) < 0)
		return -1;
	t->fn = gxp_lookup(act_names, fn);
	if (t->fn < 0)
		return gxp_perr(x, "unknown act fn \"%s\"", fn ? fn : "(none)");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int mine = t->fn < (int)(sizeof(act_params) / sizeof(act_params[0])) &&
			   ((act_params[t->fn].k0 && !strcmp(act_params[t->fn].k0, keys[i])) ||
			    (act_params[t->fn].k1 && !strcmp(act_params[t->fn].k1, keys[i])));
		if (!mine && json_object_get(o, keys[i]))
			return gxp_perr(x, "act %s has no parameter \"%s\"", fn, keys[i]);
	}
	if (t->fn < (int)(sizeof(act_params) / sizeof(act_params[0])) && act_params[t->fn].k0) {
		t->a[0] = act_params[t->fn].d0;
		t->a[1] = act_params[t->fn].d1;
		if (gxp_get_num(x, o, act_params[t->fn].k0, &t->a[0], &t->has_a[0]) < 0)
			return -1;
		if (act_params[t->fn].k1 &&
		    gxp_get_num(x, o, act_params[t->fn].k1, &t->a[1], &t->has_a[1]) < 0)
			return -1;
	}
	if (t->fn == A_CLAMP && !t->has_a[0] && !t->has_a[1])
		return gxp_perr(x, "clamp needs \"min\" or \"max\"");
	t->nd = g->t[t->in[0]].nd;
	memcpy(t->shape, g->t[t->in[0]].shape, sizeof(t->shape));
	return 0;
}

static int parse_binary(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t)
{
	const char *fn = json_string_value(json_object_get(o, "fn"));

	if (gxp_want_nin(x, t->nin, 1, 2) < 0)
		return -1;
	t->fn = gxp_lookup(bin_names, fn);
	if (t->fn < 0)
		return gxp_perr(x, "unknown binary fn \"%s\"", fn ? fn : "(none)");
	if (gxp_get_num(x, o, "const", &t->a[0], &t->has_a[0]) < 0 ||
	    gxp_get_bool(x, o, "swap", 0, &t->swap) < 0)
		return -1;
	if (t->nin == 2 && t->has_a[0])
		return gxp_perr(x, "has both a second operand and \"const\"");
	if (t->nin == 1 && !t->has_a[0])
		return gxp_perr(x, "needs a second operand or \"const\"");
	if (t->swap && !t->has_a[0])
		return gxp_perr(x, "\"swap\" goes with \"const\"");
	if (t->nin == 2)
		return bcast(x, &g->t[t->in[0]], &g->t[t->in[1]], t);
	t->nd = g->t[t->in[0]].nd;
	memcpy(t->shape, g->t[t->in[0]].shape, sizeof(t->shape));
	return 0;
}

static int parse_reduce(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t)
{
	const struct gx_t *in = &g->t[t->in[0]];
	const char *fn = json_string_value(json_object_get(o, "fn"));
	json_t *dims = json_object_get(o, "dims"), *e;
	size_t i;

	if (gxp_want_nin(x, t->nin, 1, 1) < 0)
		return -1;
	t->fn = gxp_lookup(red_names, fn);
	if (t->fn < 0)
		return gxp_perr(x, "unknown reduce fn \"%s\"", fn ? fn : "(none)");
	if (!json_is_array(dims) || json_array_size(dims) < 1)
		return gxp_perr(x, "\"dims\" must be a non-empty list of integers");
	json_array_foreach(dims, i, e) {
		int d = 0;
		if (!json_is_integer(e))
			return gxp_perr(x, "\"dims[%zu]\" must be an integer", i);
		if (gxp_norm_dim(x, json_integer_value(e), in->nd, "reduce dim", &d) < 0)
			return -1;
		if (in->nd == 0 || (t->rmask >> d & 1))
			return gxp_perr(x, "reduce dim %d is %s", d, in->nd ? "listed twice" : "out of range");
		t->rmask |= 1u << d;
	}
	if (gxp_get_bool(x, o, "keepdim", 0, &t->keepdim) < 0)
		return -1;
	t->nd = 0;
	for (int d = 0; d < in->nd; d++)
		if (!(t->rmask >> d & 1))
			t->shape[t->nd++] = in->shape[d];
		else if (t->keepdim)
			t->shape[t->nd++] = 1;
	return 0;
}

static int parse_softmax(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t)
{
	const struct gx_t *in = &g->t[t->in[0]];
	long long d;
	int has;

	if (gxp_want_nin(x, t->nin, 1, 1) < 0 || gxp_get_int(x, o, "dim", -8, 7, &d, &has) < 0 ||
	    gxp_get_bool(x, o, "log", 0, &t->log_sm) < 0)
		return -1;
	if (!has)
		return gxp_perr(x, "\"dim\" is missing");
	if (in->nd == 0 || gxp_norm_dim(x, d, in->nd, "softmax dim", &t->dim) < 0)
		return in->nd ? -1 : gxp_perr(x, "softmax of a 0-d tensor");
	t->nd = in->nd;
	memcpy(t->shape, in->shape, sizeof(t->shape));
	return 0;
}

static int parse_norm(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t)
{
	const struct gx_t *in = &g->t[t->in[0]];
	const char *kind = json_string_value(json_object_get(o, "kind"));
	long long nnd = 0;
	int has_eps, has_g, has_n;

	if (gxp_want_nin(x, t->nin, 1, 3) < 0)
		return -1;
	t->fn = gxp_lookup(norm_names, kind);
	if (t->fn < 0)
		return gxp_perr(x, "unknown norm kind \"%s\"", kind ? kind : "(none)");
	t->eps = 1e-5;
	if (gxp_get_num(x, o, "eps", &t->eps, &has_eps) < 0 ||
	    gxp_get_int(x, o, "groups", 1, 1 << 20, &t->ngroups, &has_g) < 0 ||
	    gxp_get_int(x, o, "normalized_ndim", 1, GX_MAXD, &nnd, &has_n) < 0)
		return -1;
	if (!(t->eps >= 0))
		return gxp_perr(x, "\"eps\" must be >= 0");
	if (has_g != (t->fn == N_GROUP))
		return gxp_perr(x, "\"groups\" goes with (and only with) a group norm");
	if (has_n != (t->fn == N_LAYER))
		return gxp_perr(x, "\"normalized_ndim\" goes with (and only with) a layer norm");
	t->nnd = (int)nnd;
	if (t->fn == N_LAYER) {
		if (t->nnd > in->nd)
			return gxp_perr(x, "normalized_ndim %d is more than the %d dims of x", t->nnd, in->nd);
	} else if (in->nd < (t->fn == N_INSTANCE ? 3 : 2)) {
		return gxp_perr(x, "%s norm wants x [N, C%s], has %d dims", norm_names[t->fn],
			    t->fn == N_INSTANCE ? ", spatial..." : ", ...", in->nd);
	}
	if (t->fn == N_GROUP && in->shape[1] % t->ngroups)
		return gxp_perr(x, "groups %lld do not divide the %lld channels", t->ngroups, in->shape[1]);
	for (int k = 1; k < t->nin; k++) {
		const struct gx_t *w = &g->t[t->in[k]];
		int ok;
		if (t->fn == N_LAYER) {
			ok = w->nd == t->nnd;
			for (int i = 0; ok && i < t->nnd; i++)
				ok = w->shape[i] == in->shape[in->nd - t->nnd + i];
		} else {
			ok = is_vec(w, in->shape[1]);
		}
		if (!ok)
			return gxp_perr(x, "%s \"%s\" must have the shape of the %s", k == 1 ? "weight" : "bias",
				    w->name, t->fn == N_LAYER ? "normalized dims" : "channel dim");
	}
	t->nd = in->nd;
	memcpy(t->shape, in->shape, sizeof(t->shape));
	return 0;
}

static int parse_rest(const struct pctx *x, json_t *o, struct gx *g, struct gx_t *t,
		      const long long *want, int want_nd)
{
	const struct gx_t *in = &g->t[t->in[0]];
	long long d;
	int has;

	switch (t->op) {
	case GX_LINEAR: {
		const struct gx_t *w = &g->t[t->in[1 < t->nin ? 1 : 0]];
		if (gxp_want_nin(x, t->nin, 2, 3) < 0)
			return -1;
		if (in->nd < 1 || w->nd != 2 || w->shape[1] != in->shape[in->nd - 1])
			return gxp_perr(x, "linear wants x [..., K] and weight [N, K]");
		if (t->nin == 3 && !is_vec(&g->t[t->in[2]], w->shape[0]))
			return gxp_perr(x, "bias \"%s\" must have shape [%lld]", g->t[t->in[2]].name,
				    w->shape[0]);
		t->nd = in->nd;
		memcpy(t->shape, in->shape, sizeof(t->shape));
		t->shape[t->nd - 1] = w->shape[0];
		return 0;
	}
	case GX_MATMUL: {
		const struct gx_t *b = &g->t[t->in[1 < t->nin ? 1 : 0]];
		struct gx_t ba = *in, bb = *b;
		if (gxp_want_nin(x, t->nin, 2, 2) < 0)
			return -1;
		if (in->nd < 2 || b->nd < 2 || in->shape[in->nd - 1] != b->shape[b->nd - 2])
			return gxp_perr(x, "matmul wants a [..., M, K] and b [..., K, N]");
		ba.nd -= 2;
		bb.nd -= 2;
		if (bcast(x, &ba, &bb, t) < 0)
			return -1;
		t->shape[t->nd++] = in->shape[in->nd - 2];
		t->shape[t->nd++] = b->shape[b->nd - 1];
		return 0;
	}
	case GX_DROPOUT: {
		const struct gx_t *m;
		int has_p;
		if (gxp_want_nin(x, t->nin, 2, 2) < 0 || gxp_get_num(x, o, "p", &t->drop_p, &has_p) < 0)
			return -1;
		m = &g->t[t->in[1]];
		if (!has_p || !(t->drop_p >= 0 && t->drop_p < 1))
			return gxp_perr(x, "\"p\" must be a number in [0, 1)");
		if (m->nd != in->nd || memcmp(m->shape, in->shape, sizeof(long long) * (size_t)in->nd))
			return gxp_perr(x, "mask \"%s\" must have the shape of x", m->name);
		t->nd = in->nd;
		memcpy(t->shape, in->shape, sizeof(t->shape));
		return 0;
	}
	case GX_RESHAPE: {
		long long n = 1;
		if (gxp_want_nin(x, t->nin, 1, 1) < 0)
			return -1;
		for (int i = 0; i < want_nd; i++)
			n *= want[i];
		if (n != in->numel)
			return gxp_perr(x, "reshape of %lld elements into %lld", in->numel, n);
		t->nd = want_nd;
		memcpy(t->shape, want, sizeof(long long) * (size_t)want_nd);
		return 0;
	}
	case GX_PERMUTE: {
		json_t *pv = json_object_get(o, "perm");
		unsigned seen = 0;
		if (gxp_want_nin(x, t->nin, 1, 1) < 0)
			return -1;
		if (!json_is_array(pv) || (int)json_array_size(pv) != in->nd)
			return gxp_perr(x, "\"perm\" must list the %d dims of x", in->nd);
		for (int i = 0; i < in->nd; i++) {
			json_t *e = json_array_get(pv, (size_t)i);
			int dd = 0;
			if (!json_is_integer(e) ||
			    gxp_norm_dim(x, json_integer_value(e), in->nd, "perm entry", &dd) < 0)
				return json_is_integer(e) ? -1 : gxp_perr(x, "\"perm[%d]\" must be an integer", i);
			if (seen >> dd & 1)
				return gxp_perr(x, "\"perm\" lists dim %d twice", dd);
			seen |= 1u << dd;
			t->perm[i] = dd;
			t->shape[i] = in->shape[dd];
		}
		t->nd = in->nd;
		return 0;
	}
	case GX_CONCAT:
		if (gxp_want_nin(x, t->nin, 1, GX_MAXIN) < 0 || gxp_get_int(x, o, "dim", -8, 7, &d, &has) < 0)
			return -1;
		if (!has)
			return gxp_perr(x, "\"dim\" is missing");
		if (in->nd == 0 || gxp_norm_dim(x, d, in->nd, "concat dim", &t->dim) < 0)
			return in->nd ? -1 : gxp_perr(x, "concat of 0-d tensors");
		t->nd = in->nd;
		memcpy(t->shape, in->shape, sizeof(t->shape));
		for (int k = 1; k < t->nin; k++) {
			const struct gx_t *b = &g->t[t->in[k]];
			int ok = b->nd == in->nd;
			for (int i = 0; ok && i < in->nd; i++)
				ok = i == t->dim || b->shape[i] == in->shape[i];
			if (!ok)
				return gxp_perr(x, "operand \"%s\" differs from \"%s\" outside dim %d", b->name,
					    in->name, t->dim);
			t->shape[t->dim] += b->shape[t->dim];
		}
		return 0;
	default:
		return gxp_perr(x, "internal: op %d", (int)t->op);
	}
}

static int find_tensor(const struct gx *g, const char *name)
{
	for (int i = 0; i < g->nt; i++)
		if (!strcmp(g->t[i].name, name))
			return i;
	return -1;
}

static int parse_node(struct gx *g, const struct problem *p, json_t *o, int i, struct buf *err)
{
	struct pctx x = { p, i, NULL, NULL, err };
	struct gx_t *t = &g->t[g->nt];
	json_t *v, *e;
	const char *key;
	long long want[GX_MAXD];
	int want_nd;
	size_t k;

	if (!json_is_object(o))
		return gxp_perr(&x, "a node must be an object");
	x.out = json_string_value(json_object_get(o, "out"));
	x.op = json_string_value(json_object_get(o, "op"));
	if (!x.out || !*x.out)
		return gxp_perr(&x, "\"out\" must be a name");
	if (find_tensor(g, x.out) >= 0)
		return gxp_perr(&x, "\"out\" \"%s\" is already a tensor", x.out);
	if (!x.op)
		return gxp_perr(&x, "\"op\" is missing");
	memset(t, 0, sizeof(*t));
	t->op = GX_LEAF;
	for (int k2 = GX_LINEAR; k2 <= GX_COMPARE; k2++)
		if (!strcmp(op_names[k2], x.op))
			t->op = (enum gx_op)k2;
	if (t->op == GX_LEAF)
		return gxp_perr(&x, "unknown op");
	json_object_foreach(o, key, v) {
		int ok = !strcmp(key, "out") || !strcmp(key, "op") || !strcmp(key, "in") ||
			 !strcmp(key, "shape");
		for (int j = 0; !ok && j < 10 && op_keys[t->op][j]; j++)
			ok = !strcmp(op_keys[t->op][j], key);
		if (!ok)
			return gxp_perr(&x, "unknown attribute \"%s\"", key);
	}
	t->name = x.out;
	t->node = i;
	v = json_object_get(o, "in");
	if (!json_is_array(v) || json_array_size(v) < (t->op == GX_CONST ? 0 : 1) ||
	    json_array_size(v) > GX_MAXIN)
		return gxp_perr(&x, "\"in\" must list 1 to %d operands", GX_MAXIN);
	t->in = xcalloc(json_array_size(v) + 1, sizeof(*t->in));
	json_array_foreach(v, k, e) {
		const char *nm = json_string_value(e);
		int ti = nm ? find_tensor(g, nm) : -1;
		if (ti < 0)
			return gxp_perr(&x, "operand %zu (%s%s%s) is neither an input nor an earlier node", k,
				    nm ? "\"" : "", nm ? nm : "not a string", nm ? "\"" : "");
		t->in[t->nin++] = ti;
	}
	v = json_object_get(o, "shape");
	if (!json_is_array(v) || json_array_size(v) > GX_MAXD)
		return gxp_perr(&x, "\"shape\" must be a list of at most %d integers", GX_MAXD);
	want_nd = (int)json_array_size(v);
	json_array_foreach(v, k, e) {
		if (!json_is_integer(e) || json_integer_value(e) < 1 ||
		    json_integer_value(e) > (1LL << 40))
			return gxp_perr(&x, "\"shape[%zu]\" must be a positive integer", k);
		want[k] = json_integer_value(e);
	}
	switch (t->op) {
	case GX_CONV:
		if (gxp_want_nin(&x, t->nin, 2, 3) < 0 || parse_conv(&x, o, g, t) < 0)
			return -1;
		break;
	case GX_POOL:
		if (parse_pool(&x, o, g, t) < 0)
			return -1;
		break;
	case GX_APOOL:
		if (parse_apool(&x, o, g, t) < 0)
			return -1;
		break;
	case GX_ACT:
		if (parse_act(&x, o, g, t) < 0)
			return -1;
		break;
	case GX_BINARY:
		if (parse_binary(&x, o, g, t) < 0)
			return -1;
		break;
	case GX_REDUCE:
		if (parse_reduce(&x, o, g, t) < 0)
			return -1;
		break;
	case GX_SOFTMAX:
		if (parse_softmax(&x, o, g, t) < 0)
			return -1;
		break;
	case GX_NORM:
		if (parse_norm(&x, o, g, t) < 0)
			return -1;
		break;
	case GX_EXPAND:
	case GX_SLICE:
	case GX_PAD:
	case GX_CUMSUM:
	case GX_MFILL:
		if (gxp_parse_l3(&x, o, g, t, want, want_nd) < 0)
			return -1;
		break;
	case GX_RNN:
		if (gxp_parse_rnn(&x, o, g, t) < 0)
			return -1;
		break;
	case GX_CONST:
	case GX_TAKE:
	case GX_ROLL:
	case GX_COMPARE:
		if (gxp_parse_l3b(&x, o, g, t, want, want_nd) < 0)
			return -1;
		break;
	default:
		if (parse_rest(&x, o, g, t, want, want_nd) < 0)
			return -1;
	}
	if (check_shape(&x, t, want_nd, want) < 0)
		return -1;
	set_strides(t);
	if (t->numel > (1LL << 40))
		return gxp_perr(&x, "more than 2^40 elements");
	g->nt++;
	return 0;
}

int gx_parse(struct gx *g, const struct problem *p, struct buf *err)
{
	json_t *graph = json_object_get(json_object_get(p->spec, "attrs"), "graph"), *o;
	const struct problem_tensor *y;
	struct gx_t *last;
	size_t i;

	memset(g, 0, sizeof(*g));
	if (!json_is_array(graph) || json_array_size(graph) < 1 ||
	    json_array_size(graph) > GX_MAXNODES)
		return kf_err(err, "%s: attrs.graph must be a list of 1 to %d nodes", p->id,
			      GX_MAXNODES);
	if (p->n_out != 1)
		return kf_err(err, "%s: a graph problem has one output (has %d)", p->id, p->n_out);
	g->t = xcalloc((size_t)p->n_in + json_array_size(graph), sizeof(*g->t));
	for (int k = 0; k < p->n_in; k++) {
		struct gx_t *t = &g->t[k];
		t->op = GX_LEAF;
		t->name = p->t[k].name;
		t->node = -1;
		t->nd = p->t[k].ndim;
		memcpy(t->shape, p->t[k].shape, sizeof(t->shape));
		set_strides(t);
	}
	g->nt = g->n_leaf = p->n_in;
	json_array_foreach(graph, i, o) {
		if (parse_node(g, p, o, (int)i, err) < 0) {
			free(g->t[g->nt].in);
			g->t[g->nt].in = NULL;
			return -1;
		}
		if (i + 1 < json_array_size(graph) && !strcmp(g->t[g->nt - 1].name, p->t[p->n_in].name)) {
			struct pctx x = { p, (int)i, op_names[g->t[g->nt - 1].op], g->t[g->nt - 1].name,
					  err };
			return gxp_perr(&x, "only the last node may write the output \"%s\"",
				    p->t[p->n_in].name);
		}
	}
	last = &g->t[g->nt - 1];
	y = &p->t[p->n_in];
	if (strcmp(last->name, y->name))
		return kf_err(err, "%s: the last node of attrs.graph writes \"%s\", not the output \"%s\"",
			      p->id, last->name, y->name);
	if (last->nd != y->ndim || memcmp(last->shape, y->shape, sizeof(long long) * (size_t)y->ndim))
		return kf_err(err, "%s: the last node's shape differs from output \"%s\"'s", p->id,
			      y->name);
	g->out = g->nt - 1;
	return 0;
}

void gx_free(void *g_)
{
	struct gx *g = g_;
	if (!g)
		return;
	for (int i = 0; i < g->nt; i++) {
		gx_map_free(&g->t[i].stats);
		free(g->t[i].mat);
		free(g->t[i].wpack);
		free(g->t[i].rows);
		free(g->t[i].dense);
		free(g->t[i].in);
		free(g->t[i].cvals);
		free(g->t[i].idx);
	}
	free(g->t);
	free(g);
}
