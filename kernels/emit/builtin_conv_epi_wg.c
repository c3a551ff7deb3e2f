/* conv_epi's wgmma core (sm_90a; "core" "wgmma", what the graph passes by
 * default): the implicit GEMM of the mma core (same phases, tap table,
 * gather and repacked weights: builtin_conv_epi_mma.c) on gemm_epi's wgmma
 * K loop (builtin_gemm_epi_wg.c: the product runs transposed, the A tile of
 * output positions is the shared-memory operand, 128-byte swizzled, split
 * once per tile for all warpgroups; the weights are the register operand,
 * split in registers; tf32+bf16 or 3xTF32, each tile's products FADDed:
 * fp32-accurate). Two warpgroups: MW 1 puts them side by side on channels
 * (128 positions x 128 channels), MW 2 on positions (256 x 64), so that
 * 64 channels or fewer do not leave half the tensor-core tile empty. WG 1:
 * one warpgroup (128 x 64) in a block small enough for two an SM, so that
 * one block's waits, prologue and epilogue could overlap the other's
 * products; it measured 6% slower on level 2 (H200): an option, off. */
#include "kernels/emit/builtin_conv_epi.h"

#include <string.h>

#include "kernels/emit/builtin_gemm_epi_int.h"
#include "kernels/builtin_util.h"
#include "gen/conv_epi_wg_cuh.h"

struct cwg_tile {
	int mw, bm, bn, cb, stages, bf, ps, smem, nt;
	int sa_bytes, stage_bytes;
};

static int tile_read(const struct cepi_geo *g, const json_t *p, struct cwg_tile *t,
		     struct buf *err)
{
	long long cpg = cepi_cpg(g);
	const json_t *sp = json_object_get(p, "split");
	int wg;

	if (sp && (!json_is_string(sp) || (strcmp(json_string_value(sp), "tf32bf16") &&
					    strcmp(json_string_value(sp), "3xtf32"))))
		return kf_err(err, "conv_tce: split must be \"tf32bf16\" or \"3xtf32\"");
	/* 3xTF32 by default: this core is not bound by the tensor cores (3xTF32
	 * cost 2% on the H100), and the tf32+bf16 split's bf16-rounded terms
	 * missed 1e-4 on U[-100, 100) inputs (level 2's 002 and 090) */
	t->bf = sp && !strcmp(json_string_value(sp), "tf32bf16");
	wg = bt_param(p, "WG", 2);
	/* MW 0 stands for one warpgroup (WG 1): 128 x 64, two blocks an SM */
	t->mw = wg == 1 ? 0 : bt_param(p, "MW", 0) ? bt_param(p, "MW", 0) : cepi_opg(g) > 64 ? 1 : 2;
	for (t->cb = 4; t->cb < 32 && t->cb < cpg;)
		t->cb <<= 1;
	t->cb = bt_param(p, "CB", 0) ? bt_param(p, "CB", 0) : t->cb;
	t->stages = bt_param(p, "STAGES", 0) ? bt_param(p, "STAGES", 0) : t->mw == 1 ? 4 : 3;
	/* PS 1: x's small parts split once, by the channels-last copy, and
	 * gathered with it (3xTF32, two warpgroups); else split per tile */
	t->ps = bt_param(p, "PS", 1);
	if ((wg != 1 && wg != 2) || (wg == 1 && bt_param(p, "MW", 0)) || (wg == 2 && t->mw != 1 && t->mw != 2) ||
	    t->cb < 4 || t->cb > 32 || (t->cb & (t->cb - 1)) || t->stages < 2 || t->stages > 5 ||
	    (t->ps != 0 && t->ps != 1))
		return kf_err(err, "conv_tce: bad parameters for the wgmma core (WG 1 or 2, MW 1 or 2 "
				   "with WG 2, CB 4..32 a power of 2, STAGES 2..5, PS 0 or 1)");
	t->ps = t->ps && !t->bf && t->mw;
	t->nt = wg * 128;
	t->bm = t->mw ? 128 * t->mw : 128;
	t->bn = t->mw ? 128 / t->mw : 64;
	t->sa_bytes = t->bm * 128;
	/* B rows padded by 8 words: the fragment loads hit distinct banks */
	t->stage_bytes = (t->ps ? 2 : 1) * t->sa_bytes + 32 * (t->bn + 8) * 4;
	/* stages and split buffers start on 1024-byte boundaries (the swizzle's) */
	t->stage_bytes = (t->stage_bytes + 1023) / 1024 * 1024;
	return cepi_smem_fit((long long)t->stages * t->stage_bytes + (t->ps ? 0 : 2 * t->sa_bytes) + 1024, t->bn,
			     t->bm + 1, 227, &t->smem, err);
}

static void emit_head(struct buf *s, const char *name, const struct cepi_geo *g,
		      const struct cwg_tile *t, const struct epi *e)
{
	buf_addf(s, "// conv_epi (wgmma %s implicit GEMM%s): BM=%d BN=%d WG=%d MW=%d CB=%d STAGES=%d PS=%d\n"
		    "extern \"C\" __global__ void __launch_bounds__(%d, %d)\n",
		 t->bf ? "tf32+bf16" : "3xTF32", g->transposed ? ", transposed, by phase" : "", t->bm,
		 t->bn, t->nt / 128, t->mw, t->cb, t->stages, t->ps, t->nt, t->nt == 128 ? 2 : 1);
	cepi_emit_sig(s, name, e);
	/* MW 0: one warpgroup */
	buf_addf(s, "    constexpr int BM = %d, BN = %d, BK = 32, NT = %d, STAGES = %d, BF = %d, MW = %d;\n"
		    "    constexpr int BSTR = BN + 8, NUNITS = (BF ? 512 : 1024) * (MW == 2 ? 2 : 1);   // split units of a tile\n"
		    "    constexpr unsigned SA_BYTES = %d, STAGE_BYTES = %d;   // multiples of 1024\n"
		    "    constexpr int PS = %d;   // PS 1: a stage is A, A's small parts, B\n"
		    "    constexpr unsigned SB_OFF = (PS ? 2 : 1) * SA_BYTES;\n",
		 t->bm, t->bn, t->nt, t->stages, t->bf, t->mw, t->sa_bytes, t->stage_bytes, t->ps);
	cepi_emit_geo_consts(s, g, t->cb);
}

/* x (NCHW) to channels-last, each group's channels padded to a multiple of
 * 4 with zeros: [N][D][H][W][G][C_in/G rounded up] (CX channels a
 * position), so that the gather copies 16 bytes (4 channels of one tap) at
 * a time. Reads run along positions. Up to 8 channels a position, a thread
 * writes one position's float4 (a 32 x 32 tile would leave 3 in 4 threads
 * idle: 0.8 ms more on level 1's 050, H100); more, a 32 x 32 tile is
 * transposed through shared memory so writes run along channels. */
static int xform_small(const struct cepi_geo *g)
{
	return g->groups * ((cepi_cpg(g) + 3) / 4 * 4) <= 8;
}

static void emit_xform(struct buf *s, const char *name, const struct cepi_geo *g, int ps)
{
	bt_cuh_fill(s, conv_epi_wg_cuh, "xform_head",
		    "PS_NOTE", ps ? ", then its small parts (x - tf32(x))" : "", "NAME", name,
		    "GROUPS", BT_INT(g->groups), "PS", BT_INT(ps), NULL);
	if (xform_small(g)) {
		bt_cuh_section(s, conv_epi_wg_cuh, "xform_flat");
		return;
	}
	bt_cuh_section(s, conv_epi_wg_cuh, "xform_transpose");
}

/* This thread's gather rows (LPR threads to a 128-byte A row, CPR chunks
 * each) and the store's pixel table. A row off the output gets a depth
 * every bounds test fails. */
static void emit_rows(struct buf *s)
{
	bt_cuh_section(s, conv_epi_wg_cuh, "rows");
}

/* load(stage, tile): A from the channels-last x, 16-byte copies (zeros off
 * the image, past the channels, for the padding taps: tab_d fails them),
 * swizzled K-major; B into [k][BSTR]. */
static void emit_loader(struct buf *s, const struct cepi_geo *g)
{
	bt_cuh_section(s, conv_epi_wg_cuh, "loader");
	cepi_emit_load_b(s, g, "r * BSTR + q * 4", "r * BSTR + cc");
	buf_adds(s, "    };\n");
}

/* The K loop, then acc staged as Cs[n][m] for the shared store. */
static void emit_main(struct buf *s, const struct cepi_geo *g, const struct cwg_tile *t)
{
	buf_adds(s, "    const unsigned sbase = (kfg_smem(smem) + 1023u) & ~1023u;\n");
	if (!t->ps)
		buf_adds(s, "    const unsigned ssplit = sbase + STAGES * STAGE_BYTES;   // two split buffers\n");
	buf_adds(s, "    auto stage_a = [&](int kt) { return sbase + (kt % STAGES) * STAGE_BYTES; };\n");
	emit_loader(s, g);
	/* the fragment indices end with the block so the epilogue sees n, c, s, v */
	bt_cuh_section(s, conv_epi_wg_cuh, "main_head");
	/* the next tile's gather issued behind the first k step */
	gemm_emit_wg_loop(s, t->mw == 2 ? " + wg * 16384" : "", 1, t->ps);
	bt_cuh_section(s, conv_epi_wg_cuh, "main_tail");
}

int cepi_emit_wg(struct buf *src, struct buf *launch, const char *name, const struct cepi_geo *g,
		 const char *x, const char *w, const char *y, const struct epi *e,
		 const json_t *tparams, struct buf *err)
{
	struct cwg_tile t = { 0 };
	struct buf xs = BUF_INIT, xc = BUF_INIT, xn = BUF_INIT;
	long long mt = g->val[CE_N], xt = g->val[CE_N] * g->groups * ((cepi_cpg(g) + 3) / 4 * 4);

	for (int a = 0; a < 3; a++) {
		mt *= cepi_q(g, a);
		xt *= g->val[CE_ID + a];
	}
	if (tile_read(g, tparams, &t, err))
		return -1;
	/* grid.x < 2^31, grid.y < 65536; the channels-last copy of x (and,
	 * PS, of its small parts) at most 2 GiB (a graph holds one per
	 * convolution; level 2's largest graph then declares 6.5 GiB of
	 * scratch, under the engine's 8) */
	if (cepi_grid_x(g, (mt + t.bm - 1) / t.bm) > (1LL << 31) - 1 ||
	    g->groups * ((cepi_opg(g) + t.bn - 1) / t.bn) > 65535 || xt > (1LL << 29) ||
	    g->val[CE_N] > 65535)
		return 1;
	gemm_emit_common(src);
	gemm_emit_wg_helpers(src);
	cepi_emit_repack(src, name, g);
	emit_xform(src, name, g, t.ps);
	emit_head(src, name, g, &t, e);
	cepi_emit_block(src, g);
	emit_rows(src);
	emit_main(src, g, &t);
	cepi_emit_store(src, e, t.nt % t.bm == 0);
	buf_addf(&xs, "(%s) * (%s) * (%s)", g->sz[CE_ID], g->sz[CE_IH], g->sz[CE_IW]);
	buf_addf(&xc, "%d * ceil_div((%s) / %d, 4) * 4", g->groups, g->sz[CE_CI], g->groups);
	buf_addf(&xn, "%s_xt", name);
	buf_addf(launch, "scratch float %s[%s(%s) * %s * %s];\n", xn.s, t.ps ? "2 * " : "", g->sz[CE_N], xs.s,
		 xc.s);
	if (xform_small(g))
		buf_addf(launch, "%s_xform<<<ceil_div((%s) * %s * (%s) / 4, 256), 256>>>", name, g->sz[CE_N],
			 xs.s, xc.s);
	else
		buf_addf(launch, "%s_xform<<<dim3(ceil_div(%s, 32), ceil_div(%s, 32), %s), dim3(32, 8)>>>",
			 name, xs.s, xc.s, g->sz[CE_N]);
	buf_addf(launch, "(%s, %s, %s, %s, %s, %s, %s);\n", x, xn.s, g->sz[CE_N], g->sz[CE_CI],
		 g->sz[CE_ID], g->sz[CE_IH], g->sz[CE_IW]);
	/* the GEMM kernel reads the channels-last copy as its x */
	cepi_emit_launch(launch, name, g, t.bm, t.bn, t.nt, t.smem, xn.s, w, y, e);
	buf_release(&xs);
	buf_release(&xc);
	buf_release(&xn);
	return 0;
}
