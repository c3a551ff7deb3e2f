/* Template "matmul_tce": the level-1 matrix products through gemm_epi_emit
 * (kernels/emit/builtin_gemm_epi*.c), the fp32-accurate tensor-core core of
 * the GEMM study (wgmma on sm_90a, or mma.sync; docs/results/gemm-4096-h100),
 * with no epilogue but the
 * triangular mask of 14/15. Not 4 (matrix-vector: "gemv"). Parameters
 * are gemm_epi_emit's tparams: core, split, BM, BN, WM, WN, STAGES, SPLIT. */
#include "kernels/builtin_tmpl.h"

#include <stdlib.h>

#include "kernels/emit/builtin_epi.h"
#include "kernels/builtin_util.h"

/* The product's numeric shape, as bt_mm_dims gives its expressions. */
static int tce_shape(const json_t *spec, struct gemm_shape *sh)
{
	const struct bt_mm_kind *k = bt_mm_kind_of(spec);
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1);
	int na, nb, off;

	if (!k || bt_mm_vec(spec) || !a || !b || bt_input(spec, 2) || bt_ndim(a) < 2 || bt_ndim(b) < 2)
		return -1;
	na = bt_ndim(a);
	nb = bt_ndim(b);
	off = k->batched ? 1 : 0;
	sh->batch = k->batched ? bt_dims_value(spec, a, 0, 1) : 1;
	sh->M = k->trans_a ? bt_dims_value(spec, a, off + 1, off + 2) : bt_dims_value(spec, a, off, na - 1);
	sh->K = k->trans_a ? bt_dims_value(spec, a, off, off + 1) : bt_dims_value(spec, a, na - 1, na);
	sh->N = k->trans_b ? bt_dims_value(spec, b, off, off + 1) : bt_dims_value(spec, b, nb - 1, nb);
	sh->a_km = k->trans_a;
	sh->b_nk = k->trans_b;
	sh->a_bcast = sh->b_bcast = 0;
	return sh->batch > 0 && sh->M > 0 && sh->N > 0 && sh->K > 0 ? 0 : -1;
}

static int tce_supports(const json_t *spec)
{
	struct gemm_shape sh = { 0 };

	return tce_shape(spec, &sh) == 0;
}

static int tce_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	const struct bt_mm_kind *k = bt_mm_kind_of(spec);
	struct gemm_shape sh = { 0 };
	struct epi e = { NULL, NULL, NULL };
	struct buf src = BUF_INIT, launch = BUF_INIT, why = BUF_INIT;
	char *ps;
	int rc;

	if (tce_shape(spec, &sh))
		return kf_err(err, "matmul_tce: %s is not a supported product", bt_id(spec));
	/* structural zeros of the triangular products' output */
	if (k->tri == 1)
		e.code = "        if (m > n) v = 0.0f;";
	else if (k->tri == 2)
		e.code = "        if (m < n) v = 0.0f;";
	rc = gemm_epi_emit(&src, &launch, "mm_tce", &sh, bt_name(bt_input(spec, 0)),
			   bt_name(bt_input(spec, 1)), bt_name(bt_output(spec, 0)), &e, p, &why);
	if (rc == 0) {
		ps = json_dumps(p, JSON_SORT_KEYS | JSON_COMPACT);
		buf_addf(s, "// template matmul_tce: %s\n%s\n/*@launch\n%s@*/\n", ps ? ps : "", src.s,
			 launch.s);
		free(ps);
	} else {
		rc = kf_err(err, "matmul_tce: %s", why.len ? why.s : "not supported");
	}
	buf_release(&src);
	buf_release(&launch);
	buf_release(&why);
	return rc;
}

const struct tmpl_def tmpl_tce_defs[] = {
	{ "matmul_tce", tce_supports, tce_render,
	  "{\"core\": \"wgmma\", \"split\": \"tf32bf16\", \"BM\": 128, \"BN\": 128, \"WM\": 2, \"WN\": 4, "
	  "\"STAGES\": 4, \"SPLIT\": 0}" },
	{ NULL, NULL, NULL, NULL },
};
