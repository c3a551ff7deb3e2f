/* Templates for losses (94-96, 98-100).
 * "loss-mean": elementwise losses (MSE, Huber, KL, hinge) reduced to one
 * mean: a grid-stride kernel reads both tensors once (float4, several
 * loads in flight), each block writes one double partial, and a one-block
 * kernel sums the partials in a fixed order (deterministic, no atomics).
 * "loss-rows": per-row losses (cross entropy, triplet margin): one warp
 * per row, the block sums its rows' losses in double, then the same final
 * kernel. */
#include <string.h>

#include "kernels/builtin_tmpl.h"

#include "kernels/builtin_util.h"
#include "gen/loss_cuh.h"

enum { L_MSE, L_HUBER, L_KL, L_HINGE, L_CE, L_TRIPLET };

static int loss_op(const json_t *spec)
{
	static const char *const ops[] = { "mse", "huber", "kldiv", "hinge", "cross_entropy",
					   "triplet" }; /* enum order */
	const char *op = bt_op(spec, "loss");

	for (int i = 0; op && i < (int)(sizeof(ops) / sizeof(ops[0])); i++)
		if (!strcmp(op, ops[i]))
			return i;
	return -1;
}

static double spec_attr(const json_t *spec, const char *name, double dflt)
{
	const json_t *v = json_object_get(json_object_get(spec, "attrs"), name);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

/* Shared final kernel: one block sums np double partials in a fixed order
 * and writes the mean. */
static void emit_final(struct buf *s)
{
	bt_cuh_section(s, loss_cuh, "final");
}

/* Block reduce of the double v, thread 0 writes part[blockIdx.x]. */
static void emit_block_sum(struct buf *s)
{
	bt_cuh_section(s, loss_cuh, "block_sum");
}

static int mean_supports(const json_t *spec)
{
	int op = loss_op(spec);
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1);

	if (!a || !b || bt_input(spec, 2))
		return 0;
	if (op == L_HINGE)
		return bt_ndim(a) == 2 && bt_ndim(b) == 1 &&
		       bt_dims_value(spec, a, 1, 2) == bt_dims_value(spec, b, 0, 1);
	return (op == L_MSE || op == L_HUBER || op == L_KL) && bt_ndim(a) >= 1 &&
	       bt_dims_value(spec, a, 0, bt_ndim(a)) == bt_dims_value(spec, b, 0, bt_ndim(b));
}

/* The per-element loss of x (prediction) and y (target) as an expression. */
static const char *elem_expr(int op, int fast)
{
	switch (op) {
	case L_MSE: return "((x - y) * (x - y))";
	case L_HUBER: return "(fabsf(x - y) < 1.0f ? 0.5f * (x - y) * (x - y) : fabsf(x - y) - 0.5f)";
	case L_KL:
		return fast ? "(y > 0.0f ? y * __logf(y / x) : 0.0f)"
			    : "(y > 0.0f ? y * (logf(y) - logf(x)) : 0.0f)";
	default: return "fmaxf(1.0f - x * y, 0.0f)";
	}
}

static int mean_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 256), grid = bt_param(p, "grid", 1056);
	int vec = bt_param(p, "vec", 4), unroll = bt_param(p, "unroll", 2);
	int dacc = bt_param(p, "dacc", 0), fast = bt_param(p, "fast", 0);
	int op = loss_op(spec), hinge = op == L_HINGE;
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1), *out = bt_output(spec, 0);
	long long cols = bt_dims_value(spec, a, bt_ndim(a) - 1, bt_ndim(a));
	struct buf n = BUF_INIT, c = BUF_INIT, cnt = BUF_INIT, g = BUF_INIT;
	const char *vt, *acc = dacc ? "double" : "float";

	if (block < 64 || block > 1024 || block % 32 || grid < 1 || grid > 65535 ||
	    (vec != 1 && vec != 4) || unroll < 1 || unroll > 8 || (dacc != 0 && dacc != 1) ||
	    (fast != 0 && fast != 1) || !mean_supports(spec))
		return kf_err(err, "loss-mean: bad parameters");
	/* A float4 of the hinge must not straddle two rows. */
	if (vec == 4 && hinge && (cols < 0 || cols % 4))
		vec = 1;
	vt = vec == 4 ? "float4" : "float";
	bt_dims_expr(&n, a, 0, bt_ndim(a));
	bt_dims_expr(&c, a, bt_ndim(a) - 1, bt_ndim(a));
	/* KL batchmean divides by the batch (first dim), the others by n. */
	if (op == L_KL)
		bt_dims_expr(&cnt, a, 0, 1);
	else
		buf_adds(&cnt, n.s);
	buf_addf(&g, "min(ceil_div(%s, %d), %d)", n.s, block * vec, grid);
	buf_addf(s, "// template loss-mean: block=%d grid=%d vec=%d unroll=%d dacc=%d fast=%d\n",
		 block, grid, vec, unroll, dacc, fast);
	buf_addf(s, "__device__ __forceinline__ float lossf(float x, float y) { return %s; }\n",
		 elem_expr(op, fast));
	if (vec == 4)
		buf_addf(s, "__device__ __forceinline__ %s loss4(float4 x, float4 y) {\n"
			    "    return (%s)lossf(x.x, y.x) + (%s)lossf(x.y, y.y) + (%s)lossf(x.z, y.z) + (%s)lossf(x.w, y.w);\n}\n",
			 acc, acc, acc, acc, acc);
	else
		buf_addf(s, "__device__ __forceinline__ %s loss4(float x, float y) { return (%s)lossf(x, y); }\n",
			 acc, acc);
	emit_final(s);
	bt_cuh_fill(s, loss_cuh, "part_head", "BLOCK", BT_INT(block), "VEC", BT_INT(vec), "VT", vt,
		    "ACC", acc, "UNROLL", BT_INT(unroll), NULL);
	if (hinge)
		/* targets[col] broadcast along the rows: track the column of
		 * element i * vec incrementally (no 64-bit modulo per load). */
		bt_cuh_fill(s, loss_cuh, "part_cols", "VT", vt, "VEC", BT_INT(vec),
			    "UNROLL_M1", BT_INT(unroll - 1), "UNROLL", BT_INT(unroll), NULL);
	else
		bt_cuh_fill(s, loss_cuh, "part_flat", "VT", vt, "UNROLL_M1", BT_INT(unroll - 1),
			    "UNROLL", BT_INT(unroll), NULL);
	/* The last n % vec elements (none when vec is 1). */
	bt_cuh_fill(s, loss_cuh, "part_tail", "UNROLL", BT_INT(unroll), "VEC", BT_INT(vec),
		    "B_INDEX", hinge ? "e % cols" : "e", NULL);
	emit_block_sum(s);
	buf_addf(s, "/*@launch\n"
		    "scratch double part[%d];\n"
		    "loss_part<<<%s, %d>>>(%s, %s, part, %s, %s);\n"
		    "loss_final<<<1, 256>>>(part, %s, %s, %s);\n@*/\n",
		 grid, g.s, block, bt_name(a), bt_name(b), n.s, c.s, g.s, bt_name(out), cnt.s);
	buf_release(&n);
	buf_release(&c);
	buf_release(&cnt);
	buf_release(&g);
	return 0;
}

static int rows_supports(const json_t *spec)
{
	int op = loss_op(spec);
	const json_t *a = bt_input(spec, 0), *t = bt_input(spec, 1);

	if (!a || !t || bt_ndim(a) != 2)
		return 0;
	if (op == L_CE)
		return bt_ndim(t) == 1 && !bt_input(spec, 2) &&
		       json_is_string(json_object_get(t, "dtype")) &&
		       !strcmp(json_string_value(json_object_get(t, "dtype")), "int64");
	return op == L_TRIPLET && bt_input(spec, 2) && bt_ndim(t) == 2 &&
	       bt_ndim(bt_input(spec, 2)) == 2 &&
	       json_object_get(json_object_get(spec, "scalars"), "margin");
}

/* Cross entropy: per-lane online max/sum of exp, merged across the warp. */
static void emit_ce_row(struct buf *s, int vec, int fast)
{
	const char *ex = fast ? "__expf" : "expf";

	buf_addf(s, "__device__ __forceinline__ void upd(float& m, float& s, float v) {\n"
		    "    if (v > m) { s = s * %s(m - v) + 1.0f; m = v; } else { s += %s(v - m); }\n}\n",
		 ex, ex);
	bt_cuh_fill(s, loss_cuh, "comb", "EXP", ex, NULL);
	if (vec == 4)
		bt_cuh_fill(s, loss_cuh, "upd4", "EXP", ex, NULL);
	else
		buf_adds(s, "__device__ __forceinline__ void upd4(float& m, float& s, float v) { upd(m, s, v); }\n");
}

static int rows_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 256), grid = bt_param(p, "grid", 2112);
	int vec = bt_param(p, "vec", 4), unroll = bt_param(p, "unroll", 2);
	int fast = bt_param(p, "fast", 0);
	int op = loss_op(spec), ce = op == L_CE, w = block / 32;
	const json_t *a = bt_input(spec, 0), *out = bt_output(spec, 0);
	long long cols = bt_dims_value(spec, a, 1, 2);
	double eps = spec_attr(spec, "eps", 1e-6);
	struct buf r = BUF_INIT, c = BUF_INIT, g = BUF_INIT;
	const char *vt;

	if (block < 64 || block > 1024 || block % 32 || grid < 1 || grid > 65535 ||
	    (vec != 1 && vec != 4) || unroll < 1 || unroll > 8 || (fast != 0 && fast != 1) ||
	    !rows_supports(spec))
		return kf_err(err, "loss-rows: bad parameters");
	/* Rows must start 16-byte aligned for float4. */
	if (vec == 4 && (cols < 0 || cols % 4))
		vec = 1;
	vt = vec == 4 ? "float4" : "float";
	bt_dims_expr(&r, a, 0, 1);
	bt_dims_expr(&c, a, 1, 2);
	buf_addf(&g, "min(ceil_div(%s, %d), %d)", r.s, w, grid);
	buf_addf(s, "// template loss-rows: block=%d grid=%d vec=%d unroll=%d fast=%d\n", block, grid,
		 vec, unroll, fast);
	if (ce)
		emit_ce_row(s, vec, fast);
	else
		buf_addf(s, "#define TEPS %.9ef\n"
			    "__device__ __forceinline__ void tri(float& sp, float& sn, float a, float p, float n) {\n"
			    "    float dp = a - p + TEPS, dn = a - n + TEPS;\n"
			    "    sp = fmaf(dp, dp, sp); sn = fmaf(dn, dn, sn);\n}\n"
			    "__device__ __forceinline__ void tri(float& sp, float& sn, float4 a, float4 p, float4 n) {\n"
			    "    tri(sp, sn, a.x, p.x, n.x); tri(sp, sn, a.y, p.y, n.y);\n"
			    "    tri(sp, sn, a.z, p.z, n.z); tri(sp, sn, a.w, p.w, n.w);\n}\n", eps);
	emit_final(s);
	if (ce)
		buf_addf(s, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
			    "loss_rows(const float* __restrict__ a, const long long* __restrict__ tg,\n"
			    "          double* __restrict__ part, long long rows, long long cols)\n{\n", block);
	else
		bt_cuh_fill(s, loss_cuh, "rows_head", "BLOCK", BT_INT(block), NULL);
	bt_cuh_fill(s, loss_cuh, "rows_setup", "VEC", BT_INT(vec), "VT", vt, NULL);
	if (ce) {
		bt_cuh_fill(s, loss_cuh, "rows_lse", "UNROLL_M1", BT_INT(unroll - 1),
			    "UNROLL", BT_INT(unroll), "VT", vt, "VEC", BT_INT(vec),
			    "LOG", fast ? "__logf" : "logf", NULL);
	} else {
		bt_cuh_fill(s, loss_cuh, "rows_triplet", "VT", vt, "UNROLL_M1", BT_INT(unroll - 1),
			    "UNROLL", BT_INT(unroll), "VEC", BT_INT(vec), NULL);
	}
	emit_block_sum(s);
	if (ce)
		buf_addf(s, "/*@launch\nscratch double part[%d];\n"
			    "loss_rows<<<%s, %d>>>(%s, %s, part, %s, %s);\n",
			 grid, g.s, block, bt_name(a), bt_name(bt_input(spec, 1)), r.s, c.s);
	else
		buf_addf(s, "/*@launch\nscratch double part[%d];\n"
			    "loss_rows<<<%s, %d>>>(%s, %s, %s, part, %s, %s, margin);\n",
			 grid, g.s, block, bt_name(a), bt_name(bt_input(spec, 1)),
			 bt_name(bt_input(spec, 2)), r.s, c.s);
	buf_addf(s, "loss_final<<<1, 256>>>(part, %s, %s, %s);\n@*/\n", g.s, bt_name(out), r.s);
	buf_release(&r);
	buf_release(&c);
	buf_release(&g);
	return 0;
}

const struct tmpl_def tmpl_loss_defs[] = {
	{ "loss-mean", mean_supports, mean_render,
	  "{\"block\": 256, \"grid\": 1056, \"vec\": 4, \"unroll\": 2, \"dacc\": 0, \"fast\": 0}" },
	{ "loss-rows", rows_supports, rows_render,
	  "{\"block\": 256, \"grid\": 2112, \"vec\": 4, \"unroll\": 2, \"fast\": 0}" },
	{ NULL, NULL, NULL, NULL },
};
