/* conv_tce: the level-1 template over conv_epi's tensor-core implicit GEMM
 * (builtin_conv_epi*.c: "core" "mma", the default, "wgmma" (sm_90a) or
 * "wmma"; "split" and "STAGES" for the mma and wgmma cores, MW for the
 * wgmma one (and WG: 1 one warpgroup a block, two blocks an SM; PS: x's
 * small parts split once, by its copy; PW: a 1x1 conv as a batched GEMM),
 * BK for the wmma one) for forward and transposed convolutions; the bias
 * (problem 50) is its epilogue. Sizes go to the kernels as size names, so
 * the harness may shrink them. Refused: what conv_epi refuses (depthwise:
 * under 8 output channels a group) and the depthwise-separable pair (86). */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/emit/builtin_conv_epi.h"
#include "kernels/builtin_util.h"

struct tce {
	struct cepi_geo g;
	struct buf sz[CE_NSZ];
	int bias;
};

static const json_t *attr(const json_t *spec, const char *name)
{
	return json_object_get(json_object_get(spec, "attrs"), name);
}

/* attrs[name] (nd values, each 0..4096) right-aligned into v[3]. */
static int read3(const json_t *spec, const char *name, int nd, int dflt, int v[3])
{
	const json_t *a = attr(spec, name);

	for (int i = 0; i < 3; i++)
		v[i] = dflt;
	if (!a)
		return 0;
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

static void tce_release(struct tce *t)
{
	for (int i = 0; i < CE_NSZ; i++)
		buf_release(&t->sz[i]);
}

/* Reads the spec's convolution; 0 when conv_epi supports it. t is
 * tce_release-able either way. */
static int tce_read(const json_t *spec, struct tce *t)
{
	const json_t *x = bt_input(spec, 0), *w = bt_input(spec, 1), *y = bt_output(spec, 0);
	const json_t *grp = attr(spec, "groups");
	struct buf why = BUF_INIT;
	int nd, op[3], rc;

	memset(t, 0, sizeof(*t));
	for (int i = 0; i < CE_NSZ; i++)
		buf_init(&t->sz[i]);
	if (!x || !w || !y || !attr(spec, "kernel") || json_is_true(attr(spec, "pointwise")))
		return -1;
	nd = bt_ndim(x) - 2;
	if (nd < 1 || nd > 3 || bt_ndim(y) != nd + 2 || bt_ndim(w) != nd + 2)
		return -1;
	t->g.transposed = json_is_true(attr(spec, "transposed"));
	t->g.groups = grp ? (int)json_integer_value(grp) : 1;
	if (read3(spec, "kernel", nd, 1, t->g.k) || read3(spec, "stride", nd, 1, t->g.st) ||
	    read3(spec, "padding", nd, 0, t->g.pad) || read3(spec, "dilation", nd, 1, t->g.dil) ||
	    read3(spec, "output_padding", nd, 0, op))
		return -1;
	t->bias = json_is_true(attr(spec, "bias"));
	if (t->bias && !bt_input(spec, 2))
		return -1;
	if (!t->bias && bt_input(spec, 2))
		return -1;
	bt_dims_expr(&t->sz[CE_N], x, 0, 1);
	bt_dims_expr(&t->sz[CE_CI], x, 1, 2);
	bt_dims_expr(&t->sz[CE_CO], y, 1, 2);
	t->g.val[CE_N] = bt_dims_value(spec, x, 0, 1);
	t->g.val[CE_CI] = bt_dims_value(spec, x, 1, 2);
	t->g.val[CE_CO] = bt_dims_value(spec, y, 1, 2);
	for (int a = 0; a < 3; a++) {
		int i = 2 + a - (3 - nd);

		if (i < 2) {
			buf_adds(&t->sz[CE_ID + a], "1");
			buf_adds(&t->sz[CE_OD + a], "1");
			t->g.val[CE_ID + a] = t->g.val[CE_OD + a] = 1;
			continue;
		}
		bt_dims_expr(&t->sz[CE_ID + a], x, i, i + 1);
		bt_dims_expr(&t->sz[CE_OD + a], y, i, i + 1);
		t->g.val[CE_ID + a] = bt_dims_value(spec, x, i, i + 1);
		t->g.val[CE_OD + a] = bt_dims_value(spec, y, i, i + 1);
	}
	for (int i = 0; i < CE_NSZ; i++)
		t->g.sz[i] = t->sz[i].s;
	rc = cepi_supported(&t->g, &why);
	buf_release(&why);
	return rc ? -1 : 0;
}

static int tce_supports(const json_t *spec)
{
	struct tce t;
	int ok = !tce_read(spec, &t);

	tce_release(&t);
	return ok;
}

static int tce_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	struct tce t;
	struct buf launch = BUF_INIT, args = BUF_INIT;
	struct epi e = { ", const float* __restrict__ bias", NULL, "        v += bias[c];\n" };
	int rc;

	if (tce_read(spec, &t)) {
		tce_release(&t);
		return kf_err(err, "conv_tce: does not apply to this convolution");
	}
	buf_addf(&args, ", %s", bt_name(bt_input(spec, 2)) ? bt_name(bt_input(spec, 2)) : "");
	e.args = args.s;
	buf_adds(s, "// template conv_tce (conv_epi: tensor-core implicit GEMM, fp32-accurate)\n");
	rc = cepi_emit(s, &launch, "conv_tce", &t.g, bt_name(bt_input(spec, 0)),
		       bt_name(bt_input(spec, 1)), bt_name(bt_output(spec, 0)), t.bias ? &e : NULL, p,
		       err);
	if (rc == 1)
		rc = kf_err(err, "conv_tce: does not apply to this convolution");
	if (!rc)
		buf_addf(s, "/*@launch\n%s@*/\n", launch.s);
	buf_release(&launch);
	buf_release(&args);
	tce_release(&t);
	return rc;
}

const struct tmpl_def tmpl_conv_epi_defs[] = {
	{ "conv_tce", tce_supports, tce_render,
	  "{\"core\": \"mma\", \"split\": \"tf32bf16\", \"BM\": 0, \"BN\": 0, \"BK\": 32, \"WM\": 0, "
	  "\"WN\": 0, \"CB\": 0, \"STAGES\": 0, \"MW\": 0, \"WG\": 2, \"PS\": 1, \"PW\": 1, \"PO\": 1}" },
	{ NULL, NULL, NULL, NULL },
};
