/* Templates for norms: batch/instance/group/layer/RMS/L1/L2/Frobenius (33-40).
 *
 * norm_stats (33, 34, 35, 37, 40): statistics over contiguous rows of H*W
 *   floats: a partial kernel (grid chunks x rows) writes per-block (sum,
 *   sumsq) in double, a finalize kernel (one block per statistic) turns them
 *   into mean and 1/std, an apply kernel normalizes (and applies the affine
 *   transform). Params: block, chunks, vec (1|4), ablock, apt (vectors per
 *   apply thread), stcs (streaming stores). Three passes over memory
 *   (read, read, write): the row does not fit on chip.
 * norm_rms (36): one thread per spatial position (vec of them) loops over
 *   the channels twice, keeping the values in registers (cache=1) or
 *   re-reading them from L2 (cache=0). Params: block, vec (1|2|4), cache,
 *   fast (rsqrtf).
 * norm_row (38, 39): one block per row; the row is read once from HBM and
 *   kept in registers (kreg float4 per thread) plus dynamic shared memory
 *   (smem=1) or re-read (smem=0). Params: block, kreg, smem, fast. */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/norm_cuh.h"

enum { M_BN, M_IN, M_GN, M_FRO, M_LN };

static int stats_mode(const json_t *spec)
{
	static const char *const ops[] = { "batchnorm", "instancenorm", "groupnorm", "frobenius",
					   "layernorm" }; /* enum order */
	const char *op = bt_op(spec, "norm");

	for (int i = 0; op && i < (int)(sizeof(ops) / sizeof(ops[0])); i++)
		if (!strcmp(op, ops[i]))
			return i;
	return -1;
}

static int has_size(const json_t *spec, const char *name)
{
	return json_object_get(json_object_get(spec, "sizes"), name) != NULL;
}

static int stats_supports(const json_t *spec)
{
	const json_t *in = bt_input(spec, 0);
	int m = stats_mode(spec);
	long long rows;

	if (m < 0 || !in || bt_ndim(in) != 4)
		return 0;
	rows = bt_dims_value(spec, in, 0, 2);
	if (rows <= 0 || rows >= 65536 || bt_dims_value(spec, in, 2, 4) <= 0)
		return 0;
	if (m == M_GN && !has_size(spec, "num_groups"))
		return 0;
	/* affine params where the problem has them */
	if ((m == M_BN || m == M_GN || m == M_LN) && (!bt_input(spec, 1) || !bt_input(spec, 2)))
		return 0;
	return 1;
}

/* Block-wide sum of two doubles into (a, b) of thread 0 (and all threads). */
static void emit_block_sum2(struct buf *s)
{
	bt_cuh_section(s, norm_cuh, "block_sum2");
}

/* Sum and sum of squares of the chunk; float per lane (short sums), double
 * across the block. The float4 path needs rows of a multiple of 4 floats
 * (checked at run time: other sizes take the scalar loop). */
static void emit_stats_part(struct buf *s, int block, int vec)
{
	bt_cuh_fill(s, norm_cuh, "part_head", "BLOCK", BT_INT(block), NULL);
	if (vec == 4)
		bt_cuh_section(s, norm_cuh, "stats_part_vec4");
	bt_cuh_section(s, norm_cuh, "stats_part_scalar");
}

/* One block per statistic: its parts are rows*chunks entries. */
static void emit_stats_final(struct buf *s, int mode)
{
	bt_cuh_section(s, norm_cuh, "stats_final_head");
	if (mode == M_BN)	/* rows n*C + t for every n */
		buf_adds(s, "        const long long j = ((k / chunks) * C + t) * chunks + k % chunks;\n");
	else
		buf_adds(s, "        const long long j = t * np + k;\n");
	bt_cuh_section(s, norm_cuh, "stats_final_sum");
	if (mode == M_FRO)
		buf_adds(s, "        stats[2 * t] = 0.0f;\n"
			    "        stats[2 * t + 1] = (float)(1.0 / sqrt(b));\n");
	else
		bt_cuh_section(s, norm_cuh, "stats_final_out");
	bt_cuh_section(s, norm_cuh, "stats_final_end");
}

/* y = f(x) for one element (u) of a row, affine by per-row scale/shift or,
 * for LayerNorm, per element (w, b at the same offset). */
static void emit_apply_elem(struct buf *s, int mode, const char *u, const char *w, const char *b)
{
	if (mode == M_LN)
		buf_addf(s, "%s = fmaf((%s - mean) * rstd, %s, %s); ", u, u, w, b);
	else
		buf_addf(s, "%s = fmaf(%s, sa, sb); ", u, u);
}

/* Block (k, row) handles apt float4 vectors per thread of its row (loads
 * first, all independent); rows that are not a multiple of 4 floats take a
 * grid-stride scalar loop (run-time check). */
static void emit_stats_apply(struct buf *s, int mode, int ablock, int apt, int vec, int stcs)
{
	static const char *cx[4] = { "u.x", "u.y", "u.z", "u.w" };
	static const char *cw[4] = { "w.x", "w.y", "w.z", "w.w" };
	static const char *cb[4] = { "b.x", "b.y", "b.z", "b.w" };
	int k;

	bt_cuh_fill(s, norm_cuh, "apply_head", "ABLOCK", BT_INT(ablock), NULL);
	if (mode == M_BN)
		buf_adds(s, "    const long long st = row % C;\n");
	else
		buf_adds(s, "    const long long st = row / rps;\n");
	buf_adds(s, "    const float mean = stats[2 * st], rstd = stats[2 * st + 1];\n");
	if (mode == M_BN || mode == M_GN)
		buf_adds(s, "    const float sa = rstd * weight[row % C];\n"
			    "    const float sb = fmaf(-mean, sa, bias[row % C]);\n");
	else if (mode == M_IN)
		buf_adds(s, "    const float sa = rstd, sb = -mean * rstd;\n");
	else if (mode == M_FRO)
		buf_adds(s, "    const float sa = rstd, sb = 0.0f;\n");
	buf_adds(s, "    const float* xr = x + row * L;\n"
		    "    float* yr = y + row * L;\n");
	if (mode == M_LN)
		buf_adds(s, "    const float* wr = weight + (row % C) * L;\n"
			    "    const float* br = bias + (row % C) * L;\n");
	if (vec == 4) {
		bt_cuh_fill(s, norm_cuh, "stats_apply_vec4", "SPAN", BT_INT(ablock * apt),
			    "APT", BT_INT(apt), "ABLOCK", BT_INT(ablock), NULL);
		if (mode == M_LN)
			buf_adds(s, "            const float4 w = __ldg(reinterpret_cast<const float4*>(wr) + i);\n"
				    "            const float4 b = __ldg(reinterpret_cast<const float4*>(br) + i);\n");
		buf_adds(s, "            ");
		for (k = 0; k < 4; k++)
			emit_apply_elem(s, mode, cx[k], cw[k], cb[k]);
		buf_addf(s, "\n            %s;\n"
			    "        }\n"
			    "        return;\n"
			    "    }\n",
			 stcs ? "__stcs(yv + i, u)" : "yv[i] = u");
	}
	buf_adds(s, "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < L;\n"
		    "         i += (long long)gridDim.x * blockDim.x) {\n"
		    "        float u = __ldg(xr + i);\n"
		    "        ");
	emit_apply_elem(s, mode, "u", "__ldg(wr + i)", "__ldg(br + i)");
	buf_addf(s, "\n        %s;\n"
		    "    }\n}\n\n",
		 stcs ? "__stcs(yr + i, u)" : "yr[i] = u");
}

static int stats_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 256), chunks = bt_param(p, "chunks", 1);
	int vec = bt_param(p, "vec", 4), ablock = bt_param(p, "ablock", 256);
	int apt = bt_param(p, "apt", 4), stcs = bt_param(p, "stcs", 0);
	int mode = stats_mode(spec);
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0);
	struct buf rows = BUF_INIT, L = BUF_INIT, C = BUF_INIT, N = BUF_INIT, rps = BUF_INIT;
	struct buf nst = BUF_INIT;
	long long hw = bt_dims_value(spec, in, 2, 4);
	const char *w = "x", *b = "x";

	if (block < 64 || block > 1024 || block % 32 || ablock < 64 || ablock > 1024 ||
	    ablock % 32 || chunks < 1 || chunks > 64 || (vec != 1 && vec != 4) || apt < 1 ||
	    apt > 16 || (stcs != 0 && stcs != 1) || mode < 0 || !out)
		return kf_err(err, "norm_stats: bad parameters");
	if (vec == 4 && (hw < 0 || hw % 4))
		vec = 1;	/* the float4 path would never run */
	bt_dims_expr(&rows, in, 0, 2);
	bt_dims_expr(&L, in, 2, 4);
	bt_dims_expr(&C, in, 1, 2);
	bt_dims_expr(&N, in, 0, 1);
	switch (mode) {
	case M_BN: buf_adds(&rps, "1"); buf_adds(&nst, C.s); break;
	case M_IN: buf_adds(&rps, "1"); buf_adds(&nst, rows.s); break;
	case M_GN:
		buf_addf(&rps, "(%s / num_groups)", C.s);
		buf_addf(&nst, "%s * num_groups", N.s);
		break;
	case M_FRO: buf_addf(&rps, "%s", rows.s); buf_adds(&nst, "1"); break;
	default: buf_addf(&rps, "%s", C.s); buf_addf(&nst, "%s", N.s); break;
	}
	if (mode != M_IN && mode != M_FRO)
		w = bt_name(bt_input(spec, 1)), b = bt_name(bt_input(spec, 2));
	buf_addf(s, "// template norm_stats: block=%d chunks=%d vec=%d ablock=%d apt=%d stcs=%d\n\n",
		 block, chunks, vec, ablock, apt, stcs);
	emit_block_sum2(s);
	emit_stats_part(s, block, vec);
	emit_stats_final(s, mode);
	emit_stats_apply(s, mode, ablock, apt, vec, stcs);
	buf_addf(s, "/*@launch\n"
		    "scratch double part[2 * %s * %d];\n"
		    "scratch float stats[2 * %s];\n"
		    "norm_part<<<dim3(%d, %s), %d>>>(%s, part, %s);\n",
		 rows.s, chunks, nst.s, chunks, rows.s, block, bt_name(in), L.s);
	/* parts per statistic: rows of the statistic times chunks */
	buf_addf(s, "norm_final<<<%s, 256>>>(part, stats, %s * %d, %s, %d, %s * %s * %s, %.17g);\n",
		 nst.s, mode == M_BN ? N.s : rps.s, chunks, C.s, chunks,
		 mode == M_BN ? N.s : rps.s, L.s, "1", bt_scalar(spec, "eps", 1e-5));
	buf_addf(s, "norm_apply<<<dim3(ceil_div(%s, %d), %s), %d>>>(%s, stats, %s, %s, %s, %s, %s, %s);\n"
		    "@*/\n",
		 L.s, vec * ablock * apt, rows.s, ablock, bt_name(in), w, b, bt_name(out), L.s, C.s,
		 rps.s);
	buf_release(&rows);
	buf_release(&L);
	buf_release(&C);
	buf_release(&N);
	buf_release(&rps);
	buf_release(&nst);
	return 0;
}

/* ---- norm_rms (36): reduce over dim 1 of [N, C, spatial...] ---- */

static int rms_supports(const json_t *spec)
{
	const json_t *in = bt_input(spec, 0);
	long long n, c;

	const char *op = bt_op(spec, "norm");

	if (!op || strcmp(op, "rmsnorm") || !in || bt_ndim(in) < 2 || bt_input(spec, 1))
		return 0;
	n = bt_dims_value(spec, in, 0, 1);
	c = bt_dims_value(spec, in, 1, 2);
	return n > 0 && n < 65536 && c > 0 && c <= 1024 && bt_dims_value(spec, in, 2, bt_ndim(in)) > 0;
}

static void emit_rms_acc(struct buf *s, int vec, const char *ind)
{
	static const char *comp[4] = { ".x", ".y", ".z", ".w" };
	int k;

	for (k = 0; k < vec; k++)
		buf_addf(s, "%ss%d = fmaf(v%s, v%s, s%d);\n", ind, k, vec == 1 ? "" : comp[k],
			 vec == 1 ? "" : comp[k], k);
}

static void emit_rms_scale(struct buf *s, int vec, const char *ind)
{
	static const char *comp[4] = { ".x", ".y", ".z", ".w" };
	int k;

	for (k = 0; k < vec; k++)
		buf_addf(s, "%sv%s *= f%d;\n", ind, vec == 1 ? "" : comp[k], k);
}

/* The fast path (C <= C_ when caching, HW a multiple of VEC: checked at run
 * time) uses the compile-time channel count C_ of the problem so the cache
 * stays in registers; other sizes take a plain grid-stride loop. */
static int rms_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 256), vec = bt_param(p, "vec", 4);
	int cache = bt_param(p, "cache", 0), fast = bt_param(p, "fast", 0);
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0);
	long long c = bt_dims_value(spec, in, 1, 2), hw = bt_dims_value(spec, in, 2, bt_ndim(in));
	struct buf N = BUF_INIT, C = BUF_INIT, HW = BUF_INIT;
	const char *vt;
	int k;

	if (block < 32 || block > 1024 || block % 32 || (vec != 1 && vec != 2 && vec != 4) ||
	    (cache != 0 && cache != 1) || (fast != 0 && fast != 1) || !out)
		return kf_err(err, "norm_rms: bad parameters");
	while (vec > 1 && hw % vec)
		vec /= 2;
	if (c * vec > 128)
		cache = 0;	/* too many registers */
	vt = vec == 4 ? "float4" : vec == 2 ? "float2" : "float";
	bt_dims_expr(&N, in, 0, 1);
	bt_dims_expr(&C, in, 1, 2);
	bt_dims_expr(&HW, in, 2, bt_ndim(in));
	buf_addf(s, "// template norm_rms: block=%d vec=%d cache=%d fast=%d\n"
		    "#define C_ %lld\n"
		    "#define VEC %d\n"
		    "// Thread (q, n): VEC spatial positions; sum of squares over the channels\n"
		    "// (stride HW), then a second sweep scales them.\n"
		    "extern \"C\" __global__ void __launch_bounds__(%d)\n"
		    "rms_norm(const float* __restrict__ x, float* __restrict__ y, long long C, long long HW,\n"
		    "         float eps)\n{\n"
		    "    const long long off = (long long)blockIdx.y * C * HW;\n"
		    "    if (%sHW %% VEC == 0) {\n"
		    "        const long long nq = HW / VEC;\n"
		    "        const long long q = (long long)blockIdx.x * %d + threadIdx.x;\n"
		    "        if (q >= nq) return;\n"
		    "        const %s* xp = reinterpret_cast<const %s*>(x + off) + q;\n"
		    "        %s* yp = reinterpret_cast<%s*>(y + off) + q;\n",
		 block, vec, cache, fast, c, vec, block, cache ? "C <= C_ && " : "", block, vt, vt,
		 vt, vt);
	for (k = 0; k < vec; k++)
		buf_addf(s, "        float s%d = 0.0f;\n", k);
	if (cache)
		bt_cuh_fill(s, norm_cuh, "rms_regs", "VT", vt, NULL);
	else
		buf_addf(s, "#pragma unroll 8\n"
			    "        for (long long c = 0; c < C; c++) {\n"
			    "            const %s v = __ldg(xp + c * nq);\n", vt);
	emit_rms_acc(s, vec, "            ");
	buf_adds(s, "        }\n");
	for (k = 0; k < vec; k++) {
		if (fast)
			buf_addf(s, "        const float f%d = rsqrtf(s%d / (float)C + eps);\n", k, k);
		else
			buf_addf(s, "        const float f%d = 1.0f / sqrtf(s%d / (float)C + eps);\n", k, k);
	}
	if (cache)
		buf_addf(s, "#pragma unroll\n"
			    "        for (int c = 0; c < C_; c++) {\n"
			    "            if (c >= C) break;\n"
			    "            %s v = r[c];\n", vt);
	else
		buf_addf(s, "#pragma unroll 8\n"
			    "        for (long long c = 0; c < C; c++) {\n"
			    "            %s v = __ldg(xp + c * nq);\n", vt);
	emit_rms_scale(s, vec, "            ");
	bt_cuh_section(s, norm_cuh, "rms_tail");
	buf_addf(s, "/*@launch\nrms_norm<<<dim3(ceil_div(%s, %d), %s), %d>>>(%s, %s, %s, %s, %.9g);\n@*/\n",
		 HW.s, vec * block, N.s, block, bt_name(in), bt_name(out), C.s, HW.s,
		 bt_scalar(spec, "eps", 1e-5));
	buf_release(&N);
	buf_release(&C);
	buf_release(&HW);
	return 0;
}

/* ---- norm_row (38, 39): x / mean|x| or x / ||x||_2 per row ---- */

static int row_supports(const json_t *spec)
{
	const json_t *in = bt_input(spec, 0);
	const char *op = bt_op(spec, "norm");

	return op && (!strcmp(op, "l1norm") || !strcmp(op, "l2norm")) && in && bt_ndim(in) == 2 && !bt_input(spec, 1) &&
	       bt_dims_value(spec, in, 1, 2) > 0 && bt_dims_value(spec, in, 0, 1) > 0;
}

/* opt-in dynamic shared memory, less room for the static reduction array */
#define ROW_SMEM_MAX (227 * 1024 - 1024)

static int row_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 512), kreg = bt_param(p, "kreg", 8);
	int smem = bt_param(p, "smem", 1), fast = bt_param(p, "fast", 0);
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0);
	long long cols = bt_dims_value(spec, in, 1, 2);
	const char *op = bt_op(spec, "norm");
	int l1 = op && !strcmp(op, "l1norm");
	struct buf R = BUF_INIT, D = BUF_INIT;

	if (block < 64 || block > 1024 || block % 32 || kreg < 0 || kreg > 32 ||
	    (smem != 0 && smem != 1) || (fast != 0 && fast != 1) || !out)
		return kf_err(err, "norm_row: bad parameters");
	if (kreg > 8192 / block)
		kreg = 8192 / block;	/* keep the row's registers within the file */
	/* the rest of the row must fit the opt-in shared memory, else re-read */
	if (smem && (cols / 4 - (long long)block * kreg) * 16 > ROW_SMEM_MAX)
		smem = 0;
	bt_dims_expr(&R, in, 0, 1);
	bt_dims_expr(&D, in, 1, 2);
	buf_addf(s, "// template norm_row: block=%d kreg=%d smem=%d fast=%d (%s)\n"
		    "#define KREG %d\n"
		    "#define NT %d\n",
		 block, kreg, smem, fast, l1 ? "L1" : "L2", kreg, block);
	if (l1)
		buf_adds(s, "#define ACC(v) fabsf(v)\n"
			    "#define ACC4(v) (fabsf(v.x) + fabsf(v.y) + fabsf(v.z) + fabsf(v.w))\n");
	else
		buf_adds(s, "#define ACC(v) ((v) * (v))\n"
			    "#define ACC4(v) (fmaf(v.x, v.x, v.y * v.y) + fmaf(v.z, v.z, v.w * v.w))\n");
	buf_addf(s, "// Block per row: the float4 body (after a scalar head to 16-byte\n"
		    "// alignment) is read once into registers%s; then scaled.\n"
		    "extern \"C\" __global__ void __launch_bounds__(NT)\n"
		    "row_norm(const float* __restrict__ x, float* __restrict__ y, long long len)\n{\n",
		 smem ? " and shared memory" : " (the rest re-read from L2)");
	if (smem)
		buf_adds(s, "    extern __shared__ float4 cache[];\n");
	bt_cuh_section(s, norm_cuh, "row_head");
	if (kreg)
		bt_cuh_section(s, norm_cuh, "row_regs");
	bt_cuh_section(s, norm_cuh, "row_rest");
	if (smem)
		buf_adds(s, "        cache[i - (long long)KREG * NT] = v;\n");
	bt_cuh_section(s, norm_cuh, "row_sum");
	if (l1)
		buf_adds(s, "    const float f = (float)len / s;\n");
	else if (fast)
		buf_adds(s, "    const float f = rsqrtf(s);\n");
	else
		buf_adds(s, "    const float f = 1.0f / sqrtf(s);\n");
	buf_adds(s, "    for (long long i = tid; i < h; i += NT) yr[i] = xr[i] * f;\n"
		    "    for (long long i = t0 + tid; i < len; i += NT) yr[i] = xr[i] * f;\n");
	if (kreg)
		bt_cuh_section(s, norm_cuh, "row_apply_regs");
	buf_adds(s, "    for (long long i = (long long)KREG * NT + tid; i < nb; i += NT) {\n");
	if (smem)
		buf_adds(s, "        float4 v = cache[i - (long long)KREG * NT];\n");
	else
		buf_adds(s, "        float4 v = __ldg(xv + i);\n");
	bt_cuh_section(s, norm_cuh, "row_apply_end");
	if (smem)
		buf_addf(s, "/*@launch\nrow_norm<<<%s, %d, max(0, %s / 4 - %d) * 16>>>(%s, %s, %s);\n@*/\n",
			 R.s, block, D.s, block * kreg, bt_name(in), bt_name(out), D.s);
	else
		buf_addf(s, "/*@launch\nrow_norm<<<%s, %d>>>(%s, %s, %s);\n@*/\n", R.s, block,
			 bt_name(in), bt_name(out), D.s);
	buf_release(&R);
	buf_release(&D);
	return 0;
}

const struct tmpl_def tmpl_norm_defs[] = {
	{ "norm_stats", stats_supports, stats_render,
	  "{\"block\": 256, \"chunks\": 1, \"vec\": 4, \"ablock\": 256, \"apt\": 4, \"stcs\": 0}" },
	{ "norm_rms", rms_supports, rms_render,
	  "{\"block\": 256, \"vec\": 4, \"cache\": 0, \"fast\": 0}" },
	{ "norm_row", row_supports, row_render,
	  "{\"block\": 512, \"kreg\": 8, \"smem\": 1, \"fast\": 0}" },
	{ NULL, NULL, NULL, NULL },
};
