/* conv_epi_emit: forward and transposed convolution (1D/2D/3D, stride,
 * padding, dilation, groups) as an implicit GEMM on tensor cores, with the
 * caller's epilogue at the store. tparams "core": "mma" (the default) goes
 * to builtin_conv_epi_mma.c, "wgmma" and "auto" (sm_90a; what the graph
 * passes) to builtin_conv_epi_wg.c; "wmma", this file's kernel: 3xTF32 (wmma
 * m16n16k8; each K tile's products in a fresh fragment, FADDed into the
 * accumulator: fp32-accurate). The geometry below is every core's.
 *   M = batch x output positions (of one phase, below), N = C_out / groups
 *   (grid.y walks groups x channel tiles), K = taps x C_in / groups, ordered
 *   tap-major: a K tile holds TPT taps of CB channels, so a thread's gather
 *   is a pixel offset plus a tap offset plus c * IS, no divisions.
 *   Transposed with stride > 1: the outputs are split by phase (o mod
 *   stride per axis, grid.z); in a phase every tap either always or never
 *   meets an input, so the block runs over its valid taps only (no zero
 *   taps multiplied) and input = j + (phase + pad - k * dil) / stride.
 * A first kernel repacks the weights to [G][tap][C_out/G][C_in/G], so a
 * B tile row is contiguous channels (16-byte cp.async). The C tile is
 * staged as Cs[n][m]: the NC(D)HW store runs along output positions. */
#include "kernels/emit/builtin_conv_epi.h"

#include <stdio.h>
#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/tf32x3_cuh.h"
#include "gen/conv_epi_cuh.h"
#include "gen/tc_cp_async_cuh.h"

struct cepi_tile {
	int bm, bn, bk, wm, wn, cb, nt, pxt, kst, smem;
};

static int pow2_in(int v, int lo, int hi)
{
	return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

int cepi_supported(const struct cepi_geo *g, struct buf *why)
{
	long long m = g->val[CE_N];

	for (int a = 0; a < 3; a++) {
		if (g->k[a] < 1 || g->st[a] < 1 || g->dil[a] < 1 || g->pad[a] < 0 || g->k[a] > 64 ||
		    g->st[a] > 64 || g->dil[a] > 64 || g->pad[a] > 4096)
			return buf_adds(why, "kernel/stride/dilation/padding out of range"), 1;
		m *= cepi_q(g, a);
	}
	for (int i = 0; i < CE_NSZ; i++)
		if (g->val[i] < 1 || g->val[i] > (1LL << 31) - 1)
			return buf_adds(why, "a size is out of range"), 1;
	if (g->groups < 1 || g->val[CE_CI] % g->groups || g->val[CE_CO] % g->groups)
		return buf_adds(why, "groups do not divide the channels"), 1;
	/* a 16-wide wmma channel tile over fewer than 8 channels is mostly waste */
	if (cepi_opg(g) < 8)
		return buf_adds(why, "fewer than 8 output channels per group"), 1;
	if (cepi_taps(g) > 512)
		return buf_adds(why, "over 512 kernel taps"), 1;
	if (cepi_phases(g) > 4096)
		return buf_adds(why, "over 4096 stride phases"), 1;
	/* int offsets inside an image, 64-bit across the batch */
	if (g->val[CE_ID] * g->val[CE_IH] * g->val[CE_IW] > (1LL << 30) ||
	    g->val[CE_OD] * g->val[CE_OH] * g->val[CE_OW] > (1LL << 30) || m > (1LL << 40))
		return buf_adds(why, "too large"), 1;
	return 0;
}

/* Default tiles: the channel tile follows C_out / groups, the channel
 * block CB the (render-time) C_in / groups. */
static void tile_defaults(const struct cepi_geo *g, struct cepi_tile *t)
{
	long long opg = cepi_opg(g), cpg = cepi_cpg(g);

	t->bm = 128, t->bn = 64, t->bk = 32, t->wm = 4, t->wn = 2;
	if (opg >= 128)
		t->bn = 128, t->wm = 2, t->wn = 4;
	else if (opg <= 16)
		t->bn = 16, t->bm = 256, t->wm = 8, t->wn = 1;
	else if (opg <= 32)
		t->bn = 32;
	t->cb = 4;
	while (t->cb < 32 && t->cb < cpg)
		t->cb <<= 1;
}

/* A parameter, 0 or absent: the shape's default. */
static int pick(const json_t *p, const char *name, int dflt)
{
	int v = bt_param(p, name, 0);

	return v ? v : dflt;
}

static int tile_read(const struct cepi_geo *g, const json_t *p, struct cepi_tile *t,
		     struct buf *err)
{
	int fm, fn, la, st;

	tile_defaults(g, t);
	t->bm = pick(p, "BM", t->bm);
	t->bn = pick(p, "BN", t->bn);
	t->bk = pick(p, "BK", t->bk);
	/* warps follow the tile unless given: up to 8, 4 across 128 channels */
	if (!bt_param(p, "WN", 0))
		for (t->wn = t->bn >= 128 ? 4 : t->bn >= 32 ? 2 : 1; t->wn > 1 && t->bn % (16 * t->wn);)
			t->wn /= 2;
	if (!bt_param(p, "WM", 0))
		for (t->wm = 8 / t->wn; t->wm > 1 && t->bm % (16 * t->wm);)
			t->wm /= 2;
	t->wm = pick(p, "WM", t->wm);
	t->wn = pick(p, "WN", t->wn);
	t->cb = pick(p, "CB", t->cb < t->bk ? t->cb : t->bk);
	if (!pow2_in(t->bm, 32, 256) || t->bn < 16 || t->bn > 256 || t->bn % 16 ||
	    (t->bk != 8 && t->bk != 16 && t->bk != 32) || !pow2_in(t->wm, 1, 8) ||
	    !pow2_in(t->wn, 1, 8) || t->bm % (16 * t->wm) || t->bn % (16 * t->wn) ||
	    !pow2_in(t->cb, 4, t->bk))
		return kf_err(err, "conv_tce: bad parameters (BM 32..256 a power of 2, BN a multiple "
				   "of 16 up to 256, BK 8, 16 or 32, WM/WN powers of 2 tiling them, "
				   "CB a power of 2 from 4 to BK)");
	t->nt = 32 * t->wm * t->wn;
	fm = t->bm / t->wm / 16;
	fn = t->bn / t->wn / 16;
	/* acc and the tile's part take 16 registers a fragment */
	if (t->nt > 256 || fm * fn > 8)
		return kf_err(err, "conv_tce: %d threads, warp tile of %d fragments", t->nt, fm * fn);
	t->pxt = t->bm > t->nt ? t->bm / t->nt : 1;
	t->kst = t->nt > t->bm ? t->nt / t->bm : 1;
	la = t->pxt * (t->bk / t->kst);
	if (t->bk % t->kst || la < 1 || la > 32)
		return kf_err(err, "conv_tce: %d gathered values per thread (1 to 32)", la);
	st = t->bk * (t->bm + 8) + t->bn * (t->bk + 4);
	if (cepi_smem_fit(2LL * st * 4, t->bn, t->bm + 4, 200, &t->smem, err))
		return -1;
	return 0;
}

/* cp.async wrappers, once per candidate (several kernels may share it). */
static void emit_helpers(struct buf *s)
{
	bt_cuh_section(s, conv_epi_cuh, "helpers");
	bt_cuh_fill(s, tc_cp_async_cuh, "cp_async", "P", "cepi_", "CP_COMMIT", "cepi_commit", NULL);
	bt_cuh_section(s, conv_epi_cuh, "helpers_end");
}

static void emit_repack(struct buf *s, const char *name, const struct cepi_geo *g)
{
	bt_cuh_fill(s, conv_epi_cuh, "repack", "NAME", name, "TAPS", BT_INT(cepi_taps(g)),
		    "GROUPS", BT_INT(g->groups), "TRANSPOSED", BT_INT(g->transposed), NULL);
}

static void emit_consts(struct buf *s, const struct cepi_geo *g, const struct cepi_tile *t)
{
	int tpt = t->bk / t->cb, tt = (cepi_taps(g) + tpt - 1) / tpt * tpt;

	buf_addf(s, "    constexpr int BM = %d, BN = %d, BK = %d, WM = %d, WN = %d, NT = %d;\n"
		    "    constexpr int FM = BM / WM / 16, FN = BN / WN / 16, PXT = %d, KST = %d, KQ = BK / KST;\n"
		    "    constexpr int CB = %d, TPT = BK / CB, TT = %d, SA = BK * (BM + 8), SB = BN * (BK + 4);\n"
		    "    constexpr int KD = %d, KH = %d, KW = %d, SD = %d, SH = %d, SW = %d;\n"
		    "    constexpr int PD = %d, PH = %d, PW = %d, DD = %d, DH = %d, DW = %d;\n"
		    "    constexpr int G = %d, TR = %d, T = KD * KH * KW;\n"
		    "    constexpr int FD = TR ? SD : 1, FH = TR ? SH : 1, FW = TR ? SW : 1;\n",
		 t->bm, t->bn, t->bk, t->wm, t->wn, t->nt, t->pxt, t->kst, t->cb, tt,
		 g->k[0], g->k[1], g->k[2], g->st[0], g->st[1], g->st[2], g->pad[0], g->pad[1],
		 g->pad[2], g->dil[0], g->dil[1], g->dil[2], g->groups, g->transposed);
}

int cepi_smem_fit(long long pipe, int bn, int pitch, int limit_kb, int *smem, struct buf *err)
{
	long long cs = (long long)bn * pitch * 4, b = pipe > cs ? pipe : cs;

	if (b > limit_kb * 1024LL)
		return kf_err(err, "conv_tce: %lld bytes of shared memory", b);
	*smem = (int)b;
	return 0;
}

/* The phase's tap table (both cores): valid taps first, each with its
 * weight index and input offset per axis; past them an offset that fails
 * every bounds test. Needs tid, NT, TT, CB, TPT, the geometry constants,
 * fd/fh/fw, cpg and tab_*; defines ntv, cch and ntiles (K tiles). */
void cepi_emit_taps(struct buf *s)
{
	bt_cuh_section(s, conv_epi_cuh, "taps");
}

/* Block setup: phase, group, channel tile; the tap table (the phase's
 * valid taps: weight index and input offset per axis; past the end an
 * offset that fails every bounds test); this thread's pixels. */
static void emit_setup(struct buf *s)
{
	bt_cuh_section(s, conv_epi_cuh, "setup_head");
	cepi_emit_taps(s);
	bt_cuh_section(s, conv_epi_cuh, "setup_pixels");
}

/* gather(tile): the A tile into registers ra; store_a: ra to As[k][m];
 * load_b: cp.async of the B tile to Bs[n][k] (zero past the channels and
 * for the padding taps). */
static void emit_loaders(struct buf *s)
{
	bt_cuh_section(s, conv_epi_cuh, "loaders");
}

static void emit_mma(struct buf *s)
{
	bt_cuh_section(s, tf32x3_cuh, "part_init");
	bt_cuh_section(s, tf32x3_cuh, "split_kstep");
	bt_cuh_section(s, tf32x3_cuh, "products");
	buf_adds(s, "        // tensor-core accumulation truncates: each tile's sum FADDed in fp32\n");
	bt_cuh_section(s, tf32x3_cuh, "fadd");
}

static void emit_kernel(struct buf *s, const char *name, const struct cepi_geo *g,
			const struct cepi_tile *t, const struct epi *e)
{
	buf_addf(s, "// conv_epi (3xTF32 wmma implicit GEMM%s): BM=%d BN=%d BK=%d WM=%d WN=%d CB=%d\n"
		    "extern \"C\" __global__ void __launch_bounds__(%d)\n",
		 g->transposed ? ", transposed, by phase" : "", t->bm, t->bn, t->bk, t->wm, t->wn,
		 t->cb, t->nt);
	cepi_emit_sig(s, name, e);
	emit_consts(s, g, t);
	emit_setup(s);
	emit_loaders(s);
	bt_cuh_section(s, conv_epi_cuh, "main_loop");
	emit_mma(s);
	bt_cuh_fill(s, conv_epi_cuh, "store", "CODE", e && e->code ? e->code : "",
		    "NL", e && e->code && *e->code ? "\n" : "", NULL);
}

/* Every core's GEMM kernel signature, from its name on: the arguments
 * cepi_emit_launch passes. */
void cepi_emit_sig(struct buf *s, const char *name, const struct epi *e)
{
	buf_addf(s, "%s(const float* __restrict__ x, const float* __restrict__ wp, float* __restrict__ y,\n"
		    "    long long NB, long long CI, long long CO, long long ID, long long IH, long long IW,\n"
		    "    long long OD, long long OH, long long OW%s)\n{\n",
		 name, e && e->params ? e->params : "");
}

/* Launch expressions. */
static void q_expr(struct buf *o, const struct cepi_geo *g, int a)
{
	if (g->transposed && g->st[a] > 1)
		buf_addf(o, "ceil_div(%s, %d)", g->sz[CE_OD + a], g->st[a]);
	else
		buf_addf(o, "(%s)", g->sz[CE_OD + a]);
}

void cepi_emit_launch(struct buf *l, const char *name, const struct cepi_geo *g, int bm, int bn,
		      int nt, int smem, const char *x, const char *w, const char *y,
		      const struct epi *e)
{
	struct buf wn = BUF_INIT;

	buf_addf(&wn, "(%s) * ((%s) / %d) * %d", g->sz[CE_CI], g->sz[CE_CO], g->groups, cepi_taps(g));
	buf_addf(l, "scratch float %s_wp[%s];\n"
		    "%s_wrepack<<<ceil_div(%s, 256), 256>>>(%s, %s_wp, %s, %s);\n",
		 name, wn.s, name, wn.s, w, name, g->sz[CE_CI], g->sz[CE_CO]);
	buf_addf(l, "%s<<<dim3(ceil_div((%s) * ", name, g->sz[CE_N]);
	for (int a = 0; a < 3; a++) {
		q_expr(l, g, a);
		buf_adds(l, a < 2 ? " * " : "");
	}
	if (g->po)	/* the phases in grid.x, fastest (cepi_emit_block) */
		buf_addf(l, ", %d) * %d, %d * ceil_div((%s) / %d, %d), 1), %d, %d>>>(%s, %s_wp, %s", bm,
			 cepi_phases(g), g->groups, g->sz[CE_CO], g->groups, bn, nt, smem, x, name, y);
	else
		buf_addf(l, ", %d), %d * ceil_div((%s) / %d, %d), %d), %d, %d>>>(%s, %s_wp, %s", bm,
			 g->groups, g->sz[CE_CO], g->groups, bn, cepi_phases(g), nt, smem, x, name, y);
	buf_addf(l, ", %s, %s, %s, %s, %s, %s, %s, %s, %s%s);\n", g->sz[CE_N], g->sz[CE_CI],
		 g->sz[CE_CO], g->sz[CE_ID], g->sz[CE_IH], g->sz[CE_IW], g->sz[CE_OD], g->sz[CE_OH],
		 g->sz[CE_OW], e && e->args ? e->args : "");
	buf_release(&wn);
}

static int name_ok(const char *n)
{
	if (!n || !*n || strlen(n) > 64 || !((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || *n == '_'))
		return 0;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') || (*n >= '0' && *n <= '9') ||
		      *n == '_'))
			return 0;
	return 1;
}

int cepi_emit(struct buf *src, struct buf *launch, const char *name, const struct cepi_geo *g,
	      const char *x, const char *w, const char *y, const struct epi *e,
	      const json_t *tparams, struct buf *err)
{
	struct cepi_tile t = { 0 };
	struct buf why = BUF_INIT;
	long long mt = g->val[CE_N];
	const json_t *core = json_object_get(tparams, "core");
	int rc = cepi_supported(g, &why), po = bt_param(tparams, "PO", 1);
	struct cepi_geo gp = *g;

	buf_release(&why);
	if (rc)
		return 1;
	if (po != 0 && po != 1)
		return kf_err(err, "conv_tce: PO must be 0 or 1");
	gp.po = po && cepi_phases(g) > 1;	/* the mma and wgmma cores */
	if (!name_ok(name) || !x || !w || !y)
		return kf_err(err, "conv_epi: a kernel name and the tensors' names are needed");
	/* the graph passes "wgmma" (sm_90a) or "mma" (sm_80; its conv_mma) */
	if (core && (!json_is_string(core) ||
		     (strcmp(json_string_value(core), "wmma") && strcmp(json_string_value(core), "mma") &&
		      strcmp(json_string_value(core), "wgmma") && strcmp(json_string_value(core), "auto"))))
		return kf_err(err, "conv_tce: core must be \"mma\" (default), \"wgmma\" (\"auto\" "
				   "means it too) or \"wmma\"");
	if (core && (!strcmp(json_string_value(core), "wgmma") || !strcmp(json_string_value(core), "auto"))) {
		rc = cepi_emit_pw(src, launch, name, g, x, w, y, e, tparams, "wgmma", err);
		if (rc != 1)
			return rc;
		rc = cepi_emit_wg(src, launch, name, &gp, x, w, y, e, tparams, err);
		if (rc != 1)
			return rc;
	}
	if (!core || strcmp(json_string_value(core), "wmma")) {
		rc = cepi_emit_pw(src, launch, name, g, x, w, y, e, tparams, "mma", err);
		if (rc != 1)
			return rc;
		return cepi_emit_mma(src, launch, name, &gp, x, w, y, e, tparams, err);
	}
	if (tile_read(g, tparams, &t, err))
		return -1;
	for (int a = 0; a < 3; a++)
		mt *= cepi_q(g, a);
	/* grid.x < 2^31, grid.y < 65536 */
	if ((mt + t.bm - 1) / t.bm > (1LL << 31) - 1 ||
	    g->groups * ((cepi_opg(g) + t.bn - 1) / t.bn) > 65535)
		return 1;
	emit_helpers(src);
	emit_repack(src, name, g);
	emit_kernel(src, name, g, &t, e);
	cepi_emit_launch(launch, name, g, t.bm, t.bn, t.nt, t.smem, x, w, y, e);
	return 0;
}

/* The node's literal shape as launch expressions. */
int conv_epi_emit(struct buf *src, struct buf *launch, const char *name,
		  const struct conv_shape *sh, const char *x, const char *w, const char *y,
		  const struct epi *e, const json_t *tparams, struct buf *err)
{
	struct cepi_geo g;
	char lit[CE_NSZ][24];
	int nd;

	if (!sh || sh->dims < 1 || sh->dims > 3)
		return 1;
	memset(&g, 0, sizeof(g));
	nd = sh->dims;
	g.transposed = !!sh->transposed;
	g.groups = sh->groups;
	g.val[CE_N] = sh->N;
	g.val[CE_CI] = sh->C_in;
	g.val[CE_CO] = sh->C_out;
	for (int a = 0; a < 3; a++) {
		int i = a - (3 - nd), in = i >= 0;

		g.k[a] = in ? sh->kernel[i] : 1;
		g.st[a] = in ? sh->stride[i] : 1;
		g.pad[a] = in ? sh->padding[i] : 0;
		g.dil[a] = in ? sh->dilation[i] : 1;
		g.val[CE_ID + a] = in ? sh->in_sp[i] : 1;
		g.val[CE_OD + a] = in ? sh->out_sp[i] : 1;
		/* the output extent the node claims must be the convolution's */
		if (in) {
			long long want = g.transposed
				? (sh->in_sp[i] - 1) * sh->stride[i] - 2LL * sh->padding[i] +
					  (long long)sh->dilation[i] * (sh->kernel[i] - 1) + sh->output_padding[i] + 1
				: sh->stride[i] < 1 ? -1
				: (sh->in_sp[i] + 2LL * sh->padding[i] -
				   (long long)sh->dilation[i] * (sh->kernel[i] - 1) - 1) / sh->stride[i] + 1;
			if (want != sh->out_sp[i] || sh->output_padding[i] < 0 ||
			    (sh->output_padding[i] && !g.transposed))
				return 1;
		}
	}
	for (int i = 0; i < CE_NSZ; i++) {
		snprintf(lit[i], sizeof(lit[i]), "%lld", g.val[i]);
		g.sz[i] = lit[i];
	}
	return cepi_emit(src, launch, name, &g, x, w, y, e, tparams, err);
}
