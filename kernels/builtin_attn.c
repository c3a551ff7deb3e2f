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
	buf_addf(s, "        for (int e = tid; e < 32 * D4; e += NT) {\n"
		    "            int k = e / D4, j = e - k * D4;\n"
		    "            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);\n"
		    "            if (k0 + k < S) v = reinterpret_cast<const float4*>(%s + (k0 + k) * D)[j];\n"
		    "            reinterpret_cast<float4*>(KV + k * DP)[j] = v;\n"
		    "        }\n", src);
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
	buf_adds(s, "extern \"C\" __global__ void __launch_bounds__(NT)\n"
		    "sdpa_flash(const float* __restrict__ Q, const float* __restrict__ K,\n"
		    "           const float* __restrict__ V, float* __restrict__ O, long long S, int D)\n{\n"
		    "    extern __shared__ float smem[];\n"
		    "    const int D4 = D / 4, DP = D + 4, NW = NT / 32;\n"
		    "    float* Qs = smem;\n"
		    "    float* KV = Qs + BQ * D;\n"
		    "    float* Ps = KV + 32 * DP;\n"
		    "    float* al = Ps + BQ * 32;\n"
		    "    float* ls = al + BQ;\n"
		    "    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;\n"
		    "    const long long nqt = (S + BQ - 1) / BQ;\n"
		    "    const long long bh = blockIdx.x / nqt, q0 = (blockIdx.x % nqt) * BQ;\n"
		    "    const long long base = bh * S * (long long)D;\n"
		    "    const float* Qb = Q + base;\n"
		    "    const float* Kb = K + base;\n"
		    "    const float* Vb = V + base;\n"
		    "    const float scale = 1.0f / sqrtf((float)D);\n"
		    "    for (int e = tid; e < BQ * D4; e += NT) {\n"
		    "        int r = e / D4, j = e - r * D4;\n"
		    "        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);\n"
		    "        if (q0 + r < S) v = reinterpret_cast<const float4*>(Qb + (q0 + r) * D)[j];\n"
		    "        reinterpret_cast<float4*>(Qs + r * D)[j] = v;\n"
		    "    }\n"
		    "    float m[RPW], l[RPW];\n"
		    "#pragma unroll\n"
		    "    for (int i = 0; i < RPW; i++) { m[i] = -__int_as_float(0x7f800000); l[i] = 0.0f; }\n"
		    "    float4 acc[BQ][MAXJ];\n"
		    "#pragma unroll\n"
		    "    for (int r = 0; r < BQ; r++)\n"
		    "#pragma unroll\n"
		    "        for (int jj = 0; jj < MAXJ; jj++) acc[r][jj] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);\n"
		    "    for (long long k0 = 0; k0 < S; k0 += 32) {\n"
		    "        __syncthreads();\n");
	emit_tile_load(s, "Kb");
	buf_adds(s, "        __syncthreads();\n"
		    "        {\n"
		    "            float4 sc[RPW];\n"
		    "#pragma unroll\n"
		    "            for (int i = 0; i < RPW; i++) sc[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);\n"
		    "            const float4* kr = reinterpret_cast<const float4*>(KV + lane * DP);\n"
		    "            for (int j = 0; j < D4; j++) {\n"
		    "                float4 kv = kr[j];\n"
		    "#pragma unroll\n"
		    "                for (int i = 0; i < RPW; i++) {\n"
		    "                    float4 qv = reinterpret_cast<const float4*>(Qs + (warp + NW * i) * D)[j];\n"
		    "                    sc[i].x = fmaf(qv.x, kv.x, sc[i].x); sc[i].y = fmaf(qv.y, kv.y, sc[i].y);\n"
		    "                    sc[i].z = fmaf(qv.z, kv.z, sc[i].z); sc[i].w = fmaf(qv.w, kv.w, sc[i].w);\n"
		    "                }\n"
		    "            }\n"
		    "#pragma unroll\n"
		    "            for (int i = 0; i < RPW; i++) {\n"
		    "                const int r = warp + NW * i;\n"
		    "                float x = k0 + lane < S ? ((sc[i].x + sc[i].y) + (sc[i].z + sc[i].w)) * scale\n"
		    "                                        : -__int_as_float(0x7f800000);\n"
		    "                float mt = x;\n"
		    "                for (int o = 16; o; o >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, o));\n"
		    "                const float mn = fmaxf(m[i], mt);\n");
	buf_addf(s, "                const float pr = %s(x - mn), a = %s(m[i] - mn);\n", ex, ex);
	buf_adds(s, "                l[i] = l[i] * a + pr;\n"
		    "                m[i] = mn;\n"
		    "                Ps[r * 32 + lane] = pr;\n"
		    "                if (lane == 0) al[r] = a;\n"
		    "            }\n"
		    "        }\n"
		    "        __syncthreads();\n");
	emit_tile_load(s, "Vb");
	buf_adds(s, "        __syncthreads();\n"
		    "#pragma unroll\n"
		    "        for (int r = 0; r < BQ; r++) {\n"
		    "            const float a = al[r];\n"
		    "#pragma unroll\n"
		    "            for (int jj = 0; jj < MAXJ; jj++) {\n"
		    "                acc[r][jj].x *= a; acc[r][jj].y *= a; acc[r][jj].z *= a; acc[r][jj].w *= a;\n"
		    "            }\n"
		    "        }\n"
		    "#pragma unroll\n"
		    "        for (int jj = 0; jj < MAXJ; jj++) {\n"
		    "            const int j = tid + NT * jj;\n"
		    "            if (j >= D4) break;\n"
		    "            for (int k = 0; k < 32; k += 4) {\n"
		    "                const float4 v0 = reinterpret_cast<const float4*>(KV + (k + 0) * DP)[j];\n"
		    "                const float4 v1 = reinterpret_cast<const float4*>(KV + (k + 1) * DP)[j];\n"
		    "                const float4 v2 = reinterpret_cast<const float4*>(KV + (k + 2) * DP)[j];\n"
		    "                const float4 v3 = reinterpret_cast<const float4*>(KV + (k + 3) * DP)[j];\n"
		    "#pragma unroll\n"
		    "                for (int r = 0; r < BQ; r++) {\n"
		    "                    const float4 p4 = reinterpret_cast<const float4*>(Ps + r * 32)[k >> 2];\n"
		    "                    float4 c = acc[r][jj];\n"
		    "                    c.x = fmaf(p4.x, v0.x, c.x); c.y = fmaf(p4.x, v0.y, c.y); c.z = fmaf(p4.x, v0.z, c.z); c.w = fmaf(p4.x, v0.w, c.w);\n"
		    "                    c.x = fmaf(p4.y, v1.x, c.x); c.y = fmaf(p4.y, v1.y, c.y); c.z = fmaf(p4.y, v1.z, c.z); c.w = fmaf(p4.y, v1.w, c.w);\n"
		    "                    c.x = fmaf(p4.z, v2.x, c.x); c.y = fmaf(p4.z, v2.y, c.y); c.z = fmaf(p4.z, v2.z, c.z); c.w = fmaf(p4.z, v2.w, c.w);\n"
		    "                    c.x = fmaf(p4.w, v3.x, c.x); c.y = fmaf(p4.w, v3.y, c.y); c.z = fmaf(p4.w, v3.z, c.z); c.w = fmaf(p4.w, v3.w, c.w);\n"
		    "                    acc[r][jj] = c;\n"
		    "                }\n"
		    "            }\n"
		    "        }\n"
		    "    }\n"
		    "#pragma unroll\n"
		    "    for (int i = 0; i < RPW; i++) {\n"
		    "        float t = l[i];\n"
		    "        for (int o = 16; o; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);\n"
		    "        if (lane == 0) ls[warp + NW * i] = t;\n"
		    "    }\n"
		    "    __syncthreads();\n"
		    "#pragma unroll\n"
		    "    for (int r = 0; r < BQ; r++) {\n"
		    "        if (q0 + r >= S) break;\n"
		    "        const float inv = 1.0f / ls[r];\n"
		    "        float4* orow = reinterpret_cast<float4*>(O + base + (q0 + r) * D);\n"
		    "#pragma unroll\n"
		    "        for (int jj = 0; jj < MAXJ; jj++) {\n"
		    "            const int j = tid + NT * jj;\n"
		    "            if (j < D4) {\n"
		    "                float4 c = acc[r][jj];\n"
		    "                c.x *= inv; c.y *= inv; c.z *= inv; c.w *= inv;\n"
		    "                orow[j] = c;\n"
		    "            }\n"
		    "        }\n"
		    "    }\n"
		    "}\n\n");
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
