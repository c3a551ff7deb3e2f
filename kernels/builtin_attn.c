/* Template "attn-flash" for scaled dot-product attention (97): fused
 * flash-style kernel in fp32. A block owns bq query rows of one head (Q
 * staged in shared memory) and walks the keys in tiles of 32: the K tile
 * goes to shared memory (rows padded by 4 floats: conflict-free float4
 * reads with one key per lane), each warp scores its rows (lane = key),
 * updates the online softmax and publishes P; then the V tile replaces the
 * K tile and every thread accumulates P V for its own float4 columns of
 * the bq output rows in registers. The score matrix never leaves the chip.
 * Parameters: bq (query rows per block), block (threads), fast (__expf). */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/attn_cuh.h"

#define ATTN_SMEM_MAX 232448 /* the H100's opt-in dynamic shared memory per block */

static int attn_supports(const json_t *spec)
{
	const json_t *q = bt_input(spec, 0), *k = bt_input(spec, 1), *v = bt_input(spec, 2);
	const char *op = bt_op(spec, "attention");
	long long d;

	if (!op || strcmp(op, "sdpa") || !q || !k || !v || bt_input(spec, 3) || bt_ndim(q) != 4 ||
	    bt_ndim(k) != 4 || bt_ndim(v) != 4)
		return 0;
	d = bt_dims_value(spec, q, 3, 4);
	return d > 0 && d % 4 == 0 && bt_dims_value(spec, q, 0, 4) == bt_dims_value(spec, k, 0, 4) &&
	       bt_dims_value(spec, q, 0, 4) == bt_dims_value(spec, v, 0, 4);
}

/* Shared memory bytes for bq rows of width d: Q tile, K/V tile (32 rows
 * of d + 4), P (bq x 32), the rescale factors and the row sums. */
static long long attn_smem(long long bq, long long d)
{
	return (bq * d + 32 * (d + 4) + bq * 32 + 2 * bq) * 4;
}

static void emit_tile_load(struct buf *s, const char *src)
{
	bt_cuh_fill(s, attn_cuh, "tile_load", "SRC", src, NULL);
}

static int attn_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int bq = bt_param(p, "bq", 16), block = bt_param(p, "block", 256);
	int fast = bt_param(p, "fast", 0), nw = block / 32, rpw, maxj;
	const json_t *q = bt_input(spec, 0), *out = bt_output(spec, 0);
	long long d = bt_dims_value(spec, q, 3, 4);
	const char *ex = fast ? "__expf" : "expf";
	struct buf bh = BUF_INIT, sq = BUF_INIT, dd = BUF_INIT;

	if (bq < 1 || bq > 64 || block < 64 || block > 1024 || block % 32 ||
	    (fast != 0 && fast != 1) || bq % nw || !attn_supports(spec))
		return kf_err(err, "attn-flash: bad parameters");
	if (attn_smem(bq, d) > ATTN_SMEM_MAX)
		return kf_err(err, "attn-flash: bq too large for shared memory at this head dim");
	rpw = bq / nw;
	maxj = (int)((d / 4 + block - 1) / block);
	/* Output registers: bq x maxj float4 per thread. */
	if (bq * maxj > 32)
		return kf_err(err, "attn-flash: bq * columns per thread too large for registers");
	bt_dims_expr(&bh, q, 0, 2);
	bt_dims_expr(&sq, q, 2, 3);
	bt_dims_expr(&dd, q, 3, 4);
	buf_addf(s, "// template attn-flash: bq=%d block=%d fast=%d\n"
		    "#define BQ %d\n#define NT %d\n#define RPW %d\n#define MAXJ %d\n",
		 bq, block, fast, bq, block, rpw, maxj);
	bt_cuh_section(s, attn_cuh, "head");
	emit_tile_load(s, "Kb");
	bt_cuh_section(s, attn_cuh, "scores");
	buf_addf(s, "                const float pr = %s(x - mn), a = %s(m[i] - mn);\n", ex, ex);
	bt_cuh_section(s, attn_cuh, "softmax_update");
	emit_tile_load(s, "Vb");
	bt_cuh_section(s, attn_cuh, "pv_store");
	buf_addf(s, "/*@launch\n"
		    "sdpa_flash<<<%s * ceil_div(%s, %d), %d, (%d * %s + 32 * (%s + 4) + %d) * 4>>>(%s, %s, %s, %s, %s, %s);\n"
		    "@*/\n",
		 bh.s, sq.s, bq, block, bq, dd.s, dd.s, bq * 34, bt_name(q), bt_name(bt_input(spec, 1)),
		 bt_name(bt_input(spec, 2)), bt_name(out), sq.s, dd.s);
	buf_release(&bh);
	buf_release(&sq);
	buf_release(&dd);
	return 0;
}

const struct tmpl_def tmpl_attention_defs[] = {
	{ "attn-flash", attn_supports, attn_render, "{\"bq\": 16, \"block\": 256, \"fast\": 0}" },
	{ NULL, NULL, NULL, NULL },
};
