/* The convolution emitter behind conv_epi_emit (builtin_conv_epi.c) and the
 * level-1 template conv_tce (builtin_conv_epi_tmpl.c); internal. */
#ifndef KF_BUILTIN_CONV_EPI_H
#define KF_BUILTIN_CONV_EPI_H

#include <jansson.h>
#include "core/buf.h"
#include "kernels/emit/builtin_epi.h"

/* A convolution whose sizes are launch-block expressions (literals for
 * conv_epi_emit, size names for conv_tce, so the harness may shrink them);
 * val[] holds their values for the checks and the tile choice. Spatial axes
 * right-aligned into D, H, W (a missing axis: extent 1, kernel 1, stride 1,
 * no padding, dilation 1). */
enum { CE_N, CE_CI, CE_CO, CE_ID, CE_IH, CE_IW, CE_OD, CE_OH, CE_OW, CE_NSZ };
struct cepi_geo {
	int transposed, groups;
	int po;			/* PO 1: a transposed conv's phases vary fastest in grid.x (the
				 * mma and wgmma cores), so the phases of one output region,
				 * which interleave in memory, are stored close in time */
	int k[3], st[3], pad[3], dil[3];
	const char *sz[CE_NSZ];
	long long val[CE_NSZ];
};

static inline int cepi_taps(const struct cepi_geo *g)
{
	return g->k[0] * g->k[1] * g->k[2];
}

static inline long long cepi_opg(const struct cepi_geo *g)
{
	return g->val[CE_CO] / g->groups;
}

static inline long long cepi_cpg(const struct cepi_geo *g)
{
	return g->val[CE_CI] / g->groups;
}

/* A core's dynamic shared memory in *smem: its pipeline's pipe bytes, or
 * the C tile staged as BN rows of pitch floats where that is more; an
 * error past limit_kb KiB. */
int cepi_smem_fit(long long pipe, int bn, int pitch, int limit_kb, int *smem, struct buf *err);

/* Output positions of one phase along axis a (all of them when forward). */
static inline long long cepi_q(const struct cepi_geo *g, int a)
{
	long long o = g->val[CE_OD + a];

	return g->transposed ? (o + g->st[a] - 1) / g->st[a] : o;
}

static inline int cepi_phases(const struct cepi_geo *g)
{
	return g->transposed ? g->st[0] * g->st[1] * g->st[2] : 1;
}

/* grid.x: the output-row tiles of a phase, times the phases with PO. */
static inline long long cepi_grid_x(const struct cepi_geo *g, long long tiles)
{
	return g->po ? tiles * cepi_phases(g) : tiles;
}

/* Tile parameters from tparams (BM, BN, BK, WM, WN, CB; missing ones get
 * defaults for the shape), checked. 0, 1 (the shape is not supported) or
 * -1 (bad parameters, err filled). */
int cepi_supported(const struct cepi_geo *g, struct buf *why);
/* Appends the repack and GEMM kernels to src and their launches (and the
 * repacked weights' scratch) to launch. Same returns as conv_epi_emit. */
int cepi_emit(struct buf *src, struct buf *launch, const char *name, const struct cepi_geo *g,
	      const char *x, const char *w, const char *y, const struct epi *e,
	      const json_t *tparams, struct buf *err);

/* Shared by the two cores (builtin_conv_epi.c: wmma; builtin_conv_epi_mma.c:
 * mma.sync, the default): the tap table text and the launch lines (the
 * repacked weights' scratch, NAME_wrepack, NAME). */
void cepi_emit_taps(struct buf *s);
void cepi_emit_launch(struct buf *l, const char *name, const struct cepi_geo *g, int bm, int bn,
		      int nt, int smem, const char *x, const char *w, const char *y,
		      const struct epi *e);
/* The GEMM kernel's name, parameters (those cepi_emit_launch passes) and
 * opening brace, shared by the cores. */
void cepi_emit_sig(struct buf *s, const char *name, const struct epi *e);
/* The mma.sync core (tparams "core" "mma"): same returns as cepi_emit; the
 * shape is checked already. */
int cepi_emit_mma(struct buf *src, struct buf *launch, const char *name, const struct cepi_geo *g,
		  const char *x, const char *w, const char *y, const struct epi *e,
		  const json_t *tparams, struct buf *err);

/* The wgmma core (sm_90a; "core" "wgmma", the graph's default): same
 * returns, 1 also where its tiles do not fit the shape. */
int cepi_emit_wg(struct buf *src, struct buf *launch, const char *name, const struct cepi_geo *g,
		 const char *x, const char *w, const char *y, const struct epi *e,
		 const json_t *tparams, struct buf *err);

/* A 1x1 convolution (stride 1, no padding, one group, forward) as a
 * batched GEMM through gemm_epi_emit on core "wgmma" or "mma"
 * (builtin_conv_epi_pw.c; "PW" 0 turns it off): same returns, 1 where the
 * shape is not pointwise. */
int cepi_emit_pw(struct buf *src, struct buf *launch, const char *name, const struct cepi_geo *g,
		 const char *x, const char *w, const char *y, const struct epi *e,
		 const json_t *tparams, const char *core, struct buf *err);

/* Pieces of the mma core (builtin_conv_epi_mma.c) the wgmma core shares:
 * the weights' repack to [G][tap][C_in/G][C_out/G]; the geometry constants
 * (needs BM, BK); the block setup (phase, group, channel tile, tap
 * table, the store's pixel table pix_n/pix_s, which the caller fills); the
 * B part of a tile load (needs vb, tg, c0, sb; b_vec, b_one: the word
 * offset of row r's channels 4q.. or cc); the store of Cs[n][m]. */
void cepi_emit_repack(struct buf *s, const char *name, const struct cepi_geo *g);
void cepi_emit_geo_consts(struct buf *s, const struct cepi_geo *g, int cb);
void cepi_emit_block(struct buf *s, const struct cepi_geo *g);
void cepi_emit_load_b(struct buf *s, const struct cepi_geo *g, const char *b_vec, const char *b_one);
void cepi_emit_store(struct buf *s, const struct epi *e, int pos_fixed);

#endif
