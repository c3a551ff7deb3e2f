/* Templates for transposed convolutions 1D/2D/3D, grouped, dilated, strided
 * (spec attrs.transposed = true; PyTorch weight layout [C_in, C_out/G, k...]).
 *   convt:       gather-form direct kernel, one thread per output pixel and
 *                cot output channels; the block's weights in shared memory.
 *   convt_igemm: stride 1 only: implicit GEMM (rows = output pixels, cols =
 *                output channels of a group, K = C_in/G x taps) with shared
 *                tiles and register blocking; weights are first repacked
 *                into a [G][K][C_out/G] scratch so B tiles load coalesced.
 * Every size comes from the launch block (size names), so the kernels are
 * right for any batch/extent; kernel, stride, padding, dilation and groups
 * are compile-time constants. */
#include "collector/builtin_tmpl.h"

#include <string.h>

#include "collector/builtin_util.h"

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

static int convt_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
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
	channels(spec, &g, &cpg, &opg);
	/* cot channels of one group per block, and their weights within 48 KB */
	while (cot > 1 && (opg % cot || cpg * taps(&g) * cot * 4 > 48 * 1024))
		cot /= 2;
	size_args(spec, &g, &a, &n);
	bt_dims_expr(&osp, y, 2, bt_ndim(y));
	bt_dims_expr(&co, y, 1, 2);
	bt_dims_expr(&ci, bt_input(spec, 0), 1, 2);
	buf_addf(s, "// template convt: block=%d cot=%d (gather-form direct transposed conv)\n", block, cot);
	geom_defines(s, &g);
	buf_addf(s, "#define BLOCK %d\n#define COT %d\n", block, cot);
	buf_adds(s, "extern \"C\" __global__ void __launch_bounds__(BLOCK)\n"
		    "convt_direct(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,\n"
		    "             int CI, int CO, int ID, int IH, int IW, int OD, int OH, int OW)\n{\n"
		    "    extern __shared__ float ws[];   /* [cpg][T][COT] */\n"
		    "    const int cpg = CI / G, opg = CO / G;\n"
		    "    const int co0 = blockIdx.y * COT, g = co0 / opg, oc0 = co0 % opg;\n"
		    "    const long long n = blockIdx.z;\n"
		    "    for (int i = threadIdx.x; i < cpg * T * COT; i += BLOCK) {\n"
		    "        const int c = i % COT, t = (i / COT) % T, cj = i / (COT * T);\n"
		    "        ws[i] = w[((long long)(g * cpg + cj) * opg + oc0 + c) * T + t];\n"
		    "    }\n"
		    "    __syncthreads();\n"
		    "    const long long osp = (long long)OD * OH * OW, isp = (long long)ID * IH * IW;\n"
		    "    const long long pix = (long long)blockIdx.x * BLOCK + threadIdx.x;\n"
		    "    if (pix >= osp) return;\n"
		    "    const int ow = (int)(pix % OW), oh = (int)((pix / OW) % OH), od = (int)(pix / ((long long)OW * OH));\n"
		    "    const float* xb = x + (n * CI + (long long)g * cpg) * isp;\n"
		    "    float acc[COT];\n"
		    "#pragma unroll\n"
		    "    for (int c = 0; c < COT; c++) acc[c] = 0.0f;\n"
		    "#pragma unroll\n"
		    "    for (int kd = 0; kd < KD; kd++) {\n"
		    "        const int nd = od + PD - kd * DD;   /* = id * SD when input id reaches od */\n"
		    "        if (nd < 0 || nd % SD != 0 || nd / SD >= ID) continue;\n"
		    "#pragma unroll\n"
		    "        for (int kh = 0; kh < KH; kh++) {\n"
		    "            const int nh = oh + PH - kh * DH;\n"
		    "            if (nh < 0 || nh % SH != 0 || nh / SH >= IH) continue;\n"
		    "#pragma unroll\n"
		    "            for (int kw = 0; kw < KW; kw++) {\n"
		    "                const int nw = ow + PW - kw * DW;\n"
		    "                if (nw < 0 || nw % SW != 0 || nw / SW >= IW) continue;\n"
		    "                const float* xp = xb + ((long long)(nd / SD) * IH + nh / SH) * IW + nw / SW;\n"
		    "                const float* wp = ws + ((kd * KH + kh) * KW + kw) * COT;\n"
		    "#pragma unroll 4\n"
		    "                for (int cj = 0; cj < cpg; cj++) {\n"
		    "                    const float v = __ldg(xp + cj * isp);\n"
		    "#pragma unroll\n"
		    "                    for (int c = 0; c < COT; c++) acc[c] = fmaf(v, wp[cj * T * COT + c], acc[c]);\n"
		    "                }\n"
		    "            }\n"
		    "        }\n"
		    "    }\n"
		    "    float* yp = y + (n * CO + co0) * osp + pix;\n"
		    "#pragma unroll\n"
		    "    for (int c = 0; c < COT; c++) yp[c * osp] = acc[c];\n"
		    "}\n\n");
	buf_addf(s, "/*@launch\nconvt_direct<<<dim3(ceil_div(%s, %d), %s / %d, %s), %d, %s / %d * %d * 4 * %d>>>"
		    "(%s, %s, %s, %s);\n@*/\n",
		 osp.s, block, co.s, cot, n.s, block, ci.s, g.groups, taps(&g), cot,
		 bt_name(bt_input(spec, 0)), bt_name(bt_input(spec, 1)), bt_name(y), a.s);
	buf_release(&a);
	buf_release(&n);
	buf_release(&osp);
	buf_release(&co);
	buf_release(&ci);
	return 0;
}

const struct tmpl_def tmpl_convt_defs[] = {
	{ "convt", convt_supports, convt_render, "{\"block\": 256, \"cot\": 1}" },
	{ NULL, NULL, NULL, NULL },
};
