/* Templates for max/avg pooling 1D/2D/3D (41-46). The geometry (attrs
 * kernel/stride/padding/dilation, count_include_pad, spatial dims) is baked
 * into #defines, spatial axes padded to three like reference.cu.
 * "pool": one thread per output (opt outputs per thread, block apart so
 *   neighbouring threads stay on neighbouring outputs). Params: block, opt.
 * "pool_tile": one block per segment of tw outputs of an output row
 *   (n, c, od, oh): the block first reduces the window's input rows column
 *   by column into shared memory (coalesced, float4), then each output
 *   reduces its kw columns from there. Params: block, vec, tw (0: the whole
 *   row, or as much as fits shared memory). */
#include "kernels/builtin_tmpl.h"

#include <string.h>

#include "kernels/builtin_util.h"
#include "gen/pool_cuh.h"

struct pgeo {
	long long in[3], out[3], nc;
	int k[3], s[3], p[3], d[3];
	int max, cip, nsp;
};

static int attr_at(const json_t *spec, const char *key, int i, int dflt)
{
	const json_t *a = json_object_get(json_object_get(spec, "attrs"), key);
	const json_t *v = json_array_get(a, (size_t)i);

	return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

/* Fills g from the spec; -1 when it is not a pooling problem we can bake. */
static int pool_geo(const json_t *spec, struct pgeo *g)
{
	const json_t *attrs = json_object_get(spec, "attrs");
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0);
	const char *op = json_string_value(json_object_get(attrs, "op"));
	int nd, i;

	if (!attrs || !op || !in || !out || bt_input(spec, 1) || bt_output(spec, 1))
		return -1;
	nd = bt_ndim(in);
	if (nd < 3 || nd > 5 || bt_ndim(out) != nd)
		return -1;
	if (strcmp(op, "max") && strcmp(op, "avg"))
		return -1;
	g->max = !strcmp(op, "max");
	g->cip = !json_is_false(json_object_get(attrs, "count_include_pad"));
	g->nsp = nd - 2;
	g->nc = bt_dims_value(spec, in, 0, 2);
	if (g->nc <= 0 || g->nc != bt_dims_value(spec, out, 0, 2))
		return -1;
	for (i = 0; i < 3; i++) {
		int j = i - (3 - g->nsp); /* index into the spatial attrs, <0: padded axis */

		g->in[i] = j < 0 ? 1 : bt_dims_value(spec, in, 2 + j, 3 + j);
		g->out[i] = j < 0 ? 1 : bt_dims_value(spec, out, 2 + j, 3 + j);
		g->k[i] = j < 0 ? 1 : attr_at(spec, "kernel", j, -1);
		g->s[i] = j < 0 ? 1 : attr_at(spec, "stride", j, -1);
		g->p[i] = j < 0 ? 0 : attr_at(spec, "padding", j, 0);
		g->d[i] = j < 0 ? 1 : attr_at(spec, "dilation", j, 1);
		if (g->in[i] <= 0 || g->out[i] <= 0 || g->k[i] <= 0 || g->s[i] <= 0 || g->p[i] < 0 ||
		    g->d[i] <= 0 || g->in[i] > (1 << 30) || g->out[i] > (1 << 30))
			return -1;
	}
	/* one plane must fit int indexing */
	if (g->in[0] * g->in[1] * g->in[2] >= (1LL << 31) || g->out[0] * g->out[1] * g->out[2] >= (1LL << 31))
		return -1;
	return 0;
}

static void pool_defines(struct buf *s, const struct pgeo *g)
{
	static const char ax[3] = { 'D', 'H', 'W' };
	int i;

	for (i = 0; i < 3; i++)
		buf_addf(s, "#define I%c %lld\n#define O%c %lld\n#define K%c %d\n#define S%c %d\n"
			    "#define P%c %d\n#define DIL%c %d\n",
			 ax[i], g->in[i], ax[i], g->out[i], ax[i], g->k[i], ax[i], g->s[i], ax[i], g->p[i],
			 ax[i], g->d[i]);
	bt_cuh_section(s, pool_cuh, "defines");
}

/* The average's divisor for the window starting at (d0, h0, w0). */
static void pool_divisor(struct buf *s, const struct pgeo *g)
{
	if (g->cip)
		bt_cuh_section(s, pool_cuh, "divisor_pad");
	else
		buf_adds(s, "    const float div = (float)((min(d0 + KD, ID) - max(d0, 0)) * (min(h0 + KH, IH) - max(h0, 0)) *\n"
			    "                              (min(w0 + KW, IW) - max(w0, 0)));\n");
}

static int pool_supports(const json_t *spec)
{
	struct pgeo g;

	return pool_geo(spec, &g) == 0;
}

static int pool_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 256), opt = bt_param(p, "opt", 1);
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0);
	struct buf tot = BUF_INIT;
	struct pgeo g;

	if (pool_geo(spec, &g))
		return kf_err(err, "pool: not a pooling problem");
	if (block < 32 || block > 1024 || block % 32 || (opt != 1 && opt != 2 && opt != 4))
		return kf_err(err, "pool: bad parameters");
	buf_addf(s, "// template pool: block=%d opt=%d (%s)\n", block, opt, g.max ? "max" : "avg");
	pool_defines(s, &g);
	bt_cuh_section(s, pool_cuh, "one_head");
	if (g.max)
		bt_cuh_section(s, pool_cuh, "one_max");
	else {
		pool_divisor(s, &g);
		bt_cuh_section(s, pool_cuh, "one_avg");
	}
	bt_cuh_fill(s, pool_cuh, "kernel", "BLOCK", BT_INT(block), "SPAN", BT_INT(block * opt),
		    "OPT", BT_INT(opt), NULL);
	bt_dims_expr(&tot, out, 0, bt_ndim(out));
	buf_addf(s, "\n/*@launch\npool_fwd<<<ceil_div(%s, %d), %d>>>(%s, %s, %s);\n@*/\n", tot.s, block * opt,
		 block, bt_name(in), bt_name(out), tot.s);
	buf_release(&tot);
	return 0;
}

/* pool_tile's shared row of column partials: at most SMEM_COLS floats (40 KiB). */
#define SMEM_COLS 10240

/* Input columns a segment of tw outputs needs, rounded to float4 with room
 * for aligning its start down to a multiple of 4. */
static long long seg_cols(const struct pgeo *g, long long tw)
{
	long long span = (tw - 1) * g->s[2] + (long long)(g->k[2] - 1) * g->d[2] + 1 + 3;

	return (span + 3) / 4 * 4;
}

static int pool_tile_supports(const json_t *spec)
{
	struct pgeo g;

	return pool_geo(spec, &g) == 0 && seg_cols(&g, 1) <= SMEM_COLS;
}

/* Outputs per block along W: tw (0: the whole row), capped at the row and
 * at what fits shared memory. */
static long long seg_outputs(const struct pgeo *g, int tw)
{
	long long t = tw > 0 && tw < g->out[2] ? tw : g->out[2];

	while (t > 1 && seg_cols(g, t) > SMEM_COLS)
		t = t > 64 ? t - t / 8 : t - 1;
	return t;
}

static int pool_tile_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err)
{
	int block = bt_param(p, "block", 128), vec = bt_param(p, "vec", 4), tw = bt_param(p, "tw", 0);
	const json_t *in = bt_input(spec, 0), *out = bt_output(spec, 0);
	const char *ident;
	struct buf rows = BUF_INIT;
	long long t;
	struct pgeo g;

	if (pool_geo(spec, &g) || !pool_tile_supports(spec))
		return kf_err(err, "pool_tile: the pooling window does not fit shared memory");
	if (block < 32 || block > 1024 || block % 32 || (vec != 1 && vec != 4) || tw < 0 || tw > 65536)
		return kf_err(err, "pool_tile: bad parameters");
	if (g.in[2] % 4)
		vec = 1;
	t = seg_outputs(&g, tw);
	ident = g.max ? "NEG_INF" : "0.0f";
	buf_addf(s, "// template pool_tile: block=%d vec=%d tw=%d (%s)\n", block, vec, tw, g.max ? "max" : "avg");
	pool_defines(s, &g);
	buf_addf(s, "#define COMB(a, v) (%s)\n", g.max ? "MAXNAN(a, v)" : "(a) + (v)");
	buf_addf(s, "#define TW %lld      // outputs per block along W\n"
		    "#define NSEG %lld    // blocks per output row\n"
		    "#define SEGW %lld    // input columns staged per block\n",
		 t, (g.out[2] + t - 1) / t, seg_cols(&g, t));
	bt_cuh_fill(s, pool_cuh, "tile_head", "BLOCK", BT_INT(block), NULL);
	if (vec == 4)
		bt_cuh_fill(s, pool_cuh, "tile_load_vec4", "BLOCK", BT_INT(block),
			    "IDENT", ident, NULL);
	else
		bt_cuh_fill(s, pool_cuh, "tile_load", "BLOCK", BT_INT(block), "IDENT", ident, NULL);
	bt_cuh_fill(s, pool_cuh, "tile_reduce", "BLOCK", BT_INT(block), "IDENT", ident, NULL);
	if (g.max)
		bt_cuh_section(s, pool_cuh, "tile_store");
	else {
		buf_adds(s, "    {\n");
		pool_divisor(s, &g);
		bt_cuh_section(s, pool_cuh, "tile_store_avg");
	}
	bt_dims_expr(&rows, out, 0, bt_ndim(out) - 1);
	buf_addf(s, "\n/*@launch\npool_rows<<<%s * %lld, %d>>>(%s, %s);\n@*/\n", rows.s,
		 (g.out[2] + t - 1) / t, block, bt_name(in), bt_name(out));
	buf_release(&rows);
	return 0;
}

const struct tmpl_def tmpl_pool_defs[] = {
	{ "pool", pool_supports, pool_render, "{\"block\": 256, \"opt\": 1}" },
	{ "pool_tile", pool_tile_supports, pool_tile_render, "{\"block\": 128, \"vec\": 4, \"tw\": 0}" },
	{ NULL, NULL, NULL, NULL },
};
