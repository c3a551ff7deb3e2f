/* The built-in templates (internal to collector/builtin*.c). */
#ifndef KF_BUILTIN_TMPL_H
#define KF_BUILTIN_TMPL_H

#include <jansson.h>
#include "core/buf.h"

int tmpl_ew_supports(const json_t *spec);
int tmpl_ew_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);
int tmpl_rowsoftmax_supports(const json_t *spec);
int tmpl_rowsoftmax_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);
int tmpl_reduce_supports(const json_t *spec);
int tmpl_reduce_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);
int tmpl_matmul_supports(const json_t *spec);
int tmpl_matmul_render(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);

#endif
