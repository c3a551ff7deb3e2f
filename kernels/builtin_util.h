/* Helpers shared by the built-in templates (internal). */
#ifndef KF_BUILTIN_UTIL_H
#define KF_BUILTIN_UTIL_H

#include <jansson.h>
#include "core/buf.h"

/* The i-th input (role input or param, in spec order) or output object. */
const json_t *bt_input(const json_t *spec, int i);
const json_t *bt_output(const json_t *spec, int i);
const char *bt_name(const json_t *tensor);
int bt_ndim(const json_t *tensor);
/* Appends the product of the tensor's dims [from, to) as an expression
 * over size names ("batch_size * dim"), "1" when empty. */
void bt_dims_expr(struct buf *out, const json_t *tensor, int from, int to);
/* The numeric value of dims [from, to) (sizes resolved), or -1. */
long long bt_dims_value(const json_t *spec, const json_t *tensor, int from, int to);
/* A scalar of the spec by name (or the constructor argument), else dflt. */
double bt_scalar(const json_t *spec, const char *name, double dflt);
long long bt_int_arg(const json_t *spec, const char *name, long long dflt);
/* The spec's "attrs" when its "family" is FAMILY, else NULL; its attrs
 * "op" likewise. Templates decide on what the spec names, never on its
 * KernelBench number (tests/t0022-no-number-logic.sh). */
const json_t *bt_attrs(const json_t *spec, const char *family);
const char *bt_op(const json_t *spec, const char *family);
/* The spec's id, for messages. */
const char *bt_id(const json_t *spec);
int bt_param(const json_t *params, const char *name, int dflt);

/* The matrix products the matmul templates realize, as the "matmul"
 * family's attrs describe them ("batched", "trans_a", "trans_b", "mask"
 * none/triu/tril). NULL for another family, for diag(A) @ B ("diag") and
 * for a mask it does not know. */
struct bt_mm_kind {
	int trans_a, trans_b, batched, tri; /* tri: 1 upper, 2 lower */
};
const struct bt_mm_kind *bt_mm_kind_of(const json_t *spec);
/* A plain product whose B is one column (its last dim is 1): matrix-vector. */
int bt_mm_vec(const json_t *spec);
/* The product's batch, M, N and K as expressions over size names ("1"
 * where there is none), from its inputs A and B. */
void bt_mm_dims(const json_t *spec, const struct bt_mm_kind *k, struct buf *batch, struct buf *M,
		struct buf *N, struct buf *K);
/* The register-blocked inner product of the tiled GEMMs: for kk over a BK
 * tile of shared As[kk][...] and Bs[kk][...], acc[TM][TN] += av x bv, with
 * av[i] = As[kk][a_index] (an expression of i). */
void bt_emit_tile_fma(struct buf *s, const char *a_index);

/* The fixed device text of the templates lives in kernels/cuda/NAME.cuh,
 * embedded as NAME_cuh (scripts/cuh2c.sh). A .cuh holds sections: a line
 * "//@ NAME" opens one, which runs to the next such line or the end; text
 * before the first is the file's comment and is never emitted. A section
 * may hold placeholders "@KEY@" (KEY: capitals, digits, '_') for the few
 * parameters C fills in; any other '@' is text.
 * bt_cuh_find points *p, *n at section name's text, or returns -1.
 * bt_cuh_expand appends section name with each placeholder replaced by its
 * value (kv: KEY, value, ..., NULL; kv itself may be NULL); -1 with err if
 * the section is unknown, a placeholder has no value or a value no
 * placeholder. bt_cuh_section and bt_cuh_fill (kv as arguments) abort on
 * those: they name text built into kforge, so it is a build error. */
int bt_cuh_find(const char *cuh, const char *name, const char **p, size_t *n);
int bt_cuh_expand(struct buf *s, const char *cuh, const char *name, const char *const *kv,
		  struct buf *err);
void bt_cuh_section(struct buf *s, const char *cuh, const char *name);
void bt_cuh_fill(struct buf *s, const char *cuh, const char *name, ...)
	__attribute__((sentinel));
/* v in decimal, for a placeholder's value: BT_INT's buffer lives until the
 * end of the enclosing block, so it is good for one bt_cuh_fill call. */
const char *bt_int(char *b, size_t size, long long v);
#define BT_INT(v) bt_int((char[24]){ 0 }, 24, (v))

#endif
