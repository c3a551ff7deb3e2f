/* Templates for transposed convolutions 1D/2D/3D, grouped, dilated, strided
 * (spec attrs.transposed = true; PyTorch weight layout [C_in, C_out/G, k...]).
 *   convt:       gather-form direct kernel, one thread per output pixel and
 *                cot output channels; the block's weights in shared memory;
 *   convt_phase: convt for a stride along W, lanes ordered by W phase
 *                (ow % stride) so a warp's tap tests agree (no idle lanes).
 *   convt_igemm: stride 1 only: implicit GEMM (rows = output pixels, cols =
 *                output channels of a group, K = C_in/G x taps) with shared
 *                tiles and register blocking; weights are first repacked
 *                into a [G][K][C_out/G] scratch so B tiles load coalesced.
 * Every size comes from the launch block (size names), so the kernels are
 * right for any batch/extent; kernel, stride, padding, dilation and groups
 * are compile-time constants. */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/convt_cuh.h"

/* Geometry from attrs, padded to three spatial axes (D, H, W) like the
 * reference: a missing axis has extent 1, kernel 1, stride 1, no padding. */
struct geom {
	int nd, k[3], s[3], p[3], d[3], groups;
};

static int attr_axes(const json_t *a, const char *key, int nd, int dflt, int *v)
{
	const json_t *arr = json_object_get(a, key);

	for (int i = 0; i < 3; i++)
		v[i] = i < 3 - nd ? (dflt ? 1 : 0) : dflt;
	if (!arr)
		return 0;
	if (!json_is_array(arr) || (int)json_array_size(arr) != nd)
		return -1;
	for (int i = 0; i < nd; i++) {
		const json_t *e = json_array_get(arr, (size_t)i);
		if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > 64)
			return -1;
		v[3 - nd + i] = (int)json_integer_value(e);
	}
	return 0;
}

static int geom_of(const json_t *spec, struct geom *g)
{
	const json_t *a = json_object_get(spec, "attrs"), *x = bt_input(spec, 0);
	const json_t *w = bt_input(spec, 1), *y = bt_output(spec, 0), *gr;

	memset(g, 0, sizeof(*g));
	if (!json_is_true(json_object_get(a, "transposed")) || !x || !w || !y ||
	    bt_input(spec, 2) || json_is_true(json_object_get(a, "bias")))
		return -1;
	g->nd = bt_ndim(x) - 2;
	if (g->nd < 1 || g->nd > 3 || bt_ndim(w) != g->nd + 2 || bt_ndim(y) != g->nd + 2)
		return -1;
	gr = json_object_get(a, "groups");
	g->groups = gr ? (int)json_integer_value(gr) : 1;
	if (g->groups < 1 || attr_axes(a, "kernel", g->nd, 1, g->k) ||
	    attr_axes(a, "stride", g->nd, 1, g->s) || attr_axes(a, "padding", g->nd, 0, g->p) ||
	    attr_axes(a, "dilation", g->nd, 1, g->d))
		return -1;
	for (int i = 0; i < 3; i++)
		if (g->k[i] < 1 || g->s[i] < 1 || g->d[i] < 1)
			return -1;
	return 0;
}

static int taps(const struct geom *g)
{
	return g->k[0] * g->k[1] * g->k[2];
}

/* The launch arguments shared by both kernels: CI, CO, ID, IH, IW, OD, OH,
 * OW as expressions over size names; the batch into *n. */
static void size_args(const json_t *spec, const struct geom *g, struct buf *a, struct buf *n)
{
	const json_t *x = bt_input(spec, 0), *y = bt_output(spec, 0);

	bt_dims_expr(n, x, 0, 1);
	bt_dims_expr(a, x, 1, 2);
	buf_adds(a, ", ");
	bt_dims_expr(a, y, 1, 2);
	for (int t = 0; t < 2; t++)
		for (int i = 0; i < 3; i++) {
			buf_adds(a, ", ");
			if (i < 3 - g->nd)
				buf_adds(a, "1");
			else
				bt_dims_expr(a, t ? y : x, 2 + i - (3 - g->nd), 3 + i - (3 - g->nd));
		}
}

static void geom_defines(struct buf *s, const struct geom *g)
{
	buf_addf(s, "#define KD %d\n#define KH %d\n#define KW %d\n#define SD %d\n#define SH %d\n"
		    "#define SW %d\n#define PD %d\n#define PH %d\n#define PW %d\n#define DD %d\n"
		    "#define DH %d\n#define DW %d\n#define G %d\n#define T (KD * KH * KW)\n",
		 g->k[0], g->k[1], g->k[2], g->s[0], g->s[1], g->s[2], g->p[0], g->p[1], g->p[2],
		 g->d[0], g->d[1], g->d[2], g->groups);
}

/* Channels per group from the spec's values (-1 if unknown). */
static void channels(const json_t *spec, const struct geom *g, long long *cpg, long long *opg)
{
	long long ci = bt_dims_value(spec, bt_input(spec, 0), 1, 2);
	long long co = bt_dims_value(spec, bt_output(spec, 0), 1, 2);

	*cpg = ci > 0 && ci % g->groups == 0 ? ci / g->groups : -1;
	*opg = co > 0 && co % g->groups == 0 ? co / g->groups : -1;
}

static int convt_supports(const json_t *spec)
{
	struct geom g;
	long long cpg, opg, n = bt_dims_value(spec, bt_input(spec, 0), 0, 1);

	if (geom_of(spec, &g))
		return 0;
	channels(spec, &g, &cpg, &opg);
	/* grid.y = C_out / cot, grid.z = batch; weights of one channel fit smem */
	return cpg > 0 && opg > 0 && n > 0 && n < 65536 && opg * g.groups < 65536 &&
	       cpg * taps(&g) * 4 <= 48 * 1024;
}

static int convt_emit(const json_t *spec, const json_t *p, int phase, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 256), cot = bt_param(p, "cot", 1);
	struct geom g;
	long long cpg, opg;
	struct buf a = BUF_INIT, n = BUF_INIT, osp = BUF_INIT, co = BUF_INIT, ci = BUF_INIT;
	const json_t *y = bt_output(spec, 0);

	if (geom_of(spec, &g))
		return kf_err(err, "convt: not a transposed convolution");
	if (block < 64 || block > 1024 || block % 32 || (cot != 1 && cot != 2 && cot != 4 && cot != 8))
		return kf_err(err, "convt: bad parameters (block %d, cot %d)", block, cot);
	if (phase && g.s[2] == 1)
		return kf_err(err, "convt_phase: wants a stride along W");
	channels(spec, &g, &cpg, &opg);
	/* cot channels of one group per block, and their weights within 48 KB */
	while (cot > 1 && (opg % cot || cpg * taps(&g) * cot * 4 > 48 * 1024))
		cot /= 2;
	size_args(spec, &g, &a, &n);
	if (phase) {
		/* grid.x: W tiles of SW * (block / SW) outputs times the OD*OH rows */
		buf_addf(&osp, "ceil_div(");
		bt_dims_expr(&osp, y, bt_ndim(y) - 1, bt_ndim(y));
		buf_addf(&osp, ", %d) * ", g.s[2] * (block / g.s[2]));
		bt_dims_expr(&osp, y, 2, bt_ndim(y) - 1);
	} else {
		buf_adds(&osp, "ceil_div(");
		bt_dims_expr(&osp, y, 2, bt_ndim(y));
		buf_addf(&osp, ", %d)", block);
	}
	bt_dims_expr(&co, y, 1, 2);
	bt_dims_expr(&ci, bt_input(spec, 0), 1, 2);
	buf_addf(s, "// template %s: block=%d cot=%d (gather-form direct transposed conv)\n",
		 phase ? "convt_phase" : "convt", block, cot);
	geom_defines(s, &g);
	buf_addf(s, "#define BLOCK %d\n#define COT %d\n", block, cot);
	bt_cuh_section(s, convt_cuh, "direct_head");
	if (phase)
		/* Phase-major lanes: a warp holds outputs of one W phase (ow % SW),
		 * so its taps' divisibility tests agree and no lane idles. */
		bt_cuh_section(s, convt_cuh, "direct_tiled_pixel");
	else
		bt_cuh_section(s, convt_cuh, "direct_flat_pixel");
	bt_cuh_section(s, convt_cuh, "direct_body");
	buf_addf(s, "/*@launch\nconvt_direct<<<dim3(%s, %s / %d, %s), %d, %s / %d * %d * 4 * %d>>>"
		    "(%s, %s, %s, %s);\n@*/\n",
		 osp.s, co.s, cot, n.s, block, ci.s, g.groups, taps(&g), cot,
		 bt_name(bt_input(spec, 0)), bt_name(bt_input(spec, 1)), bt_name(y), a.s);
	buf_release(&a);
	buf_release(&n);
	buf_release(&osp);
	buf_release(&co);
	buf_release(&ci);
	return 0;
}

static int convt_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	return convt_emit(spec, p, 0, s, err);
}

/* convt_phase: convt with lanes in W-phase order, for a stride along W. */
static int phase_supports(const json_t *spec)
{
	struct geom g;

	return convt_supports(spec) && !geom_of(spec, &g) && g.s[2] > 1;
}

static int phase_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	return convt_emit(spec, p, 1, s, err);
}

/* ---- convt_igemm: stride 1 makes a transposed conv a forward conv with a
 * flipped kernel; gathered directly as out[o] += x[o + pad - k*dil] * w[k]. */

static int igemm_supports(const json_t *spec)
{
	struct geom g;
	long long cpg, opg, m = bt_dims_value(spec, bt_output(spec, 0), 0, 1);

	if (geom_of(spec, &g) || g.s[0] != 1 || g.s[1] != 1 || g.s[2] != 1)
		return 0;
	channels(spec, &g, &cpg, &opg);
	return cpg > 0 && opg > 0 && m > 0 && g.groups < 65536;
}

/* Loads A element (kk, ar) of the tile at k0 into V (0 outside). */
static void igemm_aload(struct buf *s, const char *v)
{
	bt_cuh_fill(s, convt_cuh, "igemm_aload", "DST", v, NULL);
}

static void igemm_bload(struct buf *s, const char *v)
{
	buf_addf(s, "            {\n"
		    "                const int kk = i / BN, cc = i %% BN, kidx = k0 + kk, oc = n0 + cc;\n"
		    "                %s = (kidx < K && oc < opg) ? __ldg(wg + (long long)kidx * opg + oc) : 0.0f;\n"
		    "            }\n", v);
}

static int igemm_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int BM = bt_param(p, "BM", 128), BN = bt_param(p, "BN", 64), BK = bt_param(p, "BK", 16);
	int TM = bt_param(p, "TM", 8), TN = bt_param(p, "TN", 4), pf = bt_param(p, "prefetch", 0);
	int nt, astep;
	struct geom g;
	long long cpg, opg;
	struct buf a = BUF_INIT, n = BUF_INIT, ci = BUF_INIT, co = BUF_INIT, m = BUF_INIT;
	const json_t *x = bt_input(spec, 0), *w = bt_input(spec, 1), *y = bt_output(spec, 0);

	if (!igemm_supports(spec) || geom_of(spec, &g))
		return kf_err(err, "convt_igemm: wants a stride-1 transposed convolution");
	if (BM % TM || BN % TN || BM < 16 || BN < 8 || BM > 256 || BN > 128 || BK < 4 || BK > 32 ||
	    TM < 1 || TN < 1 || TM > 8 || TN > 8 || (pf != 0 && pf != 1))
		return kf_err(err, "convt_igemm: bad tile parameters");
	nt = (BM / TM) * (BN / TN);
	/* each thread loads A from one fixed row (its decode done once) */
	if (nt < 64 || nt > 1024 || nt % BM)
		return kf_err(err, "convt_igemm: %d threads do not tile BM=%d BN=%d", nt, BM, BN);
	astep = nt / BM;
	channels(spec, &g, &cpg, &opg);
	size_args(spec, &g, &a, &n);
	bt_dims_expr(&ci, x, 1, 2);
	bt_dims_expr(&co, y, 1, 2);
	bt_dims_expr(&m, y, 0, 1);
	buf_adds(&m, " * ");
	bt_dims_expr(&m, y, 2, bt_ndim(y));
	buf_addf(s, "// template convt_igemm: BM=%d BN=%d BK=%d TM=%d TN=%d prefetch=%d (stride 1: implicit GEMM)\n",
		 BM, BN, BK, TM, TN, pf);
	geom_defines(s, &g);
	buf_addf(s, "#define BM %d\n#define BN %d\n#define BK %d\n#define TM %d\n#define TN %d\n#define NT %d\n"
		    "#define ASTEP %d\n#define NA ((BK + ASTEP - 1) / ASTEP)\n#define NBL ((BK * BN + NT - 1) / NT)\n",
		 BM, BN, BK, TM, TN, nt, astep);
	/* Weights [C_in][opg][T] -> [G][K = cpg*T][opg]: B tile rows contiguous. */
	bt_cuh_section(s, convt_cuh, "igemm_repack_head");
	if (pf) {
		bt_cuh_section(s, convt_cuh, "igemm_prefetch");
		igemm_aload(s, "ra[q]");
		bt_cuh_section(s, convt_cuh, "igemm_prefetch_b");
		igemm_bload(s, "rb[q]");
		bt_cuh_section(s, convt_cuh, "igemm_loop");
		igemm_aload(s, "ra[q]");
		bt_cuh_section(s, convt_cuh, "igemm_loop_b");
		igemm_bload(s, "rb[q]");
		buf_adds(s, "        }\n"
			    "        }\n");
	} else {
		bt_cuh_section(s, convt_cuh, "igemm_simple_loop");
		igemm_aload(s, "As[kk][ar]");
		buf_adds(s, "#pragma unroll\n"
			    "        for (int i = tid; i < BK * BN; i += NT)\n");
		igemm_bload(s, "Bs[kk][cc]");
		buf_adds(s, "        __syncthreads();\n");
	}
	bt_emit_tile_fma(s, "tr + i * (BM / TM)");
	bt_cuh_section(s, convt_cuh, "igemm_store");
	buf_addf(s, "/*@launch\nscratch float wp[%s * %s / %d * %d];\n"
		    "convt_repack<<<ceil_div(%s * %s / %d * %d, 256), 256>>>(%s, wp, %s, %s);\n"
		    "convt_igemm<<<dim3(ceil_div(%s, %d), ceil_div(%s / %d, %d), %d), %d>>>(%s, wp, %s, %s, %s);\n@*/\n",
		 ci.s, co.s, g.groups, taps(&g), ci.s, co.s, g.groups, taps(&g), bt_name(w), ci.s, co.s,
		 m.s, BM, co.s, g.groups, BN, g.groups, nt, bt_name(x), bt_name(y), n.s, a.s);
	buf_release(&a);
	buf_release(&n);
	buf_release(&ci);
	buf_release(&co);
	buf_release(&m);
	return 0;
}

const struct tmpl_def tmpl_convt_defs[] = {
	{ "convt", convt_supports, convt_render, "{\"block\": 256, \"cot\": 1}" },
	{ "convt_phase", phase_supports, phase_render, "{\"block\": 256, \"cot\": 4}" },
	{ "convt_igemm", igemm_supports, igemm_render,
	  "{\"BM\": 128, \"BN\": 64, \"BK\": 16, \"TM\": 8, \"TN\": 4, \"prefetch\": 0}" },
	{ NULL, NULL, NULL, NULL },
};
