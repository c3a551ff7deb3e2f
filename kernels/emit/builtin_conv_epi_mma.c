/* conv_epi's mma.sync core (the default; "core": "wmma" picks the wmma one
 * of builtin_conv_epi.c): the implicit GEMM of builtin_conv_epi.c (M output
 * positions of a phase, N output channels of a group, K taps x channels,
 * tap-major, the same tap table) on gemm_epi's mma.sync K tile
 * (builtin_gemm_epi_mma.c: m16n8k8, tf32+bf16 or 3xTF32 split, each 32-wide
 * K tile's products FADDed into the sum: fp32-accurate), STAGES-deep cp.async
 * ring. A, the im2col of x, is gathered with 4-byte cp.async (zero-filled
 * off the image): a warp writes 8 rows x 4 k a copy, so that global reads run
 * along output positions and the shared writes hit 32 banks under the A
 * swizzle chunk c of row r at c ^ (4(r & 1) | ((r >> 1) & 3)), which keeps
 * the fragment reads conflict-free too. B is the weights repacked to
 * [G][tap][C_in/G][C_out/G] (16-byte cp.async rows when C_out/G % 4 == 0),
 * in gemm_epi's B layout. The C tile is staged as Cs[n][m] (stride BM + 1)
 * and stored along output positions, the epilogue applied. */
#include "kernels/emit/builtin_conv_epi.h"

#include <string.h>

#include "kernels/emit/builtin_gemm_epi_int.h"
#include "kernels/builtin_util.h"
#include "gen/conv_epi_mma_cuh.h"

struct cmma_tile {
	int bm, bn, wm, wn, cb, stages, bf, nt, smem;
};

static int pow2_in(int v, int lo, int hi)
{
	return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

static int tile_read(const struct cepi_geo *g, const json_t *p, struct cmma_tile *t,
		     struct buf *err)
{
	long long opg = cepi_opg(g), cpg = cepi_cpg(g);
	const json_t *sp = json_object_get(p, "split");
	int bk = bt_param(p, "BK", 0), mt, nq;

	if (sp && (!json_is_string(sp) || (strcmp(json_string_value(sp), "tf32bf16") &&
					    strcmp(json_string_value(sp), "3xtf32"))))
		return kf_err(err, "conv_tce: split must be \"tf32bf16\" or \"3xtf32\"");
	t->bf = !sp || !strcmp(json_string_value(sp), "tf32bf16");
	/* 128 x 128 on 2 x 4 warps; 128 x 64 and 128 x 32 for fewer channels */
	t->bm = bt_param(p, "BM", 0) ? bt_param(p, "BM", 0) : 128;
	t->bn = bt_param(p, "BN", 0) ? bt_param(p, "BN", 0) : opg > 64 ? 128 : opg > 32 ? 64 : 32;
	t->wn = t->bn >= 128 ? 4 : t->bn / 32;
	if (t->wn < 1)
		t->wn = 1;
	/* warp tiles of 32 rows (64 on 128 channels) */
	t->wm = t->bm / 32 < 8 / t->wn ? t->bm / 32 : 8 / t->wn;
	t->wm = bt_param(p, "WM", 0) ? bt_param(p, "WM", 0) : t->wm;
	t->wn = bt_param(p, "WN", 0) ? bt_param(p, "WN", 0) : t->wn;
	for (t->cb = 4; t->cb < 32 && t->cb < cpg;)
		t->cb <<= 1;
	t->cb = bt_param(p, "CB", 0) ? bt_param(p, "CB", 0) : t->cb;
	t->stages = bt_param(p, "STAGES", 0) ? bt_param(p, "STAGES", 0) : 4;
	/* BK is the wmma core's; this core's K tile is 32 */
	if (!pow2_in(t->bm, 64, 256) || !pow2_in(t->bn, 32, 256) || !pow2_in(t->wm, 1, 8) ||
	    !pow2_in(t->wn, 1, 8) || !pow2_in(t->cb, 4, 32) || t->stages < 2 || t->stages > 5 ||
	    (bk && bk != 8 && bk != 16 && bk != 32))
		return kf_err(err, "conv_tce: bad parameters for the mma core (BM 64..256, BN 32..256, "
				   "WM/WN, CB 4..32 powers of 2, STAGES 2..5)");
	t->nt = 32 * t->wm * t->wn;
	mt = t->bm / t->wm / 16;
	nq = t->bn / t->wn / 32;
	/* gemm_epi's mma tiling rules; the gather: 8 rows a warp per copy */
	if (t->nt < 64 || t->nt > 256 || mt < 1 || nq < 1 || mt * nq > 4 || t->bm % (16 * t->wm) ||
	    t->bn % (32 * t->wn) || t->bm % (8 * t->nt / 32) || (8 * t->bn) % t->nt)
		return kf_err(err, "conv_tce: mma tiles: 2..8 warps, warp tile (BM/WM) x (BN/WN) "
				   "16..64 x 32..128, at most 64 x 32 or 32 x 64");
	return cepi_smem_fit((long long)t->stages * (t->bm + t->bn) * 32 * 4, t->bn, t->bm + 1, 200, &t->smem,
			     err);
}

/* Weights to [G][tap][C_in/G][C_out/G]: a B tile row is C_out contiguous. */
void cepi_emit_repack(struct buf *s, const char *name, const struct cepi_geo *g)
{
	bt_cuh_fill(s, conv_epi_mma_cuh, "repack", "NAME", name, "TAPS", BT_INT(cepi_taps(g)),
		    "GROUPS", BT_INT(g->groups), "TRANSPOSED", BT_INT(g->transposed), NULL);
}

static void emit_head(struct buf *s, const char *name, const struct cepi_geo *g,
		      const struct cmma_tile *t, const struct epi *e)
{
	buf_addf(s, "// conv_epi (mma.sync %s implicit GEMM%s): BM=%d BN=%d WM=%d WN=%d CB=%d STAGES=%d\n"
		    "extern \"C\" __global__ void __launch_bounds__(%d, 1)\n",
		 t->bf ? "tf32+bf16" : "3xTF32", g->transposed ? ", transposed, by phase" : "", t->bm,
		 t->bn, t->wm, t->wn, t->cb, t->stages, t->nt);
	cepi_emit_sig(s, name, e);
	buf_addf(s, "    constexpr int BM = %d, BN = %d, BK = 32, WM = %d, WN = %d, STAGES = %d, NT = %d;\n"
		    "    constexpr int MT = BM / WM / 16, NQ = BN / WN / 32, SA = BM * BK, SB = BK * BN;\n"
		    "    constexpr int NW = NT / 32, PX = BM / (8 * NW);\n",
		 t->bm, t->bn, t->wm, t->wn, t->stages, t->nt);
	cepi_emit_geo_consts(s, g, t->cb);
}

void cepi_emit_geo_consts(struct buf *s, const struct cepi_geo *g, int cb)
{
	int tpt = 32 / cb, tt = (cepi_taps(g) + tpt - 1) / tpt * tpt;

	buf_addf(s, "    constexpr int CS = BM + 1;\n"
		    "    constexpr int CB = %d, TPT = BK / CB, TT = %d;\n"
		    "    constexpr int KD = %d, KH = %d, KW = %d, SD = %d, SH = %d, SW = %d;\n"
		    "    constexpr int PD = %d, PH = %d, PW = %d, DD = %d, DH = %d, DW = %d;\n"
		    "    constexpr int G = %d, TR = %d, T = KD * KH * KW;\n"
		    "    constexpr int FD = TR ? SD : 1, FH = TR ? SH : 1, FW = TR ? SW : 1;\n",
		 cb, tt, g->k[0], g->k[1], g->k[2], g->st[0], g->st[1], g->st[2], g->pad[0],
		 g->pad[1], g->pad[2], g->dil[0], g->dil[1], g->dil[2], g->groups, g->transposed);
}

/* Phase, group, channel tile, the tap table, the store's pixel table. */
void cepi_emit_block(struct buf *s, const struct cepi_geo *g)
{
	bt_cuh_section(s, conv_epi_mma_cuh, "block_head");
	/* PO: grid.x is (tile, phase) with the phase fastest */
	buf_adds(s, g->po ? "    const int ph = (int)(blockIdx.x % (FD * FH * FW));\n"
			  : "    const int ph = blockIdx.z;\n");
	bt_cuh_section(s, conv_epi_mma_cuh, "block_phase");
	buf_addf(s, "    const long long m0 = (long long)%s * BM;\n",
		 g->po ? "(blockIdx.x / (FD * FH * FW))" : "blockIdx.x");
	cepi_emit_taps(s);
}

/* The block, then this thread's gather rows. */
static void emit_setup(struct buf *s, const struct cepi_geo *g)
{
	cepi_emit_block(s, g);
	bt_cuh_section(s, conv_epi_mma_cuh, "setup");
}

/* The B tile from the repacked weights (16-byte rows when C_out/G % 4 == 0):
 * b_vec, b_one: the word offset of row r's channels 4q.. or cc in the core's
 * layout. The weights' index in 32 bits where they fit (sizes only shrink). */
void cepi_emit_load_b(struct buf *s, const struct cepi_geo *g, const char *b_vec, const char *b_one)
{
	const char *ix = (long long)cepi_taps(g) * g->val[CE_CI] * cepi_opg(g) < (1LL << 31) ? "int" : "long long";

	bt_cuh_fill(s, conv_epi_mma_cuh, "load_b", "B_VEC", b_vec, "IX", ix, "B_ONE", b_one, NULL);
}

/* load(stage, tile): A gathered (zero off the image, past the channels, for
 * the padding taps), B from the repacked weights; gemm_epi's layouts. */
static void emit_loader(struct buf *s, const struct cepi_geo *g)
{
	bt_cuh_section(s, conv_epi_mma_cuh, "loader");
	cepi_emit_load_b(s, g, "r * BN + ((q ^ (((r >> 2) & 3) << 1)) << 2)",
			 "r * BN + (((cc >> 2) ^ (((r >> 2) & 3) << 1)) << 2) + (cc & 3)");
	buf_adds(s, "    };\n");
}

/* The ring (gemm_epi_mma's), then acc staged as Cs[n][m]; the fragment
 * indices (g, t, ...) end with the block so the epilogue sees n, c, s, v. */
static void emit_main(struct buf *s, const struct cepi_geo *g, const struct cmma_tile *t)
{
	buf_adds(s, "    const unsigned sbase = kfg_smem(smem);\n");
	emit_loader(s, g);
	bt_cuh_section(s, conv_epi_mma_cuh, "main_head");
	/* rows wm0 + 16i + g (+ 8): r & 7 = g */
	gemm_emit_mma_ktile(s, t->bf, "((g & 1) << 2) | ((g >> 1) & 3)");
	bt_cuh_section(s, conv_epi_mma_cuh, "main_tail");
}

/* Cs[n][m] (smem, stride CS) to y, the epilogue applied. NT a multiple
 * of BM: a thread keeps one position (its image, offset and pixel test
 * read once) and steps over channels; else it steps over the flat tile. */
void cepi_emit_store(struct buf *s, const struct epi *e, int pos_fixed)
{
	const char *code = e && e->code ? e->code : "", *nl = e && e->code && *e->code ? "\n" : "";

	if (pos_fixed) {
		bt_cuh_fill(s, conv_epi_mma_cuh, "store_fixed", "CODE", code, "NL", nl, NULL);
		return;
	}
	bt_cuh_fill(s, conv_epi_mma_cuh, "store", "CODE", code, "NL", nl, NULL);
}

int cepi_emit_mma(struct buf *src, struct buf *launch, const char *name, const struct cepi_geo *g,
		  const char *x, const char *w, const char *y, const struct epi *e,
		  const json_t *tparams, struct buf *err)
{
	struct cmma_tile t = { 0 };
	long long mt = g->val[CE_N];

	if (tile_read(g, tparams, &t, err))
		return -1;
	for (int a = 0; a < 3; a++)
		mt *= cepi_q(g, a);
	/* grid.x < 2^31, grid.y < 65536 */
	if (cepi_grid_x(g, (mt + t.bm - 1) / t.bm) > (1LL << 31) - 1 ||
	    g->groups * ((cepi_opg(g) + t.bn - 1) / t.bn) > 65535)
		return 1;
	gemm_emit_common(src);
	gemm_emit_mma_helpers(src);
	cepi_emit_repack(src, name, g);
	emit_head(src, name, g, &t, e);
	emit_setup(src, g);
	emit_main(src, g, &t);
	/* the flat store: level 3's deep nets are near the source limit, past
	 * which the graph falls back to direct convs (a longer store made
	 * VGG19's 13th conv direct, 24% slower on the H200) */
	cepi_emit_store(src, e, 0);
	cepi_emit_launch(launch, name, g, t.bm, t.bn, t.nt, t.smem, x, w, y, e);
	return 0;
}
