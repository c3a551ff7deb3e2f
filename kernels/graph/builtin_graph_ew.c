/* The graph template's elementwise code: act, binary, dropout and copy
 * nodes as statements over `float v` at flat output index `ei`, so that the
 * same step serves as a kernel of its own (the head of a group) and as part
 * of a producer's epilogue (linear, conv, pool, norm, reduce, softmax). */
#include "kernels/graph/builtin_graph.h"

#include <stdio.h>
#include <string.h>

void gr_epi_init(struct gr_epi *e)
{
	memset(e, 0, sizeof(*e));
	buf_init(&e->params);
	buf_init(&e->args);
	buf_init(&e->code);
}

void gr_epi_release(struct gr_epi *e)
{
	buf_release(&e->params);
	buf_release(&e->args);
	buf_release(&e->code);
}

const char *gr_epi_operand(struct gr_plan *p, struct gr_epi *e, int k, char *tmp, size_t n)
{
	int r = p->t[k].root, i;
	char st[80];

	for (i = 0; i < e->n && e->tensor[i] != r; i++)
		;
	if (i == e->n) {
		e->tensor[e->n++] = r;
		/* no __restrict__ on the operand the result overwrites */
		buf_addf(&e->params, ", const %s* %sep%d", p->t[r].is_bool ? "bool" : "float",
			 r == p->alias ? "" : "__restrict__ ", i);
		buf_addf(&e->args, ", %s", gr_store(p, r, st, sizeof(st)));
	}
	snprintf(tmp, n, "ep%d", i);
	return tmp;
}

/* The flat index into operand k (broadcast as NumPy) of the element at flat
 * index ei of tensor o. */
static int bcast_index(const struct gr_plan *p, int k, int o, struct buf *ix, struct buf *err)
{
	const struct gr_tensor *a = &p->t[k], *t = &p->t[o];
	long long al[GR_MAX_RANK], ost = 1, ist = 1;
	int r = t->rank, lead = 0, terms = 0;

	if (a->numel == 1) {
		buf_adds(ix, "0");
		return 0;
	}
	/* as many elements: the same flat index (a broadcast adds none; the
	 * final reshape's copy reads its operand in order) */
	if (a->numel == t->numel) {
		buf_adds(ix, "ei");
		return 0;
	}
	while (lead < a->rank && a->shape[lead] == 1 && a->rank - lead > r)
		lead++;
	if (a->rank - lead > r)
		return kf_err(err, "graph: operand '%s' has more dims than '%s'", a->name, t->name);
	for (int j = 0; j < r; j++) {
		int aj = j - (r - (a->rank - lead));
		al[j] = aj < 0 ? 1 : a->shape[lead + aj];
		if (al[j] != 1 && al[j] != t->shape[j])
			return kf_err(err, "graph: '%s' does not broadcast to '%s'", a->name, t->name);
	}
	for (int j = r - 1; j >= 0; j--) {
		if (al[j] != 1) {
			buf_addf(ix, "%s(ei", terms++ ? " + " : "");
			if (ost != 1)
				buf_addf(ix, " / %lldLL", ost);
			if (j > 0)
				buf_addf(ix, " %% %lldLL", t->shape[j]);
			buf_adds(ix, ")");
			if (ist != 1)
				buf_addf(ix, " * %lldLL", ist);
			ist *= al[j];
		}
		ost *= t->shape[j];
	}
	return 0;
}

/* Operand a of node k as an expression: v, or a load. */
static int operand(struct gr_plan *p, struct gr_epi *e, int k, int a, int running, struct buf *x,
		   struct buf *err)
{
	int t = p->n[k].in[a];
	char nm[16];

	if (p->t[t].root == running) {
		buf_adds(x, "v");
		return 0;
	}
	buf_addf(x, "%s[", gr_epi_operand(p, e, t, nm, sizeof(nm)));
	if (bcast_index(p, t, p->n[k].out, x, err))
		return -1;
	buf_adds(x, "]");
	return 0;
}

static int clamp_code(struct buf *c, const json_t *j, const char *lo, const char *hi, struct buf *err)
{
	const json_t *l = json_object_get(j, lo), *h = json_object_get(j, hi);

	/* min first, then max: min > max gives max, as PyTorch */
	if (json_is_number(l)) {
		buf_adds(c, " if (xa < ");
		if (gr_lit(c, json_number_value(l), err))
			return -1;
		buf_adds(c, ") xa = ");
		gr_lit(c, json_number_value(l), err);
		buf_adds(c, ";");
	}
	if (json_is_number(h)) {
		buf_adds(c, " if (xa > ");
		if (gr_lit(c, json_number_value(h), err))
			return -1;
		buf_adds(c, ") xa = ");
		gr_lit(c, json_number_value(h), err);
		buf_adds(c, ";");
	}
	buf_adds(c, " v = xa;");
	return 0;
}

/* v = act(xa), as statements (docs/graph-ir.md, act). */
static int act_code(struct buf *c, const json_t *j, struct buf *err)
{
	const char *fn = gr_str(j, "fn");
	static const char *const simple[][2] = {
		{ "relu", "xa < 0.0f ? 0.0f : xa" },
		/* erfc and a logistic, not 1 + erf or 1 + tanh: no cancellation for xa << 0 */
		{ "gelu", "0.5f * xa * erfcf(xa * -0.70710678118654752f)" },
		{ "gelu_tanh", "xa / (1.0f + expf(-1.5957691216057308f * (xa + 0.044715f * xa * xa * xa)))" },
		{ "sigmoid", "1.0f / (1.0f + expf(-xa))" },
		{ "tanh", "tanhf(xa)" },
		{ "silu", "xa / (1.0f + expf(-xa))" },
		/* mish: tanh(log1p(e)) = n / (n + 2), n = e (e + 2): one expf and a
		 * division, not expf, log1pf and tanhf (fused into the store of
		 * an issue-bound conv, each instruction counts) */
		{ "mish", "xa > 20.0f ? xa : xa * (expf(xa) * (expf(xa) + 2.0f)) / (expf(xa) * (expf(xa) + 2.0f) + 2.0f)" },
		{ "selu", "1.05070098735548049f * (xa > 0.0f ? xa : 1.67326324235437728f * expm1f(xa))" },
		{ "exp", "expf(xa)" }, { "log", "logf(xa)" }, { "abs", "fabsf(xa)" }, { "neg", "-xa" },
		{ "sqrt", "sqrtf(xa)" }, { "rsqrt", "1.0f / sqrtf(xa)" }, { "square", "xa * xa" },
		{ "identity", "xa" },
	};

	for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
		if (!strcmp(fn, simple[i][0])) {
			buf_addf(c, " v = %s;", simple[i][1]);
			return 0;
		}
	if (!strcmp(fn, "leaky_relu")) {
		buf_adds(c, " v = xa > 0.0f ? xa : xa * ");
		if (gr_lit(c, gr_num(j, "negative_slope", 0.01), err))
			return -1;
		buf_adds(c, ";");
		return 0;
	}
	if (!strcmp(fn, "elu")) {
		buf_adds(c, " v = xa > 0.0f ? xa : ");
		if (gr_lit(c, gr_num(j, "alpha", 1.0), err))
			return -1;
		buf_adds(c, " * expm1f(xa);");
		return 0;
	}
	if (!strcmp(fn, "softplus")) {
		double b = gr_num(j, "beta", 1.0), t = gr_num(j, "threshold", 20.0);
		if (b == 0.0)
			return kf_err(err, "graph: softplus with beta 0");
		buf_adds(c, " const float bx = ");
		if (gr_lit(c, b, err))
			return -1;
		buf_adds(c, " * xa; v = bx > ");
		if (gr_lit(c, t, err))
			return -1;
		buf_adds(c, " ? xa : log1pf(expf(bx)) / ");
		gr_lit(c, b, err);
		buf_adds(c, ";");
		return 0;
	}
	if (!strcmp(fn, "hardswish") || !strcmp(fn, "hardsigmoid")) {
		/* relu6(x + 3), NaN kept */
		buf_addf(c, " float r6 = xa + 3.0f; if (r6 < 0.0f) r6 = 0.0f; if (r6 > 6.0f) r6 = 6.0f;"
			    " v = %s / 6.0f;", fn[4] == 's' ? "xa * r6" : "r6");
		return 0;
	}
	if (!strcmp(fn, "hardtanh"))
		return clamp_code(c, j, "min_val", "max_val", err);
	if (!strcmp(fn, "clamp"))
		return clamp_code(c, j, "min", "max", err);
	return kf_err(err, "graph: act '%s' not supported", fn);
}

static int binary_code(struct buf *c, const char *fn, struct buf *err)
{
	static const char *const ar[][2] = { { "add", "+" }, { "sub", "-" }, { "mul", "*" }, { "div", "/" } };

	for (size_t i = 0; i < 4; i++)
		if (!strcmp(fn, ar[i][0])) {
			buf_addf(c, " v = xa %s xb;", ar[i][1]);
			return 0;
		}
	/* NaN propagates, as torch.maximum / minimum */
	if (!strcmp(fn, "max") || !strcmp(fn, "min"))
		buf_addf(c, " v = (xa != xa || xb != xb) ? xa + xb : (xa %s xb ? xa : xb);",
			 fn[1] == 'a' ? ">" : "<");
	else if (!strcmp(fn, "pow"))
		buf_adds(c, " v = powf(xa, xb);");
	else
		return kf_err(err, "graph: binary '%s' not supported", fn);
	return 0;
}

int gr_epi_step(struct gr_plan *p, struct gr_epi *e, int k, int running, struct buf *err)
{
	const struct gr_node *n = &p->n[k];
	struct buf a = BUF_INIT, b = BUF_INIT, *c = &e->code;
	int rc = -1;

	if (operand(p, e, k, 0, running, &a, err))
		goto out;
	buf_addf(c, "        { /* %s: %s %s */ float xa = %s;", p->t[n->out].name, n->op,
		 gr_str(n->j, "fn"), a.s);
	if (!strcmp(n->op, "act")) {
		if (act_code(c, n->j, err))
			goto out;
	} else if (!strcmp(n->op, "binary")) {
		const json_t *cv = json_object_get(n->j, "const");
		if (n->n_in > 1) {
			if (operand(p, e, k, 1, running, &b, err))
				goto out;
		} else if (json_is_number(cv)) {
			if (gr_lit(&b, json_number_value(cv), err))
				goto out;
		} else {
			kf_err(err, "graph: binary with one operand and no constant");
			goto out;
		}
		if (json_is_true(json_object_get(n->j, "swap")))
			buf_addf(c, " float xb = xa; xa = %s;", b.s);
		else
			buf_addf(c, " const float xb = %s;", b.s);
		if (binary_code(c, gr_str(n->j, "fn"), err))
			goto out;
	} else if (!strcmp(n->op, "dropout")) {
		double pr = gr_num(n->j, "p", -1.0);
		if (n->n_in != 2 || pr < 0.0 || pr >= 1.0) {
			kf_err(err, "graph: dropout needs a mask and 0 <= p < 1");
			goto out;
		}
		if (operand(p, e, k, 1, -1, &b, err))
			goto out;
		buf_addf(c, " v = xa * (%s ? 1.0f : 0.0f) / ", b.s);
		if (gr_lit(c, 1.0 - pr, err))
			goto out;
		buf_adds(c, ";");
	} else {
		buf_adds(c, " v = xa;");	/* the final reshape: a copy */
	}
	buf_adds(c, " }\n");
	rc = 0;
out:
	buf_release(&a);
	buf_release(&b);
	return rc;
}

int gr_epi_add_load(struct gr_plan *p, struct gr_epi *e, int tensor, const char *index,
		    const char *op, struct buf *err)
{
	char nm[16];

	(void)err;
	buf_addf(&e->code, "        v = v %s %s[%s];\n", op, gr_epi_operand(p, e, tensor, nm, sizeof(nm)),
		 index);
	return 0;
}

int gr_epi_chain(struct gr_plan *p, struct gr_epi *e, int gi, struct buf *err)
{
	const struct gr_group *g = &p->g[gi];
	const struct gr_node *h = &p->n[g->head];
	int run = p->t[h->out].root;
	char ix[96];

	if (g->fold) {	/* the reduce's chain only: its result is v */
		run = p->t[p->n[g->chain[g->fold - 1]].out].root;
	} else if (gr_is_ew(p, g->head)) {
		if (gr_epi_step(p, e, g->head, -1, err))
			return -1;
	} else if (h->n_in > 2 && (!strcmp(h->op, "linear") || !strcmp(h->op, "conv"))) {
		const struct gr_tensor *o = &p->t[h->out], *b = &p->t[h->in[2]];
		long long S = 1, C = o->rank > 1 ? o->shape[1] : 1;
		if (!strcmp(h->op, "linear")) {
			C = o->shape[o->rank - 1];
			snprintf(ix, sizeof(ix), "ei %% %lldLL", C);
		} else {
			for (int d = 2; d < o->rank; d++)
				S *= o->shape[d];
			snprintf(ix, sizeof(ix), "(ei / %lldLL) %% %lldLL", S, C);
		}
		if (b->numel != C)
			return kf_err(err, "graph: %s bias of %lld elements for %lld channels", h->op,
				      b->numel, C);
		buf_adds(&e->code, "        /* bias */\n");
		if (gr_epi_add_load(p, e, h->in[2], ix, "+", err))
			return -1;
	}
	for (int c = g->fold; c < g->n_chain; c++) {
		if (gr_epi_step(p, e, g->chain[c], run, err))
			return -1;
		run = p->t[p->n[g->chain[c]].out].root;
	}
	return 0;
}
