/* Template "matmul": shared-memory tiled SGEMM with register blocking,
 * for the level-1 matmul family (plain, batched, 3-D/4-D by a matrix,
 * transposed operands, symmetric, triangular with the zero half skipped).
 * Parameters: BM, BN, BK, TM, TN, tri_skip. fp32 FMA throughout. */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/matmul_cuh.h"

int tmpl_matmul_supports(const json_t *spec)
{
	const struct bt_mm_kind *k = bt_mm_kind_of(spec);
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1);

	/* Not matrix-vector (level 1's 4: 1M-term dot products; one fp32 sum
	 * misses 1e-4; "gemv" does it). */
	return k && !bt_mm_vec(spec) && a && b && !bt_input(spec, 2) && bt_ndim(a) >= 2 && bt_ndim(b) >= 2;
}

int tmpl_matmul_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	const struct bt_mm_kind *k = bt_mm_kind_of(spec);
	int BM = bt_param(p, "BM", 64), BN = bt_param(p, "BN", 64), BK = bt_param(p, "BK", 16);
	int TM = bt_param(p, "TM", 4), TN = bt_param(p, "TN", 4), skip = bt_param(p, "tri_skip", 0);
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1), *c = bt_output(spec, 0);
	int nt;
	struct buf M = BUF_INIT, N = BUF_INIT, K = BUF_INIT, batch = BUF_INIT;

	if (!k)
		return kf_err(err, "matmul: %s is not a supported product", bt_id(spec));
	if (BM % TM || BN % TN || BM < 16 || BN < 16 || BM > 256 || BN > 256 || BK < 4 || BK > 64)
		return kf_err(err, "matmul: bad tile parameters");
	nt = (BM / TM) * (BN / TN);
	if (nt < 32 || nt > 1024)
		return kf_err(err, "matmul: %d threads per block", nt);
	bt_mm_dims(spec, k, &batch, &M, &N, &K);
	buf_addf(s, "// template matmul: BM=%d BN=%d BK=%d TM=%d TN=%d tri_skip=%d\n"
		    "#define BM %d\n#define BN %d\n#define BK %d\n#define TM %d\n#define TN %d\n"
		    "#define NT %d\n", BM, BN, BK, TM, TN, skip, BM, BN, BK, TM, TN, nt);
	bt_cuh_section(s, matmul_cuh, "head");
	if (k->tri && skip) {
		/* Structural zeros: upper A[i][k] = 0 for k < i, B[k][j] = 0 for k > j. */
		if (k->tri == 1)
			buf_adds(s, "    kbeg = row0; kend = min(K, col0 + BN);\n");
		else
			buf_adds(s, "    kbeg = col0; kend = min(K, row0 + BM);\n");
		buf_adds(s, "    kbeg = (kbeg / BK) * BK;\n");
	}
	bt_cuh_fill(s, matmul_cuh, "tile_loads", "A_R", k->trans_a ? "i % BM" : "i / BK",
		    "A_KK", k->trans_a ? "i / BM" : "i % BK",
		    "A_IDX", k->trans_a ? "gk * M + gr" : "gr * K + gk",
		    "B_CC", k->trans_b ? "i / BK" : "i % BN",
		    "B_KK", k->trans_b ? "i % BK" : "i / BN",
		    "B_IDX", k->trans_b ? "gc * K + gk" : "gk * N + gc", NULL);
	bt_emit_tile_fma(s, "tr * TM + i");
	bt_cuh_section(s, matmul_cuh, "store");
	if (k->tri == 1)
		buf_adds(s, "            C[r * N + cc] = r <= cc ? acc[i][j] : 0.0f;\n");
	else if (k->tri == 2)
		buf_adds(s, "            C[r * N + cc] = r >= cc ? acc[i][j] : 0.0f;\n");
	else
		buf_adds(s, "            C[r * N + cc] = acc[i][j];\n");
	buf_addf(s, "        }\n    }\n}\n\n/*@launch\n"
		    "sgemm<<<dim3(ceil_div(%s, %d), ceil_div(%s, %d), %s), %d>>>(%s, %s, %s, %s, %s, %s);\n@*/\n",
		 N.s, BN, M.s, BM, batch.s, nt, bt_name(a), bt_name(b), bt_name(c), M.s, N.s, K.s);
	buf_release(&M);
	buf_release(&N);
	buf_release(&K);
	buf_release(&batch);
	return 0;
}
