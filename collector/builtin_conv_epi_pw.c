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
#include "collector/builtin_conv_epi.h"

#include <stdio.h>
#include <string.h>

#include "collector/builtin_epi.h"
#include "collector/builtin_util.h"

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

/* gemm_epi_emit's launch line with literal sizes, rewritten with the
 * conv's size expressions (the harness's small runs change the batch);
 * 1 where it is not the one-line form this expects. */
static int relaunch(struct buf *out, const char *line, const char *name, const struct cepi_geo *g,
		    const struct gemm_shape *sh, const char *a, const char *b, const char *c)
{
	char head[192], tail[96], abc[224];
	const char *p, *q, *args, *end;
	size_t n = strlen(line);

	snprintf(head, sizeof(head), "%s<<<dim3(%lld, %lld, %lld), 256, ", name, (sh->N + 127) / 128,
		 (sh->M + 127) / 128, sh->batch);
	snprintf(tail, sizeof(tail), ", %lld, %lld, %lld);\n", sh->M, sh->N, sh->K);
	snprintf(abc, sizeof(abc), ">>>(%s, %s, %s", a, b, c);
	if (strncmp(line, head, strlen(head)) || n < strlen(head) + strlen(tail) ||
	    strcmp(line + n - strlen(tail), tail) || strchr(line, '\n') != line + n - 1)
		return 1;
	p = line + strlen(head);		/* smem>>>(a, b, c<args> */
	q = strstr(p, ">>>(");
	end = line + n - strlen(tail);
	if (!q || strncmp(q, abc, strlen(abc)) || q + strlen(abc) > end)
		return 1;
	args = q + strlen(abc);
	buf_addf(out, "%s<<<dim3(ceil_div((%s) * (%s) * (%s), 128), ceil_div(%s, 128), %s), 256, %.*s%s%.*s, "
		      "%s, (%s) * (%s) * (%s), %s);\n",
		 name, g->sz[CE_OD], g->sz[CE_OH], g->sz[CE_OW], g->sz[CE_CO], g->sz[CE_N], (int)(q - p), p, abc,
		 (int)(end - args), args, g->sz[CE_CO], g->sz[CE_OD], g->sz[CE_OH], g->sz[CE_OW], g->sz[CE_CI]);
	return 0;
}

int cepi_emit_pw(struct buf *src, struct buf *launch, const char *name, const struct cepi_geo *g,
		 const char *x, const char *w, const char *y, const struct epi *e,
		 const json_t *tparams, const char *core, struct buf *err)
{
	const json_t *sp = json_object_get(tparams, "split");
	struct gemm_shape sh = { 0 };
	struct epi ge = { 0 };
	struct buf code = BUF_INIT, body = BUF_INIT, line = BUF_INIT;
	json_t *tp;
	int rc;

	if (!pointwise(g) || !bt_param(tparams, "PW", 1))
		return 1;
	sh.batch = g->val[CE_N];
	sh.M = g->val[CE_CO];
	sh.N = g->val[CE_OD] * g->val[CE_OH] * g->val[CE_OW];
	sh.K = g->val[CE_CI];
	sh.a_bcast = 1;
	/* the GEMM's (b, m, n) renamed to the conv's (n, c, s), one scope in */
	buf_addf(&code, "        {\n"
			"        const long long kf_pb = b, kf_pm = m, kf_pn = n;\n"
			"        {\n"
			"        const long long n = kf_pb, c = kf_pm, s = kf_pn;\n"
			"        (void)n; (void)c; (void)s;\n"
			"%s"
			"        }\n"
			"        }\n",
		 e && e->code ? e->code : "");
	ge.params = e ? e->params : NULL;
	ge.args = e ? e->args : NULL;
	ge.code = code.s;
	/* 3xTF32 unless the caller asks for tf32+bf16, as the wgmma conv core;
	 * no K slices: one launch, no scratch sized by the literal shape */
	tp = json_pack("{s:s,s:s,s:i}", "core", core, "split",
		       json_is_string(sp) ? json_string_value(sp) : "3xtf32", "SPLIT", 1);
	rc = tp ? gemm_epi_emit(&body, &line, name, &sh, w, x, y, &ge, tp, err)
		: kf_err(err, "out of memory");
	json_decref(tp);
	if (!rc) {
		struct buf l2 = BUF_INIT;

		rc = relaunch(&l2, line.s, name, g, &sh, w, x, y);
		if (!rc) {
			buf_adds(src, body.s);
			buf_adds(launch, l2.s);
		}
		buf_release(&l2);
	}
	buf_release(&code);
	buf_release(&body);
	buf_release(&line);
	return rc;
}
