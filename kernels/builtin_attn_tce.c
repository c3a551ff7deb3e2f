/* Template "attn_tce": scaled dot-product attention (97) as two
 * fp32-accurate tensor-core GEMMs through gemm_epi_emit with a row softmax
 * between them: S = Q K^T / sqrt(d) into scratch, each row of S
 * softmaxed in place, O = P V. The scores leave the chip (four bytes a
 * score, written once and read twice), which pays where the head is wide:
 * 97's d = 1024 makes 2.2 TFLOP of products against 1 GiB of scores, and
 * the fused fp32 kernel (attn-flash) is bound by its FMAs. Parameters are
 * gemm_epi_emit's tparams (core, split, tiles), for both products. */
#include "kernels/builtin_tmpl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/builtin_util.h"
#include "kernels/emit/builtin_epi.h"

#define ATT_MAX_SCORES (1LL << 31) /* scratch floats (8 GiB, the engine's cap) */

/* Q [B][H][Lq][D], K [B][H][Lk][D], V [B][H][Lk][Dv], no mask. */
static int att_dims(const json_t *spec, long long *bh, long long *lq, long long *lk, long long *d,
		    long long *dv)
{
	const json_t *q = bt_input(spec, 0), *k = bt_input(spec, 1), *v = bt_input(spec, 2);
	const char *op = bt_op(spec, "attention");

	if (!op || strcmp(op, "sdpa") || !q || !k || !v || bt_input(spec, 3) || bt_ndim(q) != 4 ||
	    bt_ndim(k) != 4 || bt_ndim(v) != 4)
		return -1;
	*bh = bt_dims_value(spec, q, 0, 2);
	*lq = bt_dims_value(spec, q, 2, 3);
	*d = bt_dims_value(spec, q, 3, 4);
	*lk = bt_dims_value(spec, k, 2, 3);
	*dv = bt_dims_value(spec, v, 3, 4);
	if (*bh < 1 || *lq < 1 || *lk < 1 || *d < 1 || *dv < 1 || bt_dims_value(spec, k, 0, 2) != *bh ||
	    bt_dims_value(spec, v, 0, 2) != *bh || bt_dims_value(spec, k, 3, 4) != *d ||
	    bt_dims_value(spec, v, 2, 3) != *lk || *bh > ATT_MAX_SCORES / *lq / *lk)
		return -1;
	return 0;
}

static int att_supports(const json_t *spec)
{
	long long bh, lq, lk, d, dv;

	return att_dims(spec, &bh, &lq, &lk, &d, &dv) == 0;
}

/* A warp per row of n scores: max, sum of exponentials, normalise. */
static const char softmax_rows[] =
	"extern \"C\" __global__ void __launch_bounds__(256) att_softmax(float* __restrict__ s, long long rows)\n"
	"{\n"
	"    const long long r = blockIdx.x * 8LL + (threadIdx.x >> 5);\n"
	"    const int lane = threadIdx.x & 31;\n"
	"    if (r >= rows) return;\n"
	"    float* p = s + r * ATT_N;\n"
	"    float mx = -3.402823466e+38f, sum = 0.0f;\n"
	"    for (int j = lane; j < ATT_N; j += 32) mx = fmaxf(mx, p[j]);\n"
	"    for (int o = 16; o; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));\n"
	"    for (int j = lane; j < ATT_N; j += 32) sum += expf(p[j] - mx);\n"
	"    for (int o = 16; o; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);\n"
	"    const float inv = 1.0f / sum;\n"
	"    for (int j = lane; j < ATT_N; j += 32) p[j] = expf(p[j] - mx) * inv;\n"
	"}\n";

static int att_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	long long bh, lq, lk, d, dv;
	struct gemm_shape s1 = { 0 }, s2 = { 0 };
	struct epi e1 = { NULL, NULL, NULL }, e2 = { NULL, NULL, NULL };
	struct buf src = BUF_INIT, launch = BUF_INIT, why = BUF_INIT, code = BUF_INIT;
	char *ps;
	int rc;

	if (att_dims(spec, &bh, &lq, &lk, &d, &dv))
		return kf_err(err, "attn_tce: %s is not a supported attention", bt_id(spec));
	s1 = (struct gemm_shape){ bh, lq, lk, d, 0, 1, 0, 0, { NULL, NULL, NULL, NULL } };
	s2 = (struct gemm_shape){ bh, lq, dv, lk, 0, 0, 0, 0, { NULL, NULL, NULL, NULL } };
	buf_addf(&code, "        v *= %.9ef;", 1.0 / sqrt((double)d));
	e1.code = code.s;
	buf_addf(&launch, "scratch float att_s[%lld];\n", bh * lq * lk);
	rc = gemm_epi_emit(&src, &launch, "att_qk", &s1, bt_name(bt_input(spec, 0)),
			   bt_name(bt_input(spec, 1)), "att_s", &e1, p, &why);
	if (rc == 0) {
		buf_addf(&src, "\n#define ATT_N %lldLL\n%s#undef ATT_N\n", lk, softmax_rows);
		buf_addf(&launch, "att_softmax<<<%lld, 256>>>(att_s, %lld);\n", (bh * lq + 7) / 8, bh * lq);
		rc = gemm_epi_emit(&src, &launch, "att_pv", &s2, "att_s", bt_name(bt_input(spec, 2)),
				   bt_name(bt_output(spec, 0)), &e2, p, &why);
	}
	if (rc == 0) {
		ps = json_dumps(p, JSON_SORT_KEYS | JSON_COMPACT);
		buf_addf(s, "// template attn_tce: %s\n%s\n/*@launch\n%s@*/\n", ps ? ps : "", src.s,
			 launch.s);
		free(ps);
	} else {
		rc = kf_err(err, "attn_tce: %s", why.len ? why.s : "not supported");
	}
	buf_release(&src);
	buf_release(&launch);
	buf_release(&why);
	buf_release(&code);
	return rc;
}

const struct tmpl_def tmpl_attn_tce_defs[] = {
	{ "attn_tce", att_supports, att_render,
	  "{\"core\": \"wgmma\", \"split\": \"3xtf32\", \"BM\": 128, \"BN\": 128, \"WM\": 2, \"WN\": 4, "
	  "\"STAGES\": 4, \"SPLIT\": 0}" },
	{ NULL, NULL, NULL, NULL },
};
