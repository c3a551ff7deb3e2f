/* Template "reduce": sum/mean/max/min/argmax/argmin over one dim of a
 * tensor, one thread per output: it walks the reduced dim while its
 * neighbours read the neighbouring inner elements (coalesced).
 * Parameters: block, unroll (independent accumulators), slab (0: that
 * layout; C > 0: a block streams one outer index's rows, each thread C
 * columns a block apart, and unroll unrolls the row loop). */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/reduce_cuh.h"

enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN };

static int red_op(const json_t *spec)
{
	static const char *const ops[] = { "sum", "mean", "max", "min", "argmax", "argmin" };
	const char *op = bt_op(spec, "reduce");

	for (int i = 0; op && i < (int)(sizeof(ops) / sizeof(ops[0])); i++)
		if (!strcmp(op, ops[i]))
			return i; /* enum order */
	return -1;
}

int tmpl_reduce_supports(const json_t *spec)
{
	const json_t *in = bt_input(spec, 0);
	long long d = bt_int_arg(spec, "dim", -100);

	return red_op(spec) >= 0 && in && !bt_input(spec, 1) && d >= 0 && d < bt_ndim(in);
}

/* The slab layout (reduce.cuh's "slab"): each thread's COLS results are
 * outputs of their own, so no combine across accumulators. */
static void red_slab(struct buf *s, int op, int block, int cols, int unroll, const char *init,
		     const char *acc, const char *x, const char *y, const char *outer, const char *r,
		     const char *inner)
{
	int arg = op == R_ARGMAX || op == R_ARGMIN;
	static const char *const res[] = { "a[u]", "a[u] / (float)r", "a[u]", "a[u]", "ix[u]", "ix[u]" };

	buf_addf(s, "// template reduce: block=%d unroll=%d slab=%d\n", block, unroll, cols);
	bt_cuh_fill(s, reduce_cuh, "slab", "BLOCK", BT_INT(block), "OUT_T", arg ? "long long" : "float",
		    "COLS", BT_INT(cols), "RUNROLL", BT_INT(unroll), "INIT", init, NULL);
	buf_addf(s, "            %s;\n        }\n    }\n"
		    "#pragma unroll\n"
		    "    for (int u = 0; u < %d; u++) {\n"
		    "        long long c = c0 + u * %d;\n"
		    "        if (c < inner) y[o * inner + c] = %s;\n"
		    "    }\n}\n\n/*@launch\n"
		    "reduce_slab<<<%s * ceil_div(%s, %d), %d>>>(%s, %s, %s, %s, %s);\n@*/\n",
		 acc, cols, block, res[op], outer, inner, block * cols, block, x, y, outer, r, inner);
}

int tmpl_reduce_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 256), unroll = bt_param(p, "unroll", 1);
	int slab = bt_param(p, "slab", 0);
	int op = red_op(spec), arg = op == R_ARGMAX || op == R_ARGMIN;
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0);
	int d = (int)bt_int_arg(spec, "dim", 1), nd = bt_ndim(in);
	struct buf outer = BUF_INIT, r = BUF_INIT, inner = BUF_INIT;
	const char *init, *acc;

	if (block < 32 || block > 1024 || unroll < 1 || unroll > 16 || op < 0 || slab < 0 || slab > 16)
		return kf_err(err, "reduce: bad parameters");
	bt_dims_expr(&outer, in, 0, d);
	bt_dims_expr(&r, in, d, d + 1);
	bt_dims_expr(&inner, in, d + 1, nd);
	switch (op) {
	case R_SUM: case R_MEAN: init = "0.0f"; acc = "a[u] += v"; break;
	case R_MAX: init = "-__int_as_float(0x7f800000)"; acc = "a[u] = fmaxf(a[u], v)"; break;
	case R_MIN: init = "__int_as_float(0x7f800000)"; acc = "a[u] = fminf(a[u], v)"; break;
	case R_ARGMAX: init = "-__int_as_float(0x7f800000)"; acc = "if (v > a[u]) { a[u] = v; ix[u] = kk; }"; break;
	default: init = "__int_as_float(0x7f800000)"; acc = "if (v < a[u]) { a[u] = v; ix[u] = kk; }"; break;
	}
	if (slab) {
		red_slab(s, op, block, slab, unroll, init, acc, bt_name(in), bt_name(out), outer.s, r.s, inner.s);
		goto out;
	}
	buf_addf(s, "// template reduce: block=%d unroll=%d\n", block, unroll);
	bt_cuh_fill(s, reduce_cuh, "kernel", "BLOCK", BT_INT(block),
		    "OUT_T", arg ? "long long" : "float", "UNROLL", BT_INT(unroll),
		    "INIT", init, NULL);
	/* argmax/argmin record the index: keep the first occurrence (PyTorch). */
	if (arg)
		buf_addf(s, "            { long long kk = k + u; %s }\n", acc);
	else
		buf_addf(s, "            %s;\n", acc);
	bt_cuh_section(s, reduce_cuh, "tail");
	buf_addf(s, "        %s;\n    }\n", acc);
	switch (op) {
	case R_SUM: case R_MEAN:
		buf_addf(s, "    float res = 0.0f;\n"
			    "    for (int u = 0; u < %d; u++) res += a[u];\n"
			    "    y[t] = res%s;\n", unroll, op == R_MEAN ? " / (float)r" : "");
		break;
	case R_MAX: case R_MIN:
		buf_addf(s, "    float res = a[0];\n"
			    "    for (int u = 1; u < %d; u++) res = %s(res, a[u]);\n"
			    "    y[t] = res;\n", unroll, op == R_MAX ? "fmaxf" : "fminf");
		break;
	default:
		buf_addf(s, "    float best = a[0]; long long bi = ix[0];\n"
			    "    for (int u = 1; u < %d; u++)\n"
			    "        if (a[u] %s best || (a[u] == best && ix[u] < bi)) { best = a[u]; bi = ix[u]; }\n"
			    "    y[t] = bi;\n", unroll, op == R_ARGMAX ? ">" : "<");
		break;
	}
	buf_addf(s, "}\n\n/*@launch\nreduce_dim<<<ceil_div(%s * %s, %d), %d>>>(%s, %s, %s, %s, %s);\n@*/\n",
		 outer.s, inner.s, block, block, bt_name(in), bt_name(out), outer.s, r.s, inner.s);
out:
	buf_release(&outer);
	buf_release(&r);
	buf_release(&inner);
	return 0;
}
