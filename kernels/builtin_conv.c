/* Templates for forward convolutions: standard, dilated, strided, depthwise,
 * pointwise, 1D/2D/3D (transposed ones belong to builtin_convt.c).
 *   conv:       direct convolution, a thread per output pixel (PX of them) for
 *               COB output channels whose weights sit in shared memory.
 *   conv_igemm: implicit GEMM (output pixels x out channels by in channels x
 *               taps) with shared-memory tiles gathered on the fly and a
 *               TM x TN register tile per thread; groups == 1 only.
 *   conv_dw:    depthwise (groups == channels): a block per output tile of
 *               one channel plane, the input tile and halo in shared memory.
 *   conv_tc:    conv_igemm's GEMM on tensor cores in 3xTF32 (builtin_convtc.c).
 * Spatial axes are padded to three (D, H, W; missing ones of size 1), so one
 * kernel text serves 1D, 2D and 3D. Problem 86 (depthwise then pointwise)
 * runs a depthwise kernel into a scratch tensor, then a 1x1 convolution. */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/builtin_conv.h"
#include "kernels/builtin_util.h"
#include "gen/conv_cuh.h"

static const json_t *attr(const json_t *spec, const char *name)
{
	return json_object_get(json_object_get(spec, "attrs"), name);
}

static int is_transposed(const json_t *spec)
{
	return json_is_true(attr(spec, "transposed"));
}

int cg_separable(const json_t *spec)
{
	return json_is_true(attr(spec, "pointwise"));
}

/* attrs[name] (nd values) into v[3], right-aligned, missing axes = dflt. */
static int read3(const json_t *spec, const char *name, int nd, int dflt, int v[3])
{
	const json_t *a = attr(spec, name);

	for (int i = 0; i < 3; i++)
		v[i] = dflt;
	if (!json_is_array(a) || (int)json_array_size(a) != nd)
		return -1;
	for (int i = 0; i < nd; i++) {
		const json_t *x = json_array_get(a, (size_t)i);
		if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > 4096)
			return -1;
		v[3 - nd + i] = (int)json_integer_value(x);
	}
	return 0;
}

static void cg_init(struct cg *g)
{
	memset(g, 0, sizeof(*g));
	for (int i = 0; i < 9; i++)
		buf_init(&g->e[i]);
}

void cg_release(struct cg *g)
{
	for (int i = 0; i < 9; i++)
		buf_release(&g->e[i]);
}

/* Dims [from, to) of t, right-aligned into three expressions. */
static void spatial(const json_t *t, int nd, struct buf *d3)
{
	for (int i = 0; i < 3; i++) {
		int a = 2 + i - (3 - nd);
		if (a < 2)
			buf_adds(&d3[i], "1");
		else
			bt_dims_expr(&d3[i], t, a, a + 1);
	}
}

/* The spec's (first) convolution; for problem 86 its depthwise stage. */
int cg_read(const json_t *spec, struct cg *g)
{
	const json_t *x = bt_input(spec, 0), *y = bt_output(spec, 0);
	const json_t *grp = attr(spec, "groups");
	int nd = bt_ndim(x) - 2;

	cg_init(g);
	if (!x || !y || nd < 1 || nd > 3 || bt_ndim(y) != nd + 2 || !json_is_integer(grp))
		return -1;
	if (read3(spec, "kernel", nd, 1, g->k) || read3(spec, "stride", nd, 1, g->st) ||
	    read3(spec, "padding", nd, 0, g->pad) || read3(spec, "dilation", nd, 1, g->dil))
		return -1;
	for (int i = 0; i < 3; i++)
		if (g->k[i] < 1 || g->st[i] < 1 || g->dil[i] < 1)
			return -1;
	g->groups = (int)json_integer_value(grp);
	g->bias = json_is_true(attr(spec, "bias")) && bt_input(spec, 2) && !cg_separable(spec);
	if (g->groups < 1)
		return -1;
	bt_dims_expr(&g->e[E_N], x, 0, 1);
	bt_dims_expr(&g->e[E_CI], x, 1, 2);
	spatial(x, nd, &g->e[E_ID]);
	if (cg_separable(spec))
		bt_dims_expr(&g->e[E_CO], x, 1, 2);
	else
		bt_dims_expr(&g->e[E_CO], y, 1, 2);
	spatial(y, nd, &g->e[E_OD]);
	return 0;
}

/* Problem 86's pointwise stage: 1x1 over the depthwise result. */
static void cg_pointwise(const json_t *spec, const struct cg *dw, struct cg *g)
{
	cg_init(g);
	for (int i = 0; i < 3; i++) {
		g->k[i] = g->st[i] = g->dil[i] = 1;
		g->pad[i] = 0;
	}
	g->groups = 1;
	buf_adds(&g->e[E_N], dw->e[E_N].s);
	buf_adds(&g->e[E_CI], dw->e[E_CI].s);
	for (int i = 0; i < 3; i++) {
		buf_adds(&g->e[E_ID + i], dw->e[E_OD + i].s);
		buf_adds(&g->e[E_OD + i], dw->e[E_OD + i].s);
	}
	bt_dims_expr(&g->e[E_CO], bt_output(spec, 0), 1, 2);
}

static int kt(const struct cg *g)
{
	return g->k[0] * g->k[1] * g->k[2];
}

static void emit_sig_dw(struct buf *s, const char *name, int nt, const struct cg *g, int fused)
{
	buf_addf(s, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
		    "%s(const float* __restrict__ x, %sconst float* __restrict__ w, %s"
		    "float* __restrict__ y,\n    long long N, long long CI, long long ID, long long IH, "
		    "long long IW,\n    long long CO, long long OD, long long OH, long long OW)\n{\n"
		    "    const int KD = %d, KH = %d, KW = %d, SD = %d, SH = %d, SW = %d;\n"
		    "    const int PD = %d, PH = %d, PW = %d, DD = %d, DH = %d, DW = %d;\n"
		    "    const int G = %d, KT = KD * KH * KW;\n",
		 nt, name, fused ? "const float* __restrict__ wd, " : "",
		 g->bias ? "const float* __restrict__ bias, " : "",
		 g->k[0], g->k[1], g->k[2], g->st[0], g->st[1], g->st[2],
		 g->pad[0], g->pad[1], g->pad[2], g->dil[0], g->dil[1], g->dil[2], g->groups);
}

void cg_emit_sig(struct buf *s, const char *name, int nt, const struct cg *g)
{
	emit_sig_dw(s, name, nt, g, 0);
}

void cg_emit_args(struct buf *s, const struct cg *g)
{
	for (int i = 0; i < 9; i++)
		buf_addf(s, ", %s", g->e[i].s);
}

/* ---- conv: direct ---- */

static int direct_check(int cob, int px, int nt, struct buf *err)
{
	if (cob < 1 || cob > 8 || px < 1 || px > 8 || nt < 32 || nt > 1024 || nt % 32)
		return kf_err(err, "conv: bad COB/PX/NT");
	return 0;
}

static void emit_direct(struct buf *s, const char *name, const struct cg *g, int cob, int px, int nt)
{
	/* Input channels per weight chunk: at most 48 KiB of static smem. */
	int cch = 12288 / (cob * kt(g));

	cch = cch < 1 ? 1 : cch > 64 ? 64 : cch;
	cg_emit_sig(s, name, nt, g);
	bt_cuh_fill(s, conv_cuh, "direct_kernel", "COB", BT_INT(cob), "PX", BT_INT(px),
		    "NT", BT_INT(nt), "CCH", BT_INT(cch),
		    "BIAS", g->bias ? "bias[co]" : "0.0f", NULL);
}

static void launch_direct(struct buf *s, const char *name, const struct cg *g, int cob, int px,
			  int nt, const char *in, const char *w, const char *b, const char *out)
{
	buf_addf(s, "%s<<<dim3(ceil_div(%s * %s * %s, %d), ceil_div(%s, %d), %s), %d>>>(%s, %s, ",
		 name, g->e[E_OD].s, g->e[E_OH].s, g->e[E_OW].s, nt * px, g->e[E_CO].s, cob,
		 g->e[E_N].s, nt, in, w);
	if (b)
		buf_addf(s, "%s, ", b);
	buf_adds(s, out);
	cg_emit_args(s, g);
	buf_adds(s, ");\n");
}

/* ---- conv_igemm: implicit GEMM ---- */

struct ig {
	int bm, bn, bk, tm, tn, nt, pf;
};

static int ig_read(const json_t *p, struct ig *t, struct buf *err)
{
	t->bm = bt_param(p, "BM", 128);
	t->bn = bt_param(p, "BN", 128);
	t->bk = bt_param(p, "BK", 8);
	t->tm = bt_param(p, "TM", 8);
	t->tn = bt_param(p, "TN", 8);
	t->pf = bt_param(p, "PF", 1);
	if (t->pf != 0 && t->pf != 1)
		return kf_err(err, "conv_igemm: PF is 0 or 1");
	if (t->tm < 1 || t->tn < 1 || t->tm > 16 || t->tn > 16 || t->bm % t->tm || t->bn % t->tn ||
	    t->bm < 16 || t->bn < 8 || t->bm > 256 || t->bn > 256 || t->bk < 4 || t->bk > 64)
		return kf_err(err, "conv_igemm: bad tile parameters");
	t->nt = (t->bm / t->tm) * (t->bn / t->tn);
	if (t->nt < 32 || t->nt > 1024 || t->nt % 32)
		return kf_err(err, "conv_igemm: %d threads per block", t->nt);
	if ((t->bm + t->bn + 1) * t->bk * 4 > 48 * 1024)
		return kf_err(err, "conv_igemm: tiles exceed 48 KiB of shared memory");
	return 0;
}

/* Gathers A[kk][m] (input channel x tap kb + kk, output pixel m) into v. */
void cg_emit_gather(struct buf *s, const char *ind)
{
	buf_addf(s, "%sfloat v = 0.0f;\n"
		    "%sconst int k = kb + kk;\n"
		    "%sif (aok && kk < BK && k < K) {\n"
		    "%s    const int ci = k / KT, t = k %% KT;\n"
		    "%s    const int id = id0 + (t / (KH * KW)) * DD, ih = ih0 + ((t / KW) %% KH) * DH, "
		    "iw = iw0 + (t %% KW) * DW;\n"
		    "%s    if (id >= 0 && id < ID && ih >= 0 && ih < IH && iw >= 0 && iw < IW)\n"
		    "%s        v = __ldg(xn + ci * IS + ((long long)id * IH + ih) * IW + iw);\n"
		    "%s}\n", ind, ind, ind, ind, ind, ind, ind, ind);
}

/* Fused depthwise-separable: A[kk][m] is the depthwise result of channel
 * kb + kk at pixel m, computed on the fly (never stored). */
static void emit_gather_dw(struct buf *s, const char *ind)
{
	buf_addf(s, "%sfloat v = 0.0f;\n"
		    "%sconst int k = kb + kk;\n"
		    "%sif (aok && kk < BK && k < K) {\n"
		    "%s    const float* xc = xn + k * IS;\n"
		    "%s    const float* wc = wd + (long long)k * KT;\n"
		    "#pragma unroll\n"
		    "%s    for (int t = 0; t < KT; t++) {\n"
		    "%s        const int id = id0 + (t / (KH * KW)) * DD, ih = ih0 + ((t / KW) %% KH) * DH, "
		    "iw = iw0 + (t %% KW) * DW;\n"
		    "%s        if (id >= 0 && id < ID && ih >= 0 && ih < IH && iw >= 0 && iw < IW)\n"
		    "%s            v = fmaf(__ldg(xc + ((long long)id * IH + ih) * IW + iw), __ldg(wc + t), v);\n"
		    "%s    }\n"
		    "%s}\n", ind, ind, ind, ind, ind, ind, ind, ind, ind, ind, ind);
}

void cg_emit_origin(struct buf *s, const char *ind)
{
	buf_addf(s, "%sconst bool aok = ap < P;\n"
		    "%sconst long long apc = aok ? ap : 0;\n"
		    "%sconst int id0 = (int)(apc / (OW * OH)) * SD - PD;\n"
		    "%sconst int ih0 = (int)((apc / OW) %% OH) * SH - PH;\n"
		    "%sconst int iw0 = (int)(apc %% OW) * SW - PW;\n", ind, ind, ind, ind, ind);
}

/* Loads the K tile at kb into registers ra (LA slots) and rb (LB slots). */
static void emit_tile_load(struct buf *s, int fixed, int fused, const char *kb)
{
	buf_addf(s, "        {\n            const int kb = %s;\n"
		    "#pragma unroll\n"
		    "            for (int q = 0; q < LA; q++) {\n", kb);
	if (fixed) {
		buf_adds(s, "                const int kk = ak + q * (NT / BM);\n");
	} else {
		buf_adds(s, "                const int i = tid + q * NT, am = i % BM, kk = i / BM;\n"
			    "                const long long ap = p0 + am;\n");
		cg_emit_origin(s, "                ");
	}
	if (fused)
		emit_gather_dw(s, "                ");
	else
		cg_emit_gather(s, "                ");
	bt_cuh_section(s, conv_cuh, "tile_load_tail");
}

static void emit_tile_store(struct buf *s)
{
	bt_cuh_section(s, conv_cuh, "tile_store");
}

/* pf: the next K tile's global loads are issued before this tile's FMAs,
 * so their latency hides behind the math (registers, not cp.async). */
static void emit_igemm(struct buf *s, const char *name, const struct cg *g, const struct ig *t,
		       int fused)
{
	int fixed = t->nt % t->bm == 0;

	emit_sig_dw(s, name, t->nt, g, fused);
	bt_cuh_fill(s, conv_cuh, "igemm_head", "BM", BT_INT(t->bm), "BN", BT_INT(t->bn),
		    "BK", BT_INT(t->bk), "TM", BT_INT(t->tm), "TN", BT_INT(t->tn),
		    "NT", BT_INT(t->nt), "KT_MUL", fused ? "" : " * KT", NULL);
	if (fixed) {
		/* Each thread gathers one fixed pixel: its window origin once. */
		buf_adds(s, "    const int am = tid % BM, ak = tid / BM;\n"
			    "    const long long ap = p0 + am;\n");
		cg_emit_origin(s, "    ");
	}
	if (t->pf)
		emit_tile_load(s, fixed, fused, "0");
	buf_adds(s, "    for (int k0 = 0; k0 < K; k0 += BK) {\n");
	if (!t->pf)
		emit_tile_load(s, fixed, fused, "k0");
	emit_tile_store(s);
	if (t->pf) {
		buf_adds(s, "        if (k0 + BK < K)\n");
		emit_tile_load(s, fixed, fused, "k0 + BK");
	}
	bt_emit_tile_fma(s, "tr + i * (BM / TM)");
	bt_cuh_fill(s, conv_cuh, "igemm_store", "BIAS", g->bias ? "bias[co]" : "0.0f", NULL);
}

static void launch_igemm(struct buf *s, const char *name, const struct cg *g, const struct ig *t,
			 const char *in, const char *w, const char *b, const char *out)
{
	buf_addf(s, "%s<<<dim3(ceil_div(%s * %s * %s, %d), ceil_div(%s, %d), %s), %d>>>(%s, %s, ",
		 name, g->e[E_OD].s, g->e[E_OH].s, g->e[E_OW].s, t->bm, g->e[E_CO].s, t->bn,
		 g->e[E_N].s, t->nt, in, w);
	if (b)
		buf_addf(s, "%s, ", b);
	buf_adds(s, out);
	cg_emit_args(s, g);
	buf_adds(s, ");\n");
}

/* ---- conv_dw: depthwise with the input tile in shared memory ---- */

struct dw {
	int tw, th, rpt, ith, itw, nt;
};

static int dw_read(const json_t *p, const struct cg *g, struct dw *d, struct buf *err)
{
	d->tw = bt_param(p, "TW", 64);
	d->th = bt_param(p, "TH", 16);
	d->rpt = bt_param(p, "RPT", 2);
	if (d->tw < 8 || d->tw > 256 || d->th < 1 || d->th > 128 || d->rpt < 1 || d->rpt > 16 ||
	    d->th % d->rpt)
		return kf_err(err, "conv_dw: bad TW/TH/RPT");
	d->nt = d->tw * (d->th / d->rpt);
	if (d->nt < 32 || d->nt > 1024)
		return kf_err(err, "conv_dw: %d threads per block", d->nt);
	d->ith = (d->th - 1) * g->st[1] + (g->k[1] - 1) * g->dil[1] + 1;
	d->itw = (d->tw - 1) * g->st[2] + (g->k[2] - 1) * g->dil[2] + 1;
	if ((long long)d->ith * (d->itw + 1) * 4 + (long long)kt(g) * 4 > 48 * 1024)
		return kf_err(err, "conv_dw: the input tile exceeds 48 KiB of shared memory");
	return 0;
}

static void emit_dw(struct buf *s, const char *name, const struct cg *g, const struct dw *d)
{
	cg_emit_sig(s, name, d->nt, g);
	bt_cuh_fill(s, conv_cuh, "dw_kernel", "TW", BT_INT(d->tw), "TH", BT_INT(d->th),
		    "RPT", BT_INT(d->rpt), "ITH", BT_INT(d->ith), "ITW", BT_INT(d->itw),
		    "NT", BT_INT(d->nt), "BIAS", g->bias ? "bias[c]" : "0.0f", NULL);
}

static void launch_dw(struct buf *s, const char *name, const struct cg *g, const struct dw *d,
		      const char *in, const char *w, const char *b, const char *out)
{
	buf_addf(s, "%s<<<dim3(ceil_div(%s, %d), ceil_div(%s, %d), %s * %s), dim3(%d, %d)>>>(%s, %s, ",
		 name, g->e[E_OW].s, d->tw, g->e[E_OH].s, d->th, g->e[E_N].s, g->e[E_CI].s,
		 d->tw, d->th / d->rpt, in, w);
	if (b)
		buf_addf(s, "%s, ", b);
	buf_adds(s, out);
	cg_emit_args(s, g);
	buf_adds(s, ");\n");
}

/* conv_dw's default tile (problem 86's depthwise stage under conv_igemm). */
static int dw_defaults(const struct cg *g, struct dw *d, struct buf *err)
{
	json_t *none = json_object();
	int rc = dw_read(none, g, d, err);

	json_decref(none);
	return rc;
}

/* ---- supports / render ---- */

/* grid.z (batch, or batch x channels for conv_dw) must stay below 65536. */
int cg_base_ok(const json_t *spec, struct cg *g)
{
	long long n = bt_dims_value(spec, bt_input(spec, 0), 0, 1);
	int ok;

	cg_init(g); /* cg_release-able whatever happens below */
	ok = !is_transposed(spec) && !cg_read(spec, g) && n > 0 && n < 65536;

	if (ok && cg_separable(spec))
		ok = bt_input(spec, 1) && bt_input(spec, 2) && g->groups > 0;
	return ok;
}

static int depthwise(const json_t *spec, const struct cg *g)
{
	const json_t *x = bt_input(spec, 0), *w = bt_input(spec, 1);
	long long nc = bt_dims_value(spec, x, 0, 2), ci = bt_dims_value(spec, x, 1, 2);
	long long co = cg_separable(spec) ? ci : bt_dims_value(spec, bt_output(spec, 0), 1, 2);

	return g->k[0] == 1 && g->st[0] == 1 && g->pad[0] == 0 && bt_ndim(x) <= 4 && ci > 0 &&
	       g->groups == ci && co == ci && bt_dims_value(spec, w, 1, 2) == 1 && nc > 0 && nc < 65536;
}

static int conv_supports(const json_t *spec)
{
	struct cg g;
	int ok = cg_base_ok(spec, &g);

	cg_release(&g);
	return ok;
}

static int igemm_supports(const json_t *spec)
{
	struct cg g;
	int ok = cg_base_ok(spec, &g) && (g.groups == 1 || (cg_separable(spec) && depthwise(spec, &g)));

	cg_release(&g);
	return ok;
}

static int dw_supports(const json_t *spec)
{
	struct cg g;
	int ok = cg_base_ok(spec, &g) && depthwise(spec, &g);

	cg_release(&g);
	return ok;
}


void cg_names_of(const json_t *spec, const struct cg *g, struct cg_names *nm)
{
	nm->x = bt_name(bt_input(spec, 0));
	nm->w = bt_name(bt_input(spec, 1));
	nm->w2 = cg_separable(spec) ? bt_name(bt_input(spec, 2)) : NULL;
	nm->b = g->bias ? bt_name(bt_input(spec, 2)) : NULL;
	nm->y = bt_name(bt_output(spec, 0));
}

/* Problem 86's launch block head: the depthwise result's scratch tensor. */
static void scratch_mid(struct buf *s, const struct cg *g)
{
	buf_addf(s, "scratch float mid[%s * %s * %s * %s * %s];\n", g->e[E_N].s, g->e[E_CI].s,
		 g->e[E_OD].s, g->e[E_OH].s, g->e[E_OW].s);
}

static int conv_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int cob = bt_param(p, "COB", 1), px = bt_param(p, "PX", 1), nt = bt_param(p, "NT", 256);
	struct cg g, g2;
	struct cg_names nm;

	if (!cg_base_ok(spec, &g)) {
		cg_release(&g);
		return kf_err(err, "conv: not a forward convolution this template handles");
	}
	if (direct_check(cob, px, nt, err)) {
		cg_release(&g);
		return -1;
	}
	if (cob * kt(&g) > 12288) {
		cg_release(&g);
		return kf_err(err, "conv: COB=%d filters of %d taps exceed 48 KiB of shared memory", cob, kt(&g));
	}
	cg_names_of(spec, &g, &nm);
	buf_addf(s, "// template conv: COB=%d PX=%d NT=%d\n", cob, px, nt);
	emit_direct(s, "conv_direct", &g, cob, px, nt);
	if (nm.w2) {
		cg_pointwise(spec, &g, &g2);
		emit_direct(s, "conv_pointwise", &g2, cob, px, nt);
		buf_adds(s, "/*@launch\n");
		scratch_mid(s, &g);
		launch_direct(s, "conv_direct", &g, cob, px, nt, nm.x, nm.w, NULL, "mid");
		launch_direct(s, "conv_pointwise", &g2, cob, px, nt, "mid", nm.w2, NULL, nm.y);
		cg_release(&g2);
	} else {
		buf_adds(s, "/*@launch\n");
		launch_direct(s, "conv_direct", &g, cob, px, nt, nm.x, nm.w, nm.b, nm.y);
	}
	buf_adds(s, "@*/\n");
	cg_release(&g);
	return 0;
}

/* Problem 86 as two kernels: conv_dw's default depthwise into a scratch
 * tensor, then the GEMM over it. */
static int igemm_two_pass(const json_t *spec, struct cg *g, const struct ig *t,
			  const struct cg_names *nm, struct buf *s, struct buf *err)
{
	struct cg g2;
	struct dw d;

	if (dw_defaults(g, &d, err))
		return -1;
	cg_pointwise(spec, g, &g2);
	emit_dw(s, "conv_depthwise", g, &d);
	emit_igemm(s, "conv_igemm", &g2, t, 0);
	buf_adds(s, "/*@launch\n");
	scratch_mid(s, g);
	launch_dw(s, "conv_depthwise", g, &d, nm->x, nm->w, NULL, "mid");
	launch_igemm(s, "conv_igemm", &g2, t, "mid", nm->w2, NULL, nm->y);
	cg_release(&g2);
	return 0;
}

/* Problem 86 in one kernel: the GEMM's A tile is the depthwise result,
 * computed while gathering, so it never goes through DRAM. */
static void igemm_fused(const json_t *spec, struct cg *g, const struct ig *t,
			const struct cg_names *nm, struct buf *s)
{
	struct buf w = BUF_INIT;

	buf_release(&g->e[E_CO]);
	bt_dims_expr(&g->e[E_CO], bt_output(spec, 0), 1, 2);
	emit_igemm(s, "conv_igemm_sep", g, t, 1);
	buf_addf(&w, "%s, %s", nm->w, nm->w2);
	buf_adds(s, "/*@launch\n");
	launch_igemm(s, "conv_igemm_sep", g, t, nm->x, w.s, NULL, nm->y);
	buf_release(&w);
}

static int igemm_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	struct cg g;
	struct ig t;
	struct cg_names nm;
	int fuse = bt_param(p, "FUSE", 1);

	if (!igemm_supports(spec))
		return kf_err(err, "conv_igemm: needs groups == 1 (or a depthwise-separable pair)");
	if (ig_read(p, &t, err))
		return -1;
	if (fuse != 0 && fuse != 1)
		return kf_err(err, "conv_igemm: FUSE is 0 or 1");
	cg_read(spec, &g);
	cg_names_of(spec, &g, &nm);
	buf_addf(s, "// template conv_igemm: BM=%d BN=%d BK=%d TM=%d TN=%d PF=%d FUSE=%d\n", t.bm,
		 t.bn, t.bk, t.tm, t.tn, t.pf, fuse);
	if (nm.w2 && !fuse) {
		if (igemm_two_pass(spec, &g, &t, &nm, s, err)) {
			cg_release(&g);
			return -1;
		}
	} else if (nm.w2) {
		igemm_fused(spec, &g, &t, &nm, s);
	} else {
		emit_igemm(s, "conv_igemm", &g, &t, 0);
		buf_adds(s, "/*@launch\n");
		launch_igemm(s, "conv_igemm", &g, &t, nm.x, nm.w, nm.b, nm.y);
	}
	buf_adds(s, "@*/\n");
	cg_release(&g);
	return 0;
}

static int dw_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	struct cg g, g2;
	struct ig t;
	struct dw d;
	struct cg_names nm;

	if (!dw_supports(spec))
		return kf_err(err, "conv_dw: needs a 1D/2D depthwise convolution");
	cg_read(spec, &g);
	if (dw_read(p, &g, &d, err)) {
		cg_release(&g);
		return -1;
	}
	cg_names_of(spec, &g, &nm);
	buf_addf(s, "// template conv_dw: TW=%d TH=%d RPT=%d\n", d.tw, d.th, d.rpt);
	emit_dw(s, "conv_depthwise", &g, &d);
	if (nm.w2) {
		json_t *none = json_object();
		int rc = ig_read(none, &t, err);

		json_decref(none);
		if (rc) {
			cg_release(&g);
			return -1;
		}
		cg_pointwise(spec, &g, &g2);
		emit_igemm(s, "conv_igemm", &g2, &t, 0);
		buf_adds(s, "/*@launch\n");
		scratch_mid(s, &g);
		launch_dw(s, "conv_depthwise", &g, &d, nm.x, nm.w, NULL, "mid");
		launch_igemm(s, "conv_igemm", &g2, &t, "mid", nm.w2, NULL, nm.y);
		cg_release(&g2);
	} else {
		buf_adds(s, "/*@launch\n");
		launch_dw(s, "conv_depthwise", &g, &d, nm.x, nm.w, nm.b, nm.y);
	}
	buf_adds(s, "@*/\n");
	cg_release(&g);
	return 0;
}

const struct tmpl_def tmpl_conv_defs[] = {
	{ "conv", conv_supports, conv_render, "{\"COB\": 1, \"PX\": 1, \"NT\": 256}" },
	{ "conv_igemm", igemm_supports, igemm_render,
	  "{\"BM\": 128, \"BN\": 128, \"BK\": 8, \"TM\": 8, \"TN\": 8, \"PF\": 1, \"FUSE\": 1}" },
	{ "conv_dw", dw_supports, dw_render, "{\"TW\": 64, \"TH\": 16, \"RPT\": 2}" },
	{ "conv_tc", tmpl_convtc_supports, tmpl_convtc_render,
	  "{\"BM\": 128, \"BN\": 64, \"BK\": 32, \"WM\": 4, \"WN\": 2}" },
	{ NULL, NULL, NULL, NULL },
};
