/* The convolution geometry shared by builtin_conv.c and builtin_convtc.c
 * (internal). */
#ifndef KF_BUILTIN_CONV_H
#define KF_BUILTIN_CONV_H

#include <jansson.h>
#include "core/buf.h"

/* The geometry of one convolution stage. Sizes that the harness may shrink
 * are expressions over size names (kernel arguments); the kernel's own
 * shape, strides, padding, dilation and groups are literals. */
struct cg {
	int k[3], st[3], pad[3], dil[3], groups, bias;
	struct buf e[9]; /* N, CI, ID, IH, IW, CO, OD, OH, OW */
};

enum { E_N, E_CI, E_ID, E_IH, E_IW, E_CO, E_OD, E_OH, E_OW };

/* Names of the tensors: x, weight(s), bias (or NULL), out. */
struct cg_names {
	const char *x, *w, *w2, *b, *y;
};

/* A depthwise-separable pair (problem 86). */
int cg_separable(const json_t *spec);
/* The spec's (first) convolution; for problem 86 its depthwise stage.
 * 0 or -1; g is cg_release-able either way. */
int cg_read(const json_t *spec, struct cg *g);
void cg_release(struct cg *g);
/* A forward (not transposed) convolution with a batch below 65536 (grid.z);
 * reads g, which the caller releases. */
int cg_base_ok(const json_t *spec, struct cg *g);
void cg_names_of(const json_t *spec, const struct cg *g, struct cg_names *nm);
/* The kernel head: extern "C" signature (x, w, [bias,] y, then the nine
 * sizes) and the literal KD..DW, G and KT constants. */
void cg_emit_sig(struct buf *s, const char *name, int nt, const struct cg *g);
/* The launch's argument list after the tensors. */
void cg_emit_args(struct buf *s, const struct cg *g);
/* Output pixel ap's window origin (id0, ih0, iw0) and whether it exists (aok). */
void cg_emit_origin(struct buf *s, const char *ind);
/* Gathers A[kk][m] (input channel x tap kb + kk at the origin above) into v,
 * zero outside the input. */
void cg_emit_gather(struct buf *s, const char *ind);

#endif
