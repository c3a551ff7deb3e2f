#include "collector/catalogue.h"

#include <string.h>

#include "collector/proposer.h"

#define M CAT_MEMORY
#define A CAT_ASYNC
#define P CAT_PRECISION
#define C CAT_COMPUTE
#define PAR CAT_PARALLELISM
#define CF CAT_CONTROL

const struct catalogue_idea catalogue[] = {
/* elementwise */
{ "ew-vec4", "Use 128-bit vectorized loads and stores (float4) so each thread moves 16 bytes per "
  "memory instruction. The operator is purely bandwidth-bound, and wider accesses cut the number "
  "of load/store instructions by 4x and keep more bytes in flight per warp on HBM3.",
  M, FAM_ELEMENTWISE, "ew", "{\"vec\": [4], \"block\": [256, 512]}" },
{ "ew-gridstride", "Launch a fixed grid of a few waves of blocks per SM and let each thread walk "
  "the tensor with a grid-stride loop. This avoids launching millions of short-lived blocks, "
  "amortizes index arithmetic, and keeps every SM busy until the end.",
  PAR | CF, FAM_ELEMENTWISE, "ew", "{\"gridstride\": [1], \"waves\": [1, 2, 4]}" },
{ "ew-ilp", "Give each thread several independent elements per iteration (instruction-level "
  "parallelism), issuing all loads before any math, so the memory latency of one element "
  "overlaps with the others instead of stalling the warp.",
  C | A, FAM_ELEMENTWISE, "ew", "{\"ilp\": [2, 4], \"vec\": [1, 4]}" },
{ "ew-fastmath", "Replace expf/tanhf/erff-heavy code paths with the hardware intrinsics "
  "(__expf, __fdividef) where the fp32 tolerance still holds, shortening the dependent "
  "instruction chain per element.",
  P | C, FAM_ELEMENTWISE, "ew", "{\"fast\": [1], \"vec\": [4]}" },
{ "ew-blocksize", "Tune the block size (128 to 1024 threads) to balance occupancy against "
  "scheduling overhead; for a streaming kernel, full occupancy hides DRAM latency best.",
  PAR, FAM_ELEMENTWISE, "ew", "{\"block\": [128, 256, 512, 1024]}" },
{ "ew-streaming-stores", "Write the output with streaming (evict-first) stores (__stcs) and read "
  "the input through the read-only path (__ldg), since neither is reused: this keeps L2 for "
  "the data that is still in flight.",
  M, FAM_ELEMENTWISE, "ew", "{\"stream\": [1], \"vec\": [4]}" },
{ "ew-unroll", "Unroll the per-thread loop (#pragma unroll) over its vector and ILP elements so "
  "the compiler schedules loads early and removes loop-control instructions.",
  CF, FAM_ELEMENTWISE, "ew", "{\"ilp\": [4], \"vec\": [4], \"gridstride\": [1]}" },
/* row softmax / log-softmax */
{ "sm-online", "Compute the row maximum and the sum of exponentials in a single pass with the "
  "online-softmax recurrence (rescaling the running sum when the max grows), so each row is "
  "read twice instead of three times.",
  C | M, FAM_ROWSOFTMAX, "rowsoftmax", "{\"online\": [1]}" },
{ "sm-warp-shuffle", "Reduce within warps with __shfl_xor_sync and only combine the per-warp "
  "partials in shared memory: fewer barriers and no shared-memory tree for the max and the sum.",
  C | PAR, FAM_ROWSOFTMAX | FAM_REDUCE | FAM_NORM, "rowsoftmax", "{\"block\": [256, 512]}" },
{ "sm-vec4", "Read and write each row with float4 accesses: rows are long and contiguous, so "
  "128-bit transactions cut the instruction count and raise achieved bandwidth.",
  M, FAM_ROWSOFTMAX, "rowsoftmax", "{\"vec\": [4]}" },
{ "sm-bigblock", "Use 1024-thread blocks per row: with rows of hundreds of thousands of elements, "
  "more threads per row keep more loads in flight per SM.",
  PAR, FAM_ROWSOFTMAX, "rowsoftmax", "{\"block\": [1024]}" },
{ "sm-fastexp", "Use __expf for the exponentials: its error is far below the fp32 tolerance for "
  "arguments shifted by the row max (all <= 0), and it is a single MUFU instruction.",
  P | C, FAM_ROWSOFTMAX, "rowsoftmax", "{\"fast\": [1]}" },
{ "sm-multiblock-row", "Split each very long row across several blocks with a second pass that "
  "combines their (max, sum) pairs, for more parallelism when there are few rows.",
  PAR | A, FAM_ROWSOFTMAX, NULL, NULL },
/* reductions over a dimension */
{ "red-coalesced", "Assign one thread per output element and walk the reduced dimension, so "
  "neighbouring threads read neighbouring addresses of the inner dimension: fully coalesced "
  "loads without any shared memory.",
  M, FAM_REDUCE, "reduce", "{\"block\": [128, 256]}" },
{ "red-unroll", "Unroll the loop over the reduced dimension with several independent "
  "accumulators, breaking the serial dependency of one running sum and exposing memory-level "
  "parallelism.",
  CF | C, FAM_REDUCE, "reduce", "{\"unroll\": [4, 8]}" },
{ "red-blocksize", "Tune the block size of the reduction for occupancy: the kernel is "
  "latency-bound on its strided walk, so more resident warps hide more of it.",
  PAR, FAM_REDUCE, "reduce", "{\"block\": [64, 128, 256, 512]}" },
{ "red-splitk", "Split the reduced dimension across blocks and combine partials with a second "
  "small kernel, when the number of outputs is too small to fill the GPU.",
  PAR | A, FAM_REDUCE, NULL, NULL },
/* norms */
{ "norm-welford", "Fuse the statistics into one pass with Welford's algorithm (mean and M2 "
  "together), numerically stable and reading the data once for the statistics.",
  C | M, FAM_NORM, NULL, NULL },
{ "norm-rsqrt", "Use rsqrtf for the normalization factor and multiply, instead of sqrt and a "
  "division per element.",
  P | C, FAM_NORM, NULL, NULL },
{ "norm-vec4", "Vectorize the normalization's loads and stores with float4.",
  M, FAM_NORM, NULL, NULL },
{ "norm-fused-apply", "Apply the normalization and the affine transform in the same kernel as "
  "the statistics when the group fits one block, avoiding a second launch and a second read.",
  M | CF, FAM_NORM, NULL, NULL },
/* matmul */
{ "mm-smem-tiling", "Tile the product in shared memory: each block loads BMxBK and BKxBN tiles of "
  "A and B once and reuses every element BM or BN times, turning a DRAM-bound loop into an "
  "SMEM-bound one.",
  M, FAM_MATMUL, "matmul", "{\"BM\": [64], \"BN\": [64], \"BK\": [16], \"TM\": [4], \"TN\": [4]}" },
{ "mm-register-blocking", "Give each thread a TMxTN register tile of C and an outer-product inner "
  "loop, so each shared-memory load feeds several FMAs: the FMA-to-load ratio rises from 1 to "
  "about TM*TN/(TM+TN).",
  C, FAM_MATMUL, "matmul", "{\"BM\": [128], \"BN\": [128], \"BK\": [8, 16], \"TM\": [8], \"TN\": [8]}" },
{ "mm-bk", "Tune the K tile: a deeper BK halves the barriers per FLOP, a shallower one leaves "
  "room for more resident blocks.",
  M | CF, FAM_MATMUL, "matmul", "{\"BK\": [8, 16, 32]}" },
{ "mm-rect-tiles", "Use rectangular block tiles matched to the matrix shape (tall-skinny and "
  "irregular products waste less work in partial tiles).",
  PAR, FAM_MATMUL, "matmul", "{\"BM\": [128, 64], \"BN\": [64, 128], \"TM\": [8, 4], \"TN\": [4, 8]}" },
{ "mm-tri-skip", "For triangular operands, skip the K tiles that multiply structural zeros and the "
  "output tiles in the zero half: half the FLOPs disappear.",
  CF | C, FAM_MATMUL, "matmul", "{\"tri_skip\": [1]}" },
{ "mm-cpasync", "Double-buffer the shared-memory tiles with cp.async (asynchronous global-to-"
  "shared copies) so the next K tile loads while the current one is multiplied.",
  A | M, FAM_MATMUL, NULL, NULL },
{ "mm-3xtf32", "Use tensor cores with split precision (3xTF32: a = a_hi + a_lo) to keep fp32 "
  "accuracy at tensor-core throughput.",
  P | C, FAM_MATMUL, NULL, NULL },
{ "mm-tf32", "Use plain TF32 tensor-core MMA where the run's tolerance allows it.",
  P, FAM_MATMUL, NULL, NULL },
{ "mm-warp-per-row", "For matrix-vector products, let one warp own each output row and reduce "
  "with shuffles, reading the matrix once with coalesced loads.",
  PAR | M, FAM_MATMUL, NULL, NULL },
/* convolution */
{ "conv-implicit-gemm", "Treat the convolution as an implicit GEMM (output pixels x output "
  "channels by input channels x kernel taps) and tile it like a matmul, without materializing "
  "im2col.",
  C | M, FAM_CONV, NULL, NULL },
{ "conv-smem-halo", "Stage an input tile with its halo in shared memory so each input pixel is "
  "read from DRAM once per block instead of once per kernel tap.",
  M, FAM_CONV, NULL, NULL },
{ "conv-weights-smem", "Keep the filter weights of the block's output channels in shared memory "
  "(or constant memory for small filters).",
  M, FAM_CONV, NULL, NULL },
{ "conv-register-tile", "Compute several output pixels and channels per thread to reuse loaded "
  "inputs and weights from registers.",
  C | PAR, FAM_CONV, NULL, NULL },
{ "conv-depthwise", "Specialize depthwise convolutions: one block per channel plane, no "
  "cross-channel reduction.",
  PAR | CF, FAM_CONV, NULL, NULL },
/* pooling */
{ "pool-coalesced", "One thread per output with the window walk ordered so neighbouring threads "
  "read neighbouring inputs.",
  M, FAM_POOL, NULL, NULL },
{ "pool-smem-tile", "Stage overlapping input windows in shared memory for strided pooling with "
  "overlap.",
  M | A, FAM_POOL, NULL, NULL },
/* scans */
{ "scan-single-pass", "A single-pass scan with decoupled look-back across blocks instead of "
  "flip/cumsum/flip chains.",
  A | PAR, FAM_SCAN, NULL, NULL },
{ "scan-warp", "Warp-level inclusive scans with shuffles, combined per block in shared memory.",
  C | PAR, FAM_SCAN, NULL, NULL },
{ "scan-fused-mask", "Fuse the mask (or reversal, or exclusive shift) into the scan's loads "
  "instead of separate elementwise passes.",
  M | CF, FAM_SCAN, NULL, NULL },
/* losses */
{ "loss-fused", "Compute the per-element loss and its reduction in one kernel with a grid-wide "
  "two-level reduction, instead of materializing the elementwise loss.",
  M | PAR, FAM_LOSS, NULL, NULL },
{ "loss-double-acc", "Accumulate the final mean in double in the second level only, keeping "
  "fp32 math in the hot loop.",
  P, FAM_LOSS, NULL, NULL },
/* attention */
{ "attn-flash", "Fuse QK^T, softmax and PV in one kernel with online softmax over key tiles "
  "(flash attention), never writing the attention matrix.",
  M | A | C, FAM_ATTENTION, NULL, NULL },
{ "attn-kv-smem", "Stage K and V tiles in shared memory, shared by all query rows of the block.",
  M, FAM_ATTENTION, NULL, NULL },
};

const int catalogue_count = (int)(sizeof(catalogue) / sizeof(catalogue[0]));

static const char *const family_names[FAM_COUNT] = {
	"elementwise", "rowsoftmax", "reduce", "norm", "loss", "scan", "matmul", "conv", "pool",
	"attention",
};

const char *family_name(int i)
{
	return i >= 0 && i < FAM_COUNT ? family_names[i] : "?";
}

unsigned family_of_problem(const json_t *spec)
{
	const char *fam = json_string_value(json_object_get(spec, "family"));
	const char *name = json_string_value(json_object_get(spec, "name"));
	json_int_t num = json_integer_value(json_object_get(spec, "number"));

	if (!fam)
		fam = "";
	if (!name)
		name = "";
	/* Matrix-scalar (5) and diagonal scaling (12) are elementwise at heart. */
	if (num == 5 || strstr(fam, "elementwise") || strstr(fam, "activation"))
		return FAM_ELEMENTWISE;
	if (strstr(fam, "softmax") || strstr(name, "Softmax"))
		return FAM_ROWSOFTMAX;
	if (strstr(fam, "reduc") || strstr(fam, "arg"))
		return FAM_REDUCE;
	if (strstr(fam, "norm"))
		return FAM_NORM;
	if (strstr(fam, "loss"))
		return FAM_LOSS;
	if (strstr(fam, "scan") || strstr(fam, "cum"))
		return FAM_SCAN;
	if (strstr(fam, "matmul") || strstr(fam, "gemm") || strstr(fam, "matvec"))
		return FAM_MATMUL;
	if (strstr(fam, "conv"))
		return FAM_CONV;
	if (strstr(fam, "pool"))
		return FAM_POOL;
	if (strstr(fam, "attention"))
		return FAM_ATTENTION;
	return 0;
}

const struct catalogue_idea *catalogue_find(const char *id)
{
	for (int i = 0; i < catalogue_count; i++)
		if (!strcmp(catalogue[i].id, id))
			return &catalogue[i];
	return NULL;
}

json_t *catalogue_json(void)
{
	json_t *a = json_array();

	for (int i = 0; i < catalogue_count; i++) {
		const struct catalogue_idea *c = &catalogue[i];
		json_t *cats = json_array(), *fams = json_array();
		json_t *params = c->params ? json_loads(c->params, 0, NULL) : NULL;
		for (int b = 0; b < CAT_COUNT; b++)
			if (c->categories & (1u << b))
				json_array_append_new(cats, json_string(idea_category_name(b)));
		for (int b = 0; b < FAM_COUNT; b++)
			if (c->families & (1u << b))
				json_array_append_new(fams, json_string(family_name(b)));
		json_array_append_new(a, json_pack("{s:s,s:s,s:o,s:o,s:s?,s:o*,s:b}", "id", c->id,
			"text", c->text, "categories", cats, "families", fams, "template",
			c->template_id, "params", params, "realized", c->template_id != NULL));
	}
	return a;
}
