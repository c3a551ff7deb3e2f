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
int bt_number(const json_t *spec);
int bt_param(const json_t *params, const char *name, int dflt);

#endif
