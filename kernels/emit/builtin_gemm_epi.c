/* gemm_epi_emit: fp32-accurate tensor-core GEMM with a fused epilogue
 * (kernels/emit/builtin_epi.h), from the kernels of the GEMM study
 * (docs/results/gemm-4096-h100; their sources in git history): the sm_90a
 * wgmma core (wgmma_*_128x128_ilv) or the sm_80+ mma.sync core
 * (mma_*_128x128_part), each with the tf32+bf16 or the 3xTF32
 * split. This file resolves the parameters, the K slicing and the launch;
 * builtin_gemm_epi_wg.c and builtin_gemm_epi_mma.c write the kernels.
 *
 * tparams (all optional): "core": "wgmma" (default) | "mma" | "auto"
 * (wgmma where M and N are both >= 64); "split": "tf32bf16" (default) |
 * "3xtf32"; mma tiles "BM" 64|128|256, "BN" 64|128|256, "WM", "WN" (warps),
 * "STAGES" 2..5; "SPLIT" K slices (0: chosen here). */
#include "kernels/emit/builtin_gemm_epi_int.h"

#include <ctype.h>
#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/gemm_epi_cuh.h"

#define MAX_EPI_TEXT (64 * 1024)

static int is_ident(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_') || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

/* An operand's launch-block name: an identifier, or `NAME + OFFSET` with a
 * non-negative decimal element offset (a buffer of an arena; the engine
 * checks the offset is inside it). Operands are only launch arguments. */
static int is_operand(const char *s)
{
	const char *p = s ? strstr(s, " + ") : NULL;
	char id[65];
	size_t n;

	if (!p)
		return is_ident(s);
	n = (size_t)(p - s);
	if (n >= sizeof(id))
		return 0;
	memcpy(id, s, n);
	id[n] = '\0';
	p += 3;
	if (!is_ident(id) || !*p || strlen(p) > 18)
		return 0;
	for (; *p; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	return 1;
}

/* ", const float* __restrict__ e0, float s" -> ", e0, s"; -1 when a
 * parameter has no type or no name, or is named v, b, m or n. */
static int param_names(const char *params, struct buf *out)
{
	const char *p = params;

	while (isspace((unsigned char)*p))
		p++;
	if (!*p)
		return 0;
	if (*p != ',')
		return -1;
	while (*p == ',') {
		const char *start = p + 1, *end = strchr(start, ','), *q, *e;

		if (!end)
			end = start + strlen(start);
		e = end;
		while (e > start && isspace((unsigned char)e[-1]))
			e--;
		q = e;
		while (q > start && (isalnum((unsigned char)q[-1]) || q[-1] == '_'))
			q--;
		if (q == e || isdigit((unsigned char)*q))
			return -1;	/* no name */
		while (start < q && isspace((unsigned char)*start))
			start++;
		if (start == q)
			return -1;	/* a name without a type */
		if (e - q == 1 && strchr("vbmn", *q))
			return -1;	/* the epilogue's own variables */
		buf_addf(out, ", %.*s", (int)(e - q), q);
		p = end;
	}
	return 0;
}

static const char *str_param(const json_t *tp, const char *key, const char *dflt)
{
	const json_t *v = json_object_get(tp, key);

	return json_is_string(v) ? json_string_value(v) : (v ? NULL : dflt);
}

static int int_param(const json_t *tp, const char *key, int dflt, int *out)
{
	const json_t *v = json_object_get(tp, key);

	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < -1000000 || json_integer_value(v) > 1000000)
		return -1;
	*out = (int)json_integer_value(v);
	return 0;
}

static int pow2(long long v)
{
	return v > 0 && !(v & (v - 1));
}

static long long cdiv(long long a, long long b)
{
	return (a + b - 1) / b;
}

/* K slices: none past 2^15 terms (the FADD chain of per-tile partials
 * stays short), more while the output tiles leave SMs idle and slices stay
 * >= 8 tiles deep; scratch within 1 GiB and batch * split within grid.z. */
static int choose_split(const struct gemm_cfg *c, int forced)
{
	const struct gemm_shape *sh = c->sh;
	long long tiles = cdiv(sh->M, c->BM) * cdiv(sh->N, c->BN) * sh->batch;
	long long kt = cdiv(sh->K, 32);
	int s = 1;

	if (forced)
		return forced;
	while (s < 256 && sh->K > 32768LL * s)
		s <<= 1;
	while (s < 256 && tiles * s < 132 && kt >= 16LL * s)
		s <<= 1;
	while (s > 1 && (s * sh->batch * sh->M * sh->N > (1LL << 28) || s * sh->batch > 65535))
		s >>= 1;
	return s;
}

static int refuse(struct buf *err, const char *why)
{
	if (err)
		buf_setf(err, "gemm_epi: %s", why);
	return 1;
}

/* Resolves tparams and the shape into c; 1 (with the reason in err) when
 * not supported. */
static int configure(struct gemm_cfg *c, const struct gemm_shape *sh, const json_t *tp,
		     struct buf *err)
{
	const char *core = str_param(tp, "core", "wgmma"), *split = str_param(tp, "split", "tf32bf16");
	int forced, tile_given;

	if (tp && !json_is_object(tp))
		return refuse(err, "tparams is not an object");
	if (!core || (strcmp(core, "wgmma") && strcmp(core, "mma") && strcmp(core, "auto")))
		return refuse(err, "core must be \"wgmma\", \"mma\" or \"auto\"");
	if (!split || (strcmp(split, "tf32bf16") && strcmp(split, "3xtf32")))
		return refuse(err, "split must be \"tf32bf16\" or \"3xtf32\"");
	if (sh->batch < 1 || sh->M < 1 || sh->N < 1 || sh->K < 1)
		return refuse(err, "batch, M, N and K must be >= 1");
	if (sh->batch > 65535 || sh->M > (1LL << 30) || sh->N > (1LL << 30) || sh->K > (1LL << 24) ||
	    sh->batch * sh->M * sh->N > (1LL << 34))
		return refuse(err, "shape too large");
	c->sh = sh;
	c->bf = !strcmp(split, "tf32bf16");
	c->wgmma = !strcmp(core, "wgmma") || (!strcmp(core, "auto") && sh->M >= 64 && sh->N >= 64);
	tile_given = json_object_get(tp, "BM") || json_object_get(tp, "BN") ||
		     json_object_get(tp, "WM") || json_object_get(tp, "WN");
	if (int_param(tp, "BM", 128, &c->BM) || int_param(tp, "BN", 128, &c->BN) ||
	    int_param(tp, "WM", 2, &c->WM) || int_param(tp, "WN", 4, &c->WN) ||
	    int_param(tp, "STAGES", 4, &c->stages) || int_param(tp, "SPLIT", 0, &forced))
		return refuse(err, "integer parameters out of range");
	if (c->stages < 2 || c->stages > 5)
		return refuse(err, "STAGES must be 2..5");
	if (forced < 0 || forced > 1024)
		return refuse(err, "SPLIT must be 0..1024");
	if (c->wgmma) {
		if (tile_given && (c->BM != 128 || c->BN != 128 || c->WM != 2 || c->WN != 4))
			return refuse(err, "the wgmma core's tile is 128 x 128 (BM, BN) on 2 x 4 warps");
		c->BM = c->BN = 128;
		c->WM = 2;
		c->WN = 4;
		c->nthr = 256;
		c->vec_a = !sh->a_km && sh->K % 4 == 0;
		c->bt_k = sh->b_nk && sh->K % 4 == 0;
		c->vec_b = c->bt_k || (!sh->b_nk && sh->N % 4 == 0);
		/* stages of A (128 x 32) and B (32 x 136, or 128 x 36 K-contiguous),
		 * two split buffers of A, 1024 for the swizzle atoms' alignment */
		c->smem = c->stages * (16384 + (c->bt_k ? 18432 : 17408)) + 2 * 16384 + 1024;
	} else {
		int mt, nq;

		if ((c->BM != 64 && c->BM != 128 && c->BM != 256) ||
		    (c->BN != 64 && c->BN != 128 && c->BN != 256) || !pow2(c->WM) || !pow2(c->WN))
			return refuse(err, "mma tiles: BM, BN 64|128|256, WM, WN powers of 2");
		c->nthr = 32 * c->WM * c->WN;
		mt = c->BM / c->WM / 16;
		nq = c->BN / c->WN / 32;
		/* acc + part: 32 * mt * nq registers; 256 threads at most keep 255 each */
		if (c->nthr < 64 || c->nthr > 256 || mt < 1 || nq < 1 || mt * nq > 4 ||
		    c->BM % (16 * c->WM) || c->BN % (32 * c->WN) || (c->BM * 8) % c->nthr ||
		    (8 * c->BN) % c->nthr)
			return refuse(err, "mma tiles: 2..8 warps, warp tile (BM/WM) x (BN/WN) 16..64 x 32..128, at most 64 x 32 or 32 x 64");
		c->vec_a = !sh->a_km && sh->K % 4 == 0;
		c->vec_b = !sh->b_nk && sh->N % 4 == 0;
		c->smem = c->stages * (c->BM + c->BN) * 32 * 4;
		if (c->smem > 227 * 1024)
			return refuse(err, "mma tiles: over 227 KiB of shared memory");
	}
	if (cdiv(sh->M, c->BM) > 65535)
		return refuse(err, "M too large for grid.y");
	c->split = choose_split(c, forced);
	if ((sh->expr[0] || sh->expr[1] || sh->expr[2] || sh->expr[3]) &&
	    (!sh->expr[0] || !sh->expr[1] || !sh->expr[2] || !sh->expr[3] || c->split != 1))
		return refuse(err, "size expressions need all four and one K slice");
	if (c->split * sh->batch > 65535 ||
	    (c->split > 1 && c->split * sh->batch * sh->M * sh->N > (1LL << 28)))
		return refuse(err, "SPLIT x batch too large");
	if (sh->K > 32768LL * c->split * 2)
		return refuse(err, "K too long for the slices the scratch allows");
	return 0;
}

/* Device helpers of both cores, once per candidate (guarded). */
void gemm_emit_common(struct buf *s)
{
	bt_cuh_section(s, gemm_epi_cuh, "common");
}

/* The epilogue as a function of v, b, m, n and the caller's parameters only. */
static void emit_epi(struct buf *s, const struct gemm_cfg *c, const struct epi *e)
{
	bt_cuh_fill(s, gemm_epi_cuh, "epi_fn", "NAME", c->name, "PARAMS", c->params,
		    "CODE", e && e->code ? e->code : "", NULL);
}

void gemm_emit_prologue(struct buf *s, const struct gemm_cfg *c)
{
	const struct gemm_shape *sh = c->sh;

	bt_cuh_fill(s, gemm_epi_cuh, "prologue", "SPLIT", BT_INT(c->split),
		    "A_OFF", sh->a_bcast ? "0" : "kf_bz * M * K",
		    "B_OFF", sh->b_bcast ? "0" : "kf_bz * K * N", "BATCH", BT_INT(sh->batch), NULL);
	if (c->split > 1)
		buf_adds(s, "    auto epi = [&](float v, long long m, long long n) { (void)m, (void)n; return v; };\n");
	else
		buf_addf(s, "    auto epi = [&](float v, long long m, long long n) { return %s_epi(v, kf_bz, m, n%s); };\n",
			 c->name, c->pnames);
}

static void emit_sum(struct buf *s, const struct gemm_cfg *c)
{
	bt_cuh_fill(s, gemm_epi_cuh, "sum", "NAME", c->name, "PARAMS", c->params,
		    "SPLIT", BT_INT(c->split), "PNAMES", c->pnames, NULL);
}

int gemm_epi_emit(struct buf *src, struct buf *launch, const char *name,
		  const struct gemm_shape *sh, const char *a, const char *b, const char *c,
		  const struct epi *e, const json_t *tparams, struct buf *err)
{
	struct gemm_cfg cfg;
	struct buf pn = BUF_INIT, body = BUF_INIT, lines = BUF_INIT, cname = BUF_INIT;
	const char *params = e && e->params ? e->params : "", *args = e && e->args ? e->args : "";
	long long total;
	int rc;

	if (!src || !launch || !sh || !is_ident(name) || !is_operand(a) || !is_operand(b) || !is_operand(c))
		return kf_err(err, "gemm_epi: bad arguments (names must be identifiers, operands may be "
			      "NAME + OFFSET)");
	if (strlen(params) > MAX_EPI_TEXT || strlen(args) > MAX_EPI_TEXT ||
	    (e && e->code && strlen(e->code) > MAX_EPI_TEXT))
		return kf_err(err, "gemm_epi: epilogue text over %d bytes", MAX_EPI_TEXT);
	if (param_names(params, &pn) < 0) {
		buf_release(&pn);
		return kf_err(err, "gemm_epi: cannot read the parameter names of \"%s\" (each: TYPE NAME, "
			      "NAME not v, b, m or n)", params);
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.name = name;
	rc = configure(&cfg, sh, tparams, err);
	if (rc) {
		buf_release(&pn);
		return rc;
	}
	total = sh->batch * sh->M * sh->N;
	/* With K slices the GEMM writes scratch and the sum kernel owns the epilogue. */
	cfg.params = cfg.split > 1 ? "" : params;
	cfg.pnames = cfg.split > 1 ? "" : pn.s;
	gemm_emit_common(&body);
	buf_addf(&body, "// gemm_epi %s: %s core, %s split, batch %lld, M %lld, N %lld, K %lld, "
		       "A %s%s, B %s%s, SPLIT %d\n",
		 name, cfg.wgmma ? "wgmma (sm_90a)" : "mma.sync", cfg.bf ? "tf32+bf16" : "3xTF32",
		 sh->batch, sh->M, sh->N, sh->K, sh->a_km ? "[K][M]" : "[M][K]",
		 sh->a_bcast ? " shared" : "", sh->b_nk ? "[N][K]" : "[K][N]", sh->b_bcast ? " shared" : "",
		 cfg.split);
	{
		struct gemm_cfg ecfg = cfg;

		ecfg.params = params;
		emit_epi(&body, &ecfg, e);
	}
	if (cfg.wgmma)
		gemm_emit_wgmma(&body, &cfg);
	else
		gemm_emit_mma(&body, &cfg);
	if (cfg.split > 1) {
		cfg.params = params;
		cfg.pnames = pn.s;
		emit_sum(&body, &cfg);
		buf_addf(&cname, "%s_part", name);
		buf_addf(&lines, "scratch float %s[%lld];\n", cname.s, total * cfg.split);
	} else {
		buf_adds(&cname, c);
	}
	if (sh->expr[0])	/* one K slice (configure) */
		buf_addf(&lines, "%s<<<dim3(ceil_div(%s, %d), ceil_div(%s, %d), %s), %d, %d>>>(%s, %s, %s%s, %s, %s, %s);\n",
			 name, sh->expr[2], cfg.BN, sh->expr[1], cfg.BM, sh->expr[0], cfg.nthr, cfg.smem, a, b,
			 cname.s, args, sh->expr[1], sh->expr[2], sh->expr[3]);
	else
		buf_addf(&lines, "%s<<<dim3(%lld, %lld, %lld), %d, %d>>>(%s, %s, %s%s, %lld, %lld, %lld);\n",
			 name, cdiv(sh->N, cfg.BN), cdiv(sh->M, cfg.BM), sh->batch * cfg.split, cfg.nthr,
			 cfg.smem, a, b, cname.s, cfg.split > 1 ? "" : args, sh->M, sh->N, sh->K);
	if (cfg.split > 1)
		buf_addf(&lines, "%s_sum<<<%lld, 256>>>(%s, %s%s, %lld, %lld, %lld);\n", name,
			 cdiv(total, 256), cname.s, c, args, sh->M * sh->N, sh->N, total);
	buf_adds(src, body.s);
	buf_adds(launch, lines.s);
	buf_release(&pn);
	buf_release(&body);
	buf_release(&lines);
	buf_release(&cname);
	return 0;
}
