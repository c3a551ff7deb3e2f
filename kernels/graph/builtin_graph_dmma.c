/* The f64 rendering's convolutions and linears on the fp64 tensor cores
 * (dmma=1, or 2): one implicit GEMM, pixels by columns, k over (input
 * channel, tap), 64 x 64 a block of 4 warps, mma m8n8k4 (or sm_90's
 * m16n8k16) from shared memory (kernels/cuda/graph_f64.cuh, dmma_*). The kernel is written in double:
 * gr_f64_promote leaves it as it is and brings the mma helper. An H100 runs
 * FP64 on its tensor cores at twice its FP64 FMA rate, and the direct conv
 * it replaces reads every operand from cache once per product. A transposed
 * conv whose kernel is its stride, unpadded, writes each output from one
 * input pixel: a GEMM of the input's pixels by (channel, tap) columns over
 * the input channels, scattered by the store. A batched matmul is the same
 * GEMM with row-major loaders, a batch a grid z. */
#include "kernels/graph/builtin_graph.h"

#include <stdio.h>

#include "kernels/builtin_util.h"
#include "gen/graph_f64_cuh.h"

#define DMMA_TILE 64
#define DMMA_THREADS 128

/* The main loop: m8n8k4 (dmma 1), or sm_90's m16n8k16 (dmma 2) where the
 * GPU has it and m8n8k4 where not; the host emulation takes m16n8k16. */
static void dmma_loop(const struct gr_plan *p, struct buf *b)
{
	bt_cuh_section(b, graph_f64_cuh, "dmma_loop");
	if (p->dmma == 2) {
		buf_adds(b, "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900\n");
		bt_cuh_section(b, graph_f64_cuh, "dmma_k16");
		buf_adds(b, "#else\n");
	}
	bt_cuh_section(b, graph_f64_cuh, "dmma_k4");
	if (p->dmma == 2)
		buf_adds(b, "#endif\n");
	bt_cuh_section(b, graph_f64_cuh, "dmma_tail");
}

/* The kernel of body (its store loop closed here), operands a and b first,
 * 128 threads a block; body released. */
static int dmma_kernel(struct gr_plan *p, int gi, const struct gr_epi *e, const char *name, const char *in_params,
		       const char *a, const char *b, const char *grid, struct buf *body, struct buf *err)
{
	struct buf sig = BUF_INIT, args = BUF_INIT;
	int rc;

	buf_adds(body, "            }\n");
	gr_sig(&sig, p, in_params, e);
	buf_addf(&args, "%s, %s, ", a, b);
	gr_args(&args, p, gi, "", e);
	p->qual = "__launch_bounds__(128)\n";
	rc = gr_kernel(p, name, sig.s, body->s, grid, DMMA_THREADS, args.s, err);
	buf_release(body);
	buf_release(&sig);
	buf_release(&args);
	return rc;
}

static void geo(struct buf *b, const char *tag, const long long *v)
{
	buf_addf(b, "    const int %sD = %lld, %sH = %lld, %sW = %lld;\n", tag, v[0], tag, v[1], tag, v[2]);
}

/* Whether a transposed conv is the scatter GEMM: kernel = stride, no
 * padding, dilation 1, output = input x stride. */
static int scatter(const struct gr_dmma_geo *g)
{
	for (int d = 0; d < 3; d++)
		if (g->k[d] != g->s[d] || g->pad[d] || g->dil[d] != 1 || g->out[d] != g->in[d] * g->s[d])
			return 0;
	return 1;
}

int gr_dmma_conv(struct gr_plan *p, int gi, const struct gr_epi *e, const char *xs, const char *ws,
		 const struct gr_dmma_geo *g, struct buf *err)
{
	static const long long one[3] = { 1, 1, 1 }, zero[3] = { 0, 0, 0 };
	struct buf body = BUF_INIT, grid = BUF_INIT;
	const int tr = g->transposed;
	const long long *pix = tr ? g->in : g->out;
	long long m = g->nb, taps = 1, nc, kt;
	char name[32];
	int rc;

	if (!p->f64 || !p->dmma || (tr && !scatter(g)))
		return 1;
	for (int d = 0; d < 3; d++) {
		m *= pix[d];
		taps *= g->k[d];
	}
	nc = tr ? g->co * taps : g->co;
	kt = tr ? g->ci : g->ci * taps;
	/* the 64 columns of a tile mostly idle below 8; k and columns in int */
	if (nc < 8 || kt >= (1LL << 31) || nc >= (1LL << 31) || (m + DMMA_TILE - 1) / DMMA_TILE >= (1LL << 31) ||
	    (nc + DMMA_TILE - 1) / DMMA_TILE > 65535)
		return 1;
	buf_addf(&body, "    /* %s%lld x %lld taps of %lld input channels: fp64 tensor cores */\n",
		 tr ? "transposed, " : "", g->co, taps, g->ci);
	buf_addf(&body, "    const int NB = %lld, CI = %lld, NC = %lld;\n", g->nb, g->ci, nc);
	geo(&body, "I", g->in);
	geo(&body, "O", pix);
	geo(&body, "K", tr ? one : g->k);
	geo(&body, "S", tr ? one : g->s);
	geo(&body, "P", tr ? zero : g->pad);
	geo(&body, "DIL", tr ? one : g->dil);
	if (tr) {	/* the scatter: columns (channel, kd, kh, kw), the output's geometry */
		buf_addf(&body, "    const int CO = %lld, TT = %lld;\n", g->co, taps);
		geo(&body, "T", g->k);
		geo(&body, "Y", g->out);
	}
	bt_cuh_section(&body, graph_f64_cuh, "dmma_head");
	bt_cuh_fill(&body, graph_f64_cuh, "conv_dmma", "BW",
		    tr ? "w[(long long)k * NC + co]" : "w[(long long)co * KT + k]", NULL);
	dmma_loop(p, &body);
	if (tr) {
		buf_adds(&body, "                const long long q = m % SP;\n"
			    "                const int tt = co % TT;\n"
			    "                const long long yi = (((m / SP * CO + co / TT) * YD + q / (OH * OW) * TD +\n"
			    "                                       tt / (TH * TW)) * YH + q / OW % OH * TH + tt / TW % TH) * YW +\n"
			    "                                     q % OW * TW + tt % TW;\n");
		gr_store_elem(&body, "                ", "yi", "r", e);
	} else {
		gr_store_elem(&body, "                ", "(m / SP * NC + co) * SP + m % SP", "r", e);
	}
	buf_addf(&grid, "dim3(%lld, %lld)", (m + DMMA_TILE - 1) / DMMA_TILE, (nc + DMMA_TILE - 1) / DMMA_TILE);
	snprintf(name, sizeof(name), "g%d_conv%s_dmma", gi, tr ? "_transpose" : "");
	rc = dmma_kernel(p, gi, e, name, "const float* __restrict__ x, const float* __restrict__ w, ", xs, ws,
			 grid.s, &body, err);
	buf_release(&grid);
	return rc;
}

int gr_dmma_mm(struct gr_plan *p, int gi, const struct gr_epi *e, long long M, long long N, long long K,
	       long long Z, const char *boffs, const char *an, const char *bn, struct buf *err)
{
	struct buf body = BUF_INIT, grid = BUF_INIT;
	char name[32];
	int rc;

	/* below 16 rows or columns a 64 x 64 tile is mostly idle: the SIMT tiles */
	if (!p->f64 || !p->dmma || M < 16 || N < 16 || K < 4 || K >= (1LL << 31) || N >= (1LL << 31) ||
	    (M + DMMA_TILE - 1) / DMMA_TILE >= (1LL << 31) || (N + DMMA_TILE - 1) / DMMA_TILE > 65535 || Z > 65535)
		return 1;
	buf_addf(&body, "    /* %lld batches of [%lld x %lld] [%lld x %lld]: fp64 tensor cores */\n", Z, M, K, K, N);
	bt_cuh_section(&body, graph_f64_cuh, "dmma_head");
	bt_cuh_fill(&body, graph_f64_cuh, "mm_dmma", "BOFFS", boffs, "M", BT_INT(M), "K", BT_INT(K),
		    "N", BT_INT(N), NULL);
	dmma_loop(p, &body);
	gr_store_elem(&body, "                ", "(z * M + m) * NC + co", "r", e);
	buf_addf(&grid, "dim3(%lld, %lld, %lld)", (M + DMMA_TILE - 1) / DMMA_TILE, (N + DMMA_TILE - 1) / DMMA_TILE, Z);
	snprintf(name, sizeof(name), "g%d_matmul_dmma", gi);
	rc = dmma_kernel(p, gi, e, name, "const float* __restrict__ a, const float* __restrict__ b, ", an, bn,
			 grid.s, &body, err);
	buf_release(&grid);
	return rc;
}
