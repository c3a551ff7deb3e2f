/* Template "ew": elementwise operators (activations, scalar multiply).
 * Parameters: block, vec (1|4), ilp (1|2|4), gridstride (0|1), waves,
 * fast (intrinsics), stream (__ldg/__stcs). */
#include "kernels/builtin_tmpl.h"

#include <stdio.h>
#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/ew_cuh.h"

/* A float literal: "1.0f", "-1.0f", "0.01f" ("%gf" would give "1f", not C). */
static const char *flit(double v, char out[40])
{
	snprintf(out, 40, "%.9g", v);
	if (!strpbrk(out, ".eEn"))
		strcat(out, ".0");
	strcat(out, "f");
	return out;
}

/* The operator (attrs "op") as a C expression of v (float). */
static int ew_expr(const json_t *spec, int fast, struct buf *e)
{
	const char *ex = fast ? "__expf" : "expf", *op = bt_op(spec, "elementwise");
	char tmp[128], f1[40], f2[40];

	if (fast)
		snprintf(tmp, sizeof(tmp), "__fdividef(1.0f, 1.0f + __expf(-v))");
	else
		snprintf(tmp, sizeof(tmp), "1.0f / (1.0f + expf(-v))");

	if (!op)
		return -1;
	if (!strcmp(op, "scale"))
		buf_addf(e, "v * %s", flit(bt_scalar(spec, "s", 3.14), f1));
	else if (!strcmp(op, "relu"))
		buf_adds(e, "fmaxf(v, 0.0f)");
	else if (!strcmp(op, "leaky_relu"))
		buf_addf(e, "v > 0.0f ? v : v * %s", flit(bt_scalar(spec, "negative_slope", 0.01), f1));
	else if (!strcmp(op, "sigmoid"))
		buf_adds(e, tmp);
	else if (!strcmp(op, "tanh"))
		buf_adds(e, "tanhf(v)");
	else if (!strcmp(op, "swish"))
		buf_addf(e, "v * (%s)", tmp);
	/* gelu and new_gelu as erfc and a logistic, not 1 + erf or 1 + tanh: no
	 * cancellation for v << 0, where a wide draw's tiny outputs would be 0 */
	else if (!strcmp(op, "gelu"))
		buf_adds(e, "0.5f * v * erfcf(v * -0.7071067811865476f)");
	else if (!strcmp(op, "selu"))
		buf_addf(e, "1.0507009873554805f * (v > 0.0f ? v : 1.6732632423543772f * (%s(v) - 1.0f))", ex);
	else if (!strcmp(op, "hardsigmoid"))
		buf_adds(e, "fminf(fmaxf(v * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f)");
	else if (!strcmp(op, "softplus"))
		buf_addf(e, "v > 20.0f ? v : log1pf(%s(v))", ex);
	else if (!strcmp(op, "softsign"))
		buf_adds(e, fast ? "__fdividef(v, 1.0f + fabsf(v))" : "v / (1.0f + fabsf(v))");
	else if (!strcmp(op, "elu"))
		buf_addf(e, "v > 0.0f ? v : %s * (%s(v) - 1.0f)", flit(bt_scalar(spec, "alpha", 1.0), f1), ex);
	else if (!strcmp(op, "hardtanh"))
		buf_addf(e, "fminf(fmaxf(v, %s), %s)", flit(bt_scalar(spec, "min_val", -1.0), f1),
			 flit(bt_scalar(spec, "max_val", 1.0), f2));
	else if (!strcmp(op, "new_gelu"))
		buf_adds(e, "v / (1.0f + expf(-1.5957691216057308f * (v + 0.044715f * v * v * v)))");
	else
		return -1;
	return 0;
}

int tmpl_ew_supports(const json_t *spec)
{
	struct buf e = BUF_INIT;
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0);
	int ok = ew_expr(spec, 0, &e) == 0 && in && out && !bt_input(spec, 1) &&
		 bt_dims_value(spec, in, 0, bt_ndim(in)) == bt_dims_value(spec, out, 0, bt_ndim(out));

	buf_release(&e);
	return ok;
}

int tmpl_ew_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 256), vec = bt_param(p, "vec", 1);
	int ilp = bt_param(p, "ilp", 1), gs = bt_param(p, "gridstride", 0);
	int waves = bt_param(p, "waves", 2), fast = bt_param(p, "fast", 0);
	int stream = bt_param(p, "stream", 0);
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0);
	struct buf e = BUF_INIT, n = BUF_INIT;
	const char *vt = vec == 4 ? "float4" : "float";

	if (block < 32 || block > 1024 || (vec != 1 && vec != 4) || ilp < 1 || ilp > 8 || waves < 1 || waves > 64)
		return kf_err(err, "ew: bad parameters");
	if (ew_expr(spec, fast, &e))
		return kf_err(err, "ew: no elementwise operator for %s", bt_id(spec));
	bt_dims_expr(&n, in, 0, bt_ndim(in));
	buf_addf(s, "// template ew: block=%d vec=%d ilp=%d gridstride=%d fast=%d stream=%d\n",
		 block, vec, ilp, gs, fast, stream);
	buf_addf(s, "__device__ __forceinline__ float op(float v) { return %s; }\n\n", e.s);
	buf_addf(s, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
		    "ew_kernel(const float* __restrict__ x, float* __restrict__ y, long long n)\n{\n",
		 block);
	buf_addf(s, "    const long long nv = n / %d;\n"
		    "    const %s* __restrict__ xv = reinterpret_cast<const %s*>(x);\n"
		    "    %s* __restrict__ yv = reinterpret_cast<%s*>(y);\n"
		    "    const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
		    "    const long long nthreads = (long long)gridDim.x * blockDim.x;\n",
		 vec, vt, vt, vt, vt);
	bt_cuh_fill(s, ew_cuh, "loop", "ILP", BT_INT(ilp), "VT", vt,
		    "LOAD", stream ? "__ldg(&xv[j])" : "xv[j]", NULL);
	if (vec == 4)
		buf_adds(s, "            float4 v4 = r[k];\n"
			    "            v4.x = op(v4.x); v4.y = op(v4.y); v4.z = op(v4.z); v4.w = op(v4.w);\n");
	else
		buf_adds(s, "            float v4 = op(r[k]);\n");
	buf_addf(s, "            %s;\n        }\n    }\n", stream ? "__stcs(&yv[j], v4)" : "yv[j] = v4");
	buf_addf(s, "    long long t = nv * %d + tid;\n"
		    "    if (t < n) y[t] = op(x[t]);\n}\n\n", vec);
	buf_adds(s, "/*@launch\n");
	if (gs)
		buf_addf(s, "ew_kernel<<<min(ceil_div(%s, %d), %d), %d>>>(%s, %s, %s);\n", n.s,
			 block * vec * ilp, 132 * (2048 / block) * waves, block, bt_name(in), bt_name(out), n.s);
	else
		buf_addf(s, "ew_kernel<<<ceil_div(%s, %d), %d>>>(%s, %s, %s);\n", n.s,
			 block * vec * ilp, block, bt_name(in), bt_name(out), n.s);
	buf_adds(s, "@*/\n");
	buf_release(&e);
	buf_release(&n);
	return 0;
}
