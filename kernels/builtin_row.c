/* Template "rowsoftmax": softmax / log-softmax over the last dim of a 2-D
 * tensor, one block per row. Parameters: block, vec (1|4), online (one
 * pass for max and sum), fast (__expf). */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/rowsoftmax_cuh.h"

static int is_log(const json_t *spec)
{
	const char *op = bt_op(spec, "norm");

	return op && !strcmp(op, "log_softmax");
}

int tmpl_rowsoftmax_supports(const json_t *spec)
{
	const json_t *in = bt_input(spec, 0);
	const char *op = bt_op(spec, "norm");

	return op && (!strcmp(op, "softmax") || is_log(spec)) && in && bt_ndim(in) == 2 && !bt_input(spec, 1) &&
	       bt_int_arg(spec, "dim", 1) != 0;
}

int tmpl_rowsoftmax_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 512), vec = bt_param(p, "vec", 1);
	int online = bt_param(p, "online", 0), fast = bt_param(p, "fast", 0);
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0);
	long long cols = bt_dims_value(spec, in, 1, 2);
	const char *ex = fast ? "__expf" : "expf";
	struct buf rows = BUF_INIT, c = BUF_INIT;
	const char *vt = vec == 4 ? "float4" : "float";

	if (block < 64 || block > 1024 || block % 32 || (vec != 1 && vec != 4))
		return kf_err(err, "rowsoftmax: bad parameters");
	if (vec == 4 && (cols < 0 || cols % 4))
		vec = 1, vt = "float";
	bt_dims_expr(&rows, in, 0, 1);
	bt_dims_expr(&c, in, 1, 2);
	buf_addf(s, "// template rowsoftmax: block=%d vec=%d online=%d fast=%d%s\n", block, vec,
		 online, fast, is_log(spec) ? " (log-softmax)" : "");
	bt_cuh_section(s, rowsoftmax_cuh, "defines");
	buf_addf(s, "    s = s * %s(m - mm) + s2 * %s(m2 - mm);\n    m = mm;\n}\n", ex, ex);
	buf_addf(s, "__device__ __forceinline__ void upd(float& m, float& s, float v) {\n"
		    "    if (v > m) { s = s * %s(m - v) + 1.0f; m = v; } else { s += %s(v - m); }\n}\n",
		 ex, ex);
	bt_cuh_fill(s, rowsoftmax_cuh, "kernel_head", "BLOCK", BT_INT(block), "VEC", BT_INT(vec),
		    "VT", vt, NULL);
	if (online) {
		buf_adds(s, "    for (long long i = threadIdx.x; i < nv; i += blockDim.x) {\n");
		if (vec == 4)
			buf_adds(s, "        float4 v = xv[i]; upd(m, s, v.x); upd(m, s, v.y); upd(m, s, v.z); upd(m, s, v.w);\n");
		else
			buf_adds(s, "        upd(m, s, xv[i]);\n");
		buf_adds(s, "    }\n");
	} else {
		buf_adds(s, "    for (long long i = threadIdx.x; i < nv; i += blockDim.x) {\n");
		if (vec == 4)
			buf_adds(s, "        float4 v = xv[i]; m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));\n");
		else
			buf_adds(s, "        m = fmaxf(m, xv[i]);\n");
		bt_cuh_section(s, rowsoftmax_cuh, "max_reduce");
		if (vec == 4)
			buf_addf(s, "        float4 v = xv[i]; s += %s(v.x - m) + %s(v.y - m) + %s(v.z - m) + %s(v.w - m);\n",
				 ex, ex, ex, ex);
		else
			buf_addf(s, "        s += %s(xv[i] - m);\n", ex);
		buf_adds(s, "    }\n");
	}
	bt_cuh_section(s, rowsoftmax_cuh, "comb_reduce");
	if (is_log(spec))
		buf_adds(s, "    const float sub = m + logf(s);\n"
			    "#define OUT(v) ((v) - sub)\n");
	else
		buf_addf(s, "    const float inv = 1.0f / s;\n"
			    "#define OUT(v) (%s((v) - m) * inv)\n", ex);
	buf_addf(s, "    %s* yv = reinterpret_cast<%s*>(yr);\n"
		    "    for (long long i = threadIdx.x; i < nv; i += blockDim.x) {\n", vt, vt);
	if (vec == 4)
		bt_cuh_section(s, rowsoftmax_cuh, "out_vec4");
	else
		buf_adds(s, "        yv[i] = OUT(xv[i]);\n");
	buf_addf(s, "    }\n}\n\n/*@launch\nrow_softmax<<<%s, %d>>>(%s, %s, %s);\n@*/\n", rows.s, block,
		 bt_name(in), bt_name(out), c.s);
	buf_release(&rows);
	buf_release(&c);
	return 0;
}
