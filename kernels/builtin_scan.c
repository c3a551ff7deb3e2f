/* Template "scan": cumsum / cumprod / reverse / exclusive / masked prefix
 * scans along the last dim of a 2-D tensor (89-93), one block per row,
 * single pass over memory. The row is walked in tiles of block*items
 * elements; each thread owns a contiguous chunk of items (float4 loads),
 * scans it in registers, a warp shuffle scan combines the chunk totals,
 * the warp totals meet in shared memory, and a double carry crosses tiles.
 * Reverse scans map the row backwards onto the same logical order.
 * Params: block (32..1024, block 32 = one warp per row), items (elements
 * per thread and tile), vec (1|4), dbl (cross-thread scan in double),
 * stream (evict-first stores). */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/scan_cuh.h"

enum { S_SUM, S_PROD, S_REV, S_EXCL, S_MASK };

static int scan_op(const json_t *spec)
{
	const char *op = json_string_value(json_object_get(json_object_get(spec, "attrs"), "op"));

	if (!op)
		return -1;
	if (!strcmp(op, "cumsum"))
		return S_SUM;
	if (!strcmp(op, "cumprod"))
		return S_PROD;
	if (!strcmp(op, "cumsum_reverse"))
		return S_REV;
	if (!strcmp(op, "cumsum_exclusive"))
		return S_EXCL;
	if (!strcmp(op, "masked_cumsum"))
		return S_MASK;
	return -1;
}

static int scan_supports(const json_t *spec)
{
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0), *m = bt_input(spec, 1);
	int op = scan_op(spec);

	if (op < 0 || !in || !out || bt_ndim(in) != 2 || bt_ndim(out) != 2)
		return 0;
	if (bt_int_arg(spec, "dim", 1) != 1 && bt_int_arg(spec, "dim", 1) != -1)
		return 0;
	if (op == S_MASK)
		return m && bt_ndim(m) == 2 && !bt_input(spec, 2);
	return !m;
}

/* Loads logical elements j0 .. j0+ITEMS-1 of the row into v[] (identity past the end). */
static void scan_load(struct buf *s, int op, int vec)
{
	const char *id = op == S_PROD ? "1.0f" : "0.0f";

	if (vec == 4) {
		bt_cuh_fill(s, scan_cuh, "load_vec4",
			    "J", op == S_REV ? "cols - 4 - j" : "j", NULL);
		if (op == S_REV)
			buf_adds(s, "                v[4 * q] = f.w; v[4 * q + 1] = f.z; v[4 * q + 2] = f.y; v[4 * q + 3] = f.x;\n");
		else
			buf_adds(s, "                v[4 * q] = f.x; v[4 * q + 1] = f.y; v[4 * q + 2] = f.z; v[4 * q + 3] = f.w;\n");
		if (op == S_MASK)
			bt_cuh_section(s, scan_cuh, "mask_load");
		buf_addf(s, "            } else {\n"
			    "                v[4 * q] = v[4 * q + 1] = v[4 * q + 2] = v[4 * q + 3] = %s;\n"
			    "            }\n        }\n", id);
		return;
	}
	bt_cuh_fill(s, scan_cuh, "load_scalar", "IDENT", id,
		    "J", op == S_REV ? "cols - 1 - j" : "j", NULL);
	if (op == S_MASK)
		buf_adds(s, "                v[u] = mr[pj] ? __ldg(xr + pj) : 0.0f;\n");
	else
		buf_adds(s, "                v[u] = __ldg(xr + pj);\n");
	buf_adds(s, "            }\n        }\n");
}

/* Stores the outputs: v[u] holds logical element j0+u's result. */
static void scan_store(struct buf *s, int op, int vec, int stream)
{
	if (vec == 4) {
		bt_cuh_fill(s, scan_cuh, "store_vec4", "VALS",
			    op == S_REV ? "v[4 * q + 3], v[4 * q + 2], v[4 * q + 1], v[4 * q]"
					: "v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]",
			    NULL);
		if (stream)
			buf_addf(s, "            __stcs(reinterpret_cast<float4*>(yr + %s), f);\n        }\n",
				 op == S_REV ? "cols - 4 - j" : "j");
		else
			buf_addf(s, "            *reinterpret_cast<float4*>(yr + %s) = f;\n        }\n",
				 op == S_REV ? "cols - 4 - j" : "j");
		return;
	}
	bt_cuh_section(s, scan_cuh, "store");
	if (stream)
		buf_addf(s, "            __stcs(yr + %s, v[u]);\n        }\n", op == S_REV ? "cols - 1 - j" : "j");
	else
		buf_addf(s, "            yr[%s] = v[u];\n        }\n", op == S_REV ? "cols - 1 - j" : "j");
}

static int scan_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 512), items = bt_param(p, "items", 16);
	int vec = bt_param(p, "vec", 4), dbl = bt_param(p, "dbl", 0), stream = bt_param(p, "stream", 0);
	int op = scan_op(spec);
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0), *m = bt_input(spec, 1);
	long long cols = bt_dims_value(spec, in, 1, 2);
	const char *tt = dbl ? "double" : "float";
	struct buf rows = BUF_INIT, c = BUF_INIT;

	if (!scan_supports(spec))
		return kf_err(err, "scan: not a row scan problem");
	if (block < 32 || block > 1024 || block % 32 || items < 1 || items > 32 || (items & (items - 1)) ||
	    (vec != 1 && vec != 4) || (dbl != 0 && dbl != 1) || (stream != 0 && stream != 1))
		return kf_err(err, "scan: bad parameters");
	/* float4 needs whole, 16-byte aligned quads in every row */
	if (vec == 4 && (items % 4 || cols < 0 || cols % 4))
		vec = 1;
	buf_addf(s, "// template scan: block=%d items=%d vec=%d dbl=%d stream=%d\n", block, items, vec, dbl,
		 stream);
	buf_addf(s, "#define ITEMS %d\n#define NWARP %d\n", items, block / 32);
	if (op == S_PROD)
		buf_adds(s, "#define OP(a, b) ((a) * (b))\n#define IDENT 1.0\n");
	else
		buf_adds(s, "#define OP(a, b) ((a) + (b))\n#define IDENT 0.0\n");
	buf_addf(s, "typedef %s acc_t;\n", tt);
	buf_addf(s, "extern \"C\" __global__ void __launch_bounds__(%d)\n"
		    "scan_rows(const float* __restrict__ x, %sfloat* __restrict__ y, long long cols)\n{\n"
		    "    __shared__ acc_t wtot[NWARP];\n"
		    "    const float* xr = x + (long long)blockIdx.x * cols;\n"
		    "    float* yr = y + (long long)blockIdx.x * cols;\n",
		 block, op == S_MASK ? "const unsigned char* __restrict__ mask, " : "");
	if (op == S_MASK)
		buf_adds(s, "    const unsigned char* mr = mask + (long long)blockIdx.x * cols;\n");
	bt_cuh_fill(s, scan_cuh, "scan_head", "BLOCK", BT_INT(block), NULL);
	scan_load(s, op, vec);
	bt_cuh_section(s, scan_cuh, "chunk_scan");
	/* the results replace v[] in place (no second array: registers) */
	if (op == S_EXCL)
		bt_cuh_section(s, scan_cuh, "exclusive");
	else
		buf_adds(s, "#pragma unroll\n"
			    "        for (int u = 0; u < ITEMS; u++) v[u] = (float)OP(off, (acc_t)v[u]);\n");
	scan_store(s, op, vec, stream);
	buf_adds(s, "    }\n}\n");
	bt_dims_expr(&rows, in, 0, 1);
	bt_dims_expr(&c, in, 1, 2);
	if (op == S_MASK)
		buf_addf(s, "\n/*@launch\nscan_rows<<<%s, %d>>>(%s, %s, %s, %s);\n@*/\n", rows.s, block,
			 bt_name(in), bt_name(m), bt_name(out), c.s);
	else
		buf_addf(s, "\n/*@launch\nscan_rows<<<%s, %d>>>(%s, %s, %s);\n@*/\n", rows.s, block,
			 bt_name(in), bt_name(out), c.s);
	buf_release(&rows);
	buf_release(&c);
	return 0;
}

const struct tmpl_def tmpl_scan_defs[] = {
	{ "scan", scan_supports, scan_render,
	  "{\"block\": 512, \"items\": 16, \"vec\": 4, \"dbl\": 0, \"stream\": 0}" },
	{ NULL, NULL, NULL, NULL },
};
