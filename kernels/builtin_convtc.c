/* conv_tc: forward convolution (groups == 1, 1D/2D/3D) as an implicit GEMM
 * on tensor cores, in 3xTF32 so the result keeps fp32 accuracy. Per image
 * (grid.z), M = output pixels, N = out channels, K = in channels x taps;
 * A[m][k] is gathered from the input (zero in the padding), B[k][n] =
 * w[n][k] (contiguous in k). A block computes a BM x BN tile with WM x WN
 * warps of (BM/WM) x (BN/WN) each in wmma m16n16k8 tf32 fragments.
 * Pipeline (two shared-memory stages): each thread gathers the next K
 * tile's A values into registers and cp.asyncs its part of the next B tile
 * while the warps compute the current one; one barrier per K tile.
 * Shared tiles: As[k][m] (stride BM + 8: the gather stores along m), Bs[n][k]
 * (stride BK + 4, rows of w copied as is); the epilogue stages C as
 * Cs[n][m] so the NCHW stores run along output pixels. */
#include "kernels/builtin_tmpl.h"

#include "kernels/builtin_conv.h"
#include "kernels/builtin_util.h"
#include "gen/tf32x3_cuh.h"
#include "gen/conv_tc_cuh.h"

struct ctc {
	int bm, bn, bk, wm, wn, nt, pxt, kst, smem;
};

static int pow2_in(int v, int lo, int hi)
{
	return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

static int ctc_read(const json_t *p, struct ctc *t, struct buf *err)
{
	int fm, fn, la;

	t->bm = bt_param(p, "BM", 128);
	t->bn = bt_param(p, "BN", 64);
	t->bk = bt_param(p, "BK", 32);
	t->wm = bt_param(p, "WM", 4);
	t->wn = bt_param(p, "WN", 2);
	if (!pow2_in(t->bm, 32, 256) || t->bn < 16 || t->bn > 256 || t->bn % 16 ||
	    (t->bk != 16 && t->bk != 32) || !pow2_in(t->wm, 1, 8) || !pow2_in(t->wn, 1, 8) ||
	    t->bm % (16 * t->wm) || t->bn % (16 * t->wn))
		return kf_err(err, "conv_tc: bad parameters (BM 32..256 a power of 2, BN a multiple "
				   "of 16 up to 256, BK 16 or 32, WM/WN powers of 2 tiling them)");
	t->nt = 32 * t->wm * t->wn;
	fm = t->bm / t->wm / 16;
	fn = t->bn / t->wn / 16;
	/* acc plus each tile's part take 16 registers a fragment: more than 8
	 * fragments, or over 256 threads (128 registers each), spilled */
	if (t->nt > 256 || fm * fn > 8)
		return kf_err(err, "conv_tc: %d threads, warp tile of %d fragments", t->nt, fm * fn);
	/* The gather: a thread owns PXT pixels (BM > NT) or one pixel at every
	 * KST-th k of the tile (NT > BM); both powers of 2, so they divide. */
	t->pxt = t->bm > t->nt ? t->bm / t->nt : 1;
	t->kst = t->nt > t->bm ? t->nt / t->bm : 1;
	la = t->pxt * (t->bk / t->kst);
	if (t->bk % t->kst || la < 1 || la > 32)
		return kf_err(err, "conv_tc: %d gathered values per thread (1 to 32)", la);
	/* Two stages of As + Bs, reused for the C tile. */
	t->smem = 2 * (t->bk * (t->bm + 8) + t->bn * (t->bk + 4));
	if (t->smem < t->bn * (t->bm + 4))
		t->smem = t->bn * (t->bm + 4);
	t->smem *= 4;
	if (t->smem > 227 * 1024)
		return kf_err(err, "conv_tc: %d bytes of shared memory", t->smem);
	return 0;
}

int tmpl_convtc_supports(const json_t *spec)
{
	struct cg g;
	int ok = cg_base_ok(spec, &g) && g.groups == 1 && !cg_separable(spec);

	cg_release(&g);
	return ok;
}

static void emit_head(struct buf *s, const struct ctc *t)
{
	buf_addf(s, "// template conv_tc (3xTF32 wmma implicit GEMM): BM=%d BN=%d BK=%d WM=%d WN=%d\n"
		    "#define BM %d\n#define BN %d\n#define BK %d\n#define WM %d\n#define WN %d\n"
		    "#define NT %d\n#define FM (BM / WM / 16)\n#define FN (BN / WN / 16)\n"
		    "#define SA (BK * (BM + 8))\n#define SB (BN * (BK + 4))\n"
		    "#define PXT %d\n#define KST %d\n#define KQ (BK / KST)\n",
		 t->bm, t->bn, t->bk, t->wm, t->wn, t->bm, t->bn, t->bk, t->wm, t->wn, t->nt,
		 t->pxt, t->kst);
	tmpl_tc_helpers(s);
}

/* Window origins once per thread; gather(kb) fills ra with the A tile at
 * kb, store_a writes it to As, load_b cp.asyncs the B tile. */
static void emit_loaders(struct buf *s)
{
	bt_cuh_section(s, conv_tc_cuh, "pixels");
	cg_emit_origin(s, "        ");
	bt_cuh_section(s, conv_tc_cuh, "gather_head");
	cg_emit_gather(s, "                ");
	bt_cuh_section(s, conv_tc_cuh, "gather_tail");
}

/* One K tile's 3xTF32 products into a fresh fragment, then FADDed into acc:
 * tensor-core accumulation truncates, so long sums drift past 1e-4. */
static void emit_mma(struct buf *s)
{
	bt_cuh_section(s, tf32x3_cuh, "part_init");
	buf_adds(s, "        // not unrolled: with the gathered registers live, unrolling spilled\n");
	bt_cuh_section(s, tf32x3_cuh, "split_kstep");
	tmpl_tc_emit_mma(s);
}

static void emit_kernel(struct buf *s, const struct cg *g, const struct ctc *t)
{
	emit_head(s, t);
	cg_emit_sig(s, "conv_tc", t->nt, g);
	bt_cuh_section(s, conv_tc_cuh, "kernel_head");
	emit_loaders(s);
	bt_cuh_section(s, conv_tc_cuh, "main_loop");
	emit_mma(s);
	bt_cuh_fill(s, conv_tc_cuh, "store", "BIAS", g->bias ? " + bias[co]" : "", NULL);
}

int tmpl_convtc_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	struct cg g;
	struct ctc t = { 0 };
	struct cg_names nm;

	if (!tmpl_convtc_supports(spec))
		return kf_err(err, "conv_tc: needs a forward convolution with groups == 1");
	if (ctc_read(p, &t, err))
		return -1;
	cg_read(spec, &g);
	cg_names_of(spec, &g, &nm);
	emit_kernel(s, &g, &t);
	buf_addf(s, "/*@launch\nconv_tc<<<dim3(ceil_div(%s * %s * %s, %d), ceil_div(%s, %d), %s), %d, %d>>>"
		    "(%s, %s, ",
		 g.e[E_OD].s, g.e[E_OH].s, g.e[E_OW].s, t.bm, g.e[E_CO].s, t.bn, g.e[E_N].s, t.nt,
		 t.smem, nm.x, nm.w);
	if (nm.b)
		buf_addf(s, "%s, ", nm.b);
	buf_adds(s, nm.y);
	cg_emit_args(s, &g);
	buf_adds(s, ");\n@*/\n");
	cg_release(&g);
	return 0;
}
