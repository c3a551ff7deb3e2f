/* Helpers over jansson. Getters return a default when the key is absent
 * or of another type; the _req variants fail with a message naming the
 * field. JSON from outside is parsed with json_parse_bounded. */
#ifndef KF_JSON_H
#define KF_JSON_H

#include <jansson.h>
#include <stdint.h>
#include "buf.h"

json_t *json_parse_bounded(const char *s, size_t len, size_t max, struct buf *err);
json_t *json_load_file_bounded(const char *path, size_t max, struct buf *err);

const char *jget_str(const json_t *o, const char *key, const char *def);
int64_t jget_int(const json_t *o, const char *key, int64_t def);
double jget_num(const json_t *o, const char *key, double def);
int jget_bool(const json_t *o, const char *key, int def);

int jreq_str(const json_t *o, const char *key, const char **out, const char *ctx, struct buf *err);
int jreq_int(const json_t *o, const char *key, int64_t *out, const char *ctx, struct buf *err);
int jreq_num(const json_t *o, const char *key, double *out, const char *ctx, struct buf *err);

/* The value of key in each object of rows, as a new array; takes rows' reference (query
 * results pass straight through). NULL when rows is NULL. */
json_t *json_column(json_t *rows, const char *key);

/* Serialises compactly with sorted keys (stable bytes) into b (appends). */
void json_add_compact(struct buf *b, const json_t *v);
/* Same, indented by 2 for humans. */
void json_add_pretty(struct buf *b, const json_t *v);
/* Like json_add_compact and json_add_pretty, with every real as the
 * shortest text that reads back to the same double, and always as a real
 * ("2.0", "1e-7"; jansson writes %.17g: 3.8798629999999998): the dataset's
 * files, which readers type by the text (Arrow). */
void json_add_canonical(struct buf *b, const json_t *v);
void json_add_canonical_pretty(struct buf *b, const json_t *v);
/* One real as json_add_canonical writes it; null when not finite. */
void json_add_real(struct buf *b, double v);
/* Appends s as a JSON string literal with quotes. */
void json_add_string(struct buf *b, const char *s, size_t len);

#endif
