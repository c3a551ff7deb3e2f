/* gemm_epi_emit's wgmma core (sm_90a): the GEMM study's wgmma_{tf32bf16,3xtf32}_128x128_ilv
 * generalised to any M, N, K (zero-filled edges), both layouts of A and B,
 * batches and K slices. The product runs transposed, C^T = B^T A^T: the A
 * tile (K-contiguous rows, 128-byte swizzle) is the shared-memory operand
 * and a 64-column slice of B per warpgroup the register operand, split in
 * registers. A stored [K][M], and rows that are not 16-byte multiples,
 * are copied 4 bytes at a time into the same layouts; B stored [N][K] with
 * K % 4 == 0 keeps its tile K-contiguous (16-byte copies). */
#include "kernels/emit/builtin_gemm_epi_int.h"
#include "kernels/builtin_util.h"
#include "gen/gemm_epi_wg_cuh.h"

/* D[64 x 128] (+)= A (4 registers) * B (descriptor): tf32 k8 or bf16 k16. */
static void emit_wgmma_fn(struct buf *s, const char *fn, const char *shape, const char *bf_tail)
{
	buf_addf(s, "__device__ __forceinline__ void %s(float (&d)[64], const unsigned (&a)[4],\n"
		    "        unsigned long long desc, int scale_d)\n{\n"
		    "    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%69, 0;\\n\"\n"
		    "                 \"wgmma.mma_async.sync.aligned.%s {", fn, shape);
	for (int i = 0; i < 64; i++)
		buf_addf(s, "%%%d%s", i, i < 63 ? ", " : "");
	buf_addf(s, "}, {%%64, %%65, %%66, %%67}, %%68, p, 1, 1%s;\\n}\\n\"\n                 : ", bf_tail);
	for (int i = 0; i < 64; i++)
		buf_addf(s, "\"+f\"(d[%d])%s", i, i < 63 ? ", " : "");
	bt_cuh_section(s, gemm_epi_wg_cuh, "wgmma_fn_tail");
}

/* A warpgroup's B fragment loads (ld.shared). */
static void emit_load_b(struct buf *s)
{
	bt_cuh_section(s, gemm_epi_wg_cuh, "load_b");
}

void gemm_emit_wg_helpers(struct buf *s)
{
	bt_cuh_section(s, gemm_epi_wg_cuh, "helpers_head");
	emit_wgmma_fn(s, "kfg_wgmma_tf32", "m64n128k8.f32.tf32.tf32", "");
	emit_wgmma_fn(s, "kfg_wgmma_bf16", "m64n128k16.f32.bf16.bf16", ", 0");
	emit_load_b(s);
	bt_cuh_section(s, gemm_epi_wg_cuh, "desc_split");
}

/* The copy of tile kt into its stage: A (128 x 32 at (m0, k0)) swizzled K-major,
 * B (32 x 128 at (k0, n0)) as [k][136] or, bt_k, [n][36]; zeros outside. */
static void emit_loader(struct buf *s, const struct gemm_cfg *c)
{
	const struct gemm_shape *sh = c->sh;

	bt_cuh_section(s, gemm_epi_wg_cuh, "loader_head");
	if (c->vec_a)
		bt_cuh_section(s, gemm_epi_wg_cuh, "loader_a");
	else
		bt_cuh_fill(s, gemm_epi_wg_cuh, "loader_a_tile",
			    "R", sh->a_km ? "id & 127" : "id >> 5",
			    "C", sh->a_km ? "id >> 7" : "id & 31",
			    "IDX", sh->a_km ? "gk * M + gr" : "gr * K + gk", NULL);
	if (c->bt_k)
		bt_cuh_section(s, gemm_epi_wg_cuh, "loader_b_kmajor");
	else if (c->vec_b)
		bt_cuh_section(s, gemm_epi_wg_cuh, "loader_b_nmajor");
	else
		bt_cuh_fill(s, gemm_epi_wg_cuh, "loader_b_tile",
			    "R", sh->b_nk ? "id & 31" : "id >> 7",
			    "C", sh->b_nk ? "id >> 5" : "id & 127",
			    "IDX", sh->b_nk ? "gc * K + gk" : "gk * N + gc", NULL);
	buf_adds(s, "    };\n");
}

static void emit_store(struct buf *s, const struct gemm_cfg *c)
{
	bt_cuh_section(s, gemm_epi_wg_cuh, "store_head");
	if (c->sh->N % 2 == 0)
		buf_adds(s, "                *(float2*)p = make_float2(v0, v1);\n");
	else
		buf_adds(s, "                p[0] = v0;\n                p[1] = v1;\n");
	bt_cuh_section(s, gemm_epi_wg_cuh, "store_scalar");
}

/* The K loop into acc[64] (needs STAGES, BF, NT, SA_BYTES, tid, t, ktiles,
 * stage_a, load_tile(kt) and load_b(nb, kt); NUNITS and ssplit unless
 * presplit); a_wo: "" or " + OFFSET", this warpgroup's A rows in a tile;
 * late: the next tile's copies issued after the first k step (tensor cores
 * busy meanwhile), for a costly load (the conv's gather); presplit: each
 * stage holds the A tile's small part right after it (SA_BYTES on), copied
 * in from global memory with the tile, so that no thread splits A in the
 * loop (the conv core, whose channels-last copy of x is split once).
 * Shared with the conv core. */
void gemm_emit_wg_loop(struct buf *s, const char *a_wo, int late, int presplit)
{
	const char *load = "        if (kt + STAGES - 1 < ktiles) load_tile(kt + STAGES - 1);\n"
			   "        kfg_commit();\n";

	bt_cuh_section(s, gemm_epi_wg_cuh, "loop_head");
	if (presplit) {
		/* cp.async writes through the generic proxy; wgmma reads
		 * through the async one */
		bt_cuh_fill(s, gemm_epi_wg_cuh, "loop_split", "EARLY_LOAD", late ? "" : load,
			    "A_WO", a_wo, "LATE_LOAD", late ? load : "", NULL);
	} else {
		bt_cuh_fill(s, gemm_epi_wg_cuh, "loop_presplit", "EARLY_LOAD", late ? "" : load,
			    "A_WO", a_wo, "LATE_LOAD", late ? load : "", NULL);
	}
	bt_cuh_section(s, gemm_epi_wg_cuh, "loop_fadd");
}

void gemm_emit_wgmma(struct buf *s, const struct gemm_cfg *c)
{
	gemm_emit_wg_helpers(s);
	buf_addf(s, "extern \"C\" __global__ void __launch_bounds__(256, 1)\n"
		    "%s(const float* __restrict__ kf_a, const float* __restrict__ kf_b, float* __restrict__ kf_c%s,\n"
		    "   long long kf_M, long long kf_N, long long kf_K)\n{\n"
		    "    extern __shared__ __align__(1024) float kf_smem[];\n",
		 c->name, c->params);
	gemm_emit_prologue(s, c);
	bt_cuh_fill(s, gemm_epi_wg_cuh, "kernel_head", "STAGES", BT_INT(c->stages),
		    "BF", BT_INT(c->bf), "B_STRIDE", c->bt_k ? "BKS = 36" : "BSTR = 136",
		    "STAGE_BYTES", BT_INT(c->bt_k ? 16384 + 18432 : 16384 + 17408),
		    "B_OFF", c->bt_k ? "(64 * wg + 16 * ww + 2 * g) * BKS * 4"
				     : "(64 * wg + 16 * ww + 2 * g) * 4",
		    NULL);
	emit_loader(s, c);
	buf_addf(s, "    auto load_b = [&](float2 (&nb)[4][2], int kt) { kfg_load_b_%s<%s>(nb, stage_a(kt) + SA_BYTES + b_off, t); };\n",
		 c->bt_k ? "nk" : "kn", c->bt_k ? "BKS" : "BSTR");
	gemm_emit_wg_loop(s, "", 0, 0);
	emit_store(s, c);
	buf_adds(s, "}\n");
}
