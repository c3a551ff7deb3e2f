/* gemm_epi_emit's mma.sync core (sm_80+): the GEMM study's mma_{tf32bf16,3xtf32}_128x128_part
 * generalised to any M, N, K (zero-filled edges), both layouts of A and B,
 * batches, K slices and tiles BM x BN on WM x WN warps. Fragments come
 * from shared memory with 16-byte loads (thread t of a quad takes k =
 * 4t..4t+3 and feeds two MMAs; the n index is permuted so that a float4 of
 * a B row holds the thread's column of 4 n-tiles); XOR swizzles keep both
 * loads conflict-free: A chunk c of row r at c ^ 4(r & 1), B chunk c of
 * row r at c ^ 2((r >> 2) & 3). Each 32-wide K tile's products go to a
 * fresh partial accumulator added to the sum with FADD. */
#include "kernels/emit/builtin_gemm_epi_int.h"
#include "kernels/builtin_util.h"
#include "gen/gemm_epi_mma_cuh.h"

void gemm_emit_mma_helpers(struct buf *s)
{
	bt_cuh_section(s, gemm_epi_mma_cuh, "helpers");
}

static void emit_loader(struct buf *s, const struct gemm_cfg *c)
{
	const struct gemm_shape *sh = c->sh;

	bt_cuh_section(s, gemm_epi_mma_cuh, "loader_head");
	if (c->vec_a)
		bt_cuh_section(s, gemm_epi_mma_cuh, "loader_a");
	else
		buf_addf(s, "#pragma unroll 2\n"   /* fully unrolled, the kernel spills */
			    "        for (int e = 0; e < BM * BK / NTHR; e++) {\n"
			    "            const int id = tid + e * NTHR, r = %s, kk = %s;\n"
			    "            const long long gr = m0 + r, gk = k0 + kk;\n"
			    "            const bool in = gr < M && gk < kend;\n"
			    "            kfg_cp4(sa + (r * BK + (((kk >> 2) ^ ((r & 1) << 2)) << 2) + (kk & 3)) * 4, in ? A + %s : A, in);\n"
			    "        }\n",
			 sh->a_km ? "id % BM" : "id >> 5", sh->a_km ? "id / BM" : "id & 31",
			 sh->a_km ? "gk * M + gr" : "gr * K + gk");
	if (c->vec_b)
		bt_cuh_section(s, gemm_epi_mma_cuh, "loader_b");
	else
		bt_cuh_fill(s, gemm_epi_mma_cuh, "loader_b_tile",
			    "R", sh->b_nk ? "id & 31" : "id / BN",
			    "C", sh->b_nk ? "id >> 5" : "id % BN",
			    "IDX", sh->b_nk ? "gc * K + gk" : "gk * N + gc", NULL);
	buf_adds(s, "    };\n");
}

/* One 16-wide k half h of the tile: fragments split and multiplied into part. */
static void emit_products(struct buf *s, int bf)
{
	if (bf)
		bt_cuh_section(s, gemm_epi_mma_cuh, "products_split");
	else
		bt_cuh_section(s, gemm_epi_mma_cuh, "products_frags");
}

static void emit_store(struct buf *s, const struct gemm_cfg *c)
{
	bt_cuh_section(s, gemm_epi_mma_cuh, "store_head");
	if (c->sh->N % 4 == 0)
		bt_cuh_section(s, gemm_epi_mma_cuh, "store_vec");
	bt_cuh_section(s, gemm_epi_mma_cuh, "store_scalar");
}

/* One K tile's MMAs into a fresh partial sum, FADDed into acc[MT][NQ * 4][4].
 * Expects BK = 32, MT, NQ, BN, g, t, sa, sb (the stage's shared byte
 * addresses), a_off[MT] (row wm0 + 16i + g), b_off[NQ]; a_swz: the XOR of
 * the A rows' 16-byte chunks for row g (rows wm0 + 16i + g + 8 alike).
 * Shared with the conv core (builtin_conv_epi_mma.c). */
void gemm_emit_mma_ktile(struct buf *s, int bf, const char *a_swz)
{
	bt_cuh_fill(s, gemm_epi_mma_cuh, "ktile", "A_SWZ", a_swz, NULL);
	emit_products(s, bf);
	bt_cuh_section(s, gemm_epi_mma_cuh, "ktile_fadd");
}

void gemm_emit_mma(struct buf *s, const struct gemm_cfg *c)
{
	gemm_emit_mma_helpers(s);
	buf_addf(s, "extern \"C\" __global__ void __launch_bounds__(%d, 1)\n"
		    "%s(const float* __restrict__ kf_a, const float* __restrict__ kf_b, float* __restrict__ kf_c%s,\n"
		    "   long long kf_M, long long kf_N, long long kf_K)\n{\n"
		    "    extern __shared__ __align__(128) float kf_smem[];\n",
		 c->nthr, c->name, c->params);
	gemm_emit_prologue(s, c);
	buf_addf(s, "    constexpr int BM = %d, BN = %d, BK = 32, WM = %d, WN = %d, STAGES = %d, NTHR = %d;\n"
		    "    constexpr int MT = BM / WM / 16, NQ = BN / WN / 32, SA = BM * BK, SB = BK * BN;\n"
		    "    (void)WM;\n"
		    "    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;\n"
		    "    const int g = lane >> 2, t = lane & 3;\n"
		    "    const int wm0 = (warp / WN) * (BM / WM), wn0 = (warp %% WN) * (BN / WN);\n"
		    "    const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;\n"
		    "    const unsigned sbase = kfg_smem(kf_smem);\n",
		 c->BM, c->BN, c->WM, c->WN, c->stages, c->nthr);
	emit_loader(s, c);
	bt_cuh_section(s, gemm_epi_mma_cuh, "main");
	gemm_emit_mma_ktile(s, c->bf, "(g & 1) << 2");
	buf_adds(s, "    }\n");
	emit_store(s, c);
	buf_adds(s, "}\n");
}
