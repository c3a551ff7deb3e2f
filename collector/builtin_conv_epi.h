/* The convolution emitter behind conv_epi_emit (builtin_conv_epi.c) and the
 * level-1 template conv_tce (builtin_conv_epi_tmpl.c); internal. */
#ifndef KF_BUILTIN_CONV_EPI_H
#define KF_BUILTIN_CONV_EPI_H

#include <jansson.h>
#include "core/buf.h"
#include "collector/builtin_epi.h"

/* A convolution whose sizes are launch-block expressions (literals for
 * conv_epi_emit, size names for conv_tce, so the harness may shrink them);
 * val[] holds their values for the checks and the tile choice. Spatial axes
 * right-aligned into D, H, W (a missing axis: extent 1, kernel 1, stride 1,
 * no padding, dilation 1). */
enum { CE_N, CE_CI, CE_CO, CE_ID, CE_IH, CE_IW, CE_OD, CE_OH, CE_OW, CE_NSZ };
struct cepi_geo {
	int transposed, groups;
	int k[3], st[3], pad[3], dil[3];
	const char *sz[CE_NSZ];
	long long val[CE_NSZ];
};

/* Tile parameters from tparams (BM, BN, BK, WM, WN, CB; missing ones get
 * defaults for the shape), checked. 0, 1 (the shape is not supported) or
 * -1 (bad parameters, err filled). */
int cepi_supported(const struct cepi_geo *g, struct buf *why);
/* Appends the repack and GEMM kernels to src and their launches (and the
 * repacked weights' scratch) to launch. Same returns as conv_epi_emit. */
int cepi_emit(struct buf *src, struct buf *launch, const char *name, const struct cepi_geo *g,
	      const char *x, const char *w, const char *y, const struct epi *e,
	      const json_t *tparams, struct buf *err);

#endif
