/* conv_epi's pointwise path: a 1x1 convolution (stride 1, no padding,
 * one group, forward) is a GEMM per image, y[n] = W x[n] with W
 * [C_out][C_in] shared by the batch and x[n] [C_in][positions] read in
 * place, so gemm_epi_emit's GEMM runs it, on the core the conv asked for
 * (wgmma or mma.sync): no gather, no channels-last copy of x (level 1's
 * 087, whose 4 GiB input is past the wgmma conv core's 2 GiB copy, ran on
 * the mma conv core at 0.36x eager), and a shorter kernel text, which
 * leaves deep level-3 nets room for more tensor-core convs. The conv
 * epilogue's indices (n image, c channel, s position) are the GEMM's
 * (b, m, n). */
#include "kernels/emit/builtin_conv_epi.h"

#include "kernels/emit/builtin_epi.h"
#include "kernels/builtin_util.h"
#include "gen/conv_epi_pw_cuh.h"

static int pointwise(const struct cepi_geo *g)
{
	if (g->transposed || g->groups != 1)
		return 0;
	for (int a = 0; a < 3; a++)
		if (g->k[a] != 1 || g->st[a] != 1 || g->pad[a] != 0 || g->dil[a] != 1 ||
		    g->val[CE_OD + a] != g->val[CE_ID + a])
			return 0;
	return 1;
}

int cepi_emit_pw(struct buf *src, struct buf *launch, const char *name, const struct cepi_geo *g,
		 const char *x, const char *w, const char *y, const struct epi *e,
		 const json_t *tparams, const char *core, struct buf *err)
{
	const json_t *sp = json_object_get(tparams, "split");
	struct gemm_shape sh = { 0 };
	struct epi ge = { 0 };
	struct buf code = BUF_INIT, pos = BUF_INIT;
	json_t *tp;
	int rc;

	if (!pointwise(g) || !bt_param(tparams, "PW", 1))
		return 1;
	sh.batch = g->val[CE_N];
	sh.M = g->val[CE_CO];
	sh.N = g->val[CE_OD] * g->val[CE_OH] * g->val[CE_OW];
	sh.K = g->val[CE_CI];
	sh.a_bcast = 1;
	/* the launch in the conv's size names (the emulator's small runs
	 * change the batch) */
	buf_addf(&pos, "(%s) * (%s) * (%s)", g->sz[CE_OD], g->sz[CE_OH], g->sz[CE_OW]);
	sh.expr[0] = g->sz[CE_N];
	sh.expr[1] = g->sz[CE_CO];
	sh.expr[2] = pos.s;
	sh.expr[3] = g->sz[CE_CI];
	/* the GEMM's (b, m, n) renamed to the conv's (n, c, s), one scope in */
	bt_cuh_fill(&code, conv_epi_pw_cuh, "epi_block", "CODE", e && e->code ? e->code : "", NULL);
	ge.params = e ? e->params : NULL;
	ge.args = e ? e->args : NULL;
	ge.code = code.s;
	/* 3xTF32 unless the caller asks for tf32+bf16, as the wgmma conv core;
	 * no K slices: one launch, no scratch sized by the literal shape */
	tp = json_pack("{s:s,s:s,s:i}", "core", core, "split",
		       json_is_string(sp) ? json_string_value(sp) : "3xtf32", "SPLIT", 1);
	rc = tp ? gemm_epi_emit(src, launch, name, &sh, w, x, y, &ge, tp, err)
		: kf_err(err, "out of memory");
	json_decref(tp);
	buf_release(&code);
	buf_release(&pos);
	return rc;
}
