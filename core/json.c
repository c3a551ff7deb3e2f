#include "json.h"

#include <string.h>

json_t *json_parse_bounded(const char *s, size_t len, size_t max, struct buf *err)
{
	json_error_t je;
	json_t *v;

	if (len > max) {
		kf_err(err, "JSON text of %zu bytes is over the limit of %zu", len, max);
		return NULL;
	}
	v = json_loadb(s, len, JSON_REJECT_DUPLICATES, &je);
	if (!v)
		kf_err(err, "invalid JSON at line %d column %d: %s", je.line, je.column, je.text);
	return v;
}

json_t *json_load_file_bounded(const char *path, size_t max, struct buf *err)
{
	struct buf b = BUF_INIT, e2 = BUF_INIT;
	json_t *v = NULL;

	if (buf_read_file(&b, path, max, err) < 0)
		goto out;
	v = json_parse_bounded(b.s, b.len, max, &e2);
	if (!v)
		kf_err(err, "%s: %s", path, e2.s);
out:
	buf_release(&b);
	buf_release(&e2);
	return v;
}

const char *jget_str(const json_t *o, const char *key, const char *def)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : def;
}

int64_t jget_int(const json_t *o, const char *key, int64_t def)
{
	json_t *v = json_object_get(o, key);
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v)) {
		/* saturate: casting a double outside int64's range is undefined */
		double d = json_real_value(v);
		if (d != d)
			return def;
		if (d >= 9223372036854775807.0)
			return INT64_MAX;
		if (d <= -9223372036854775808.0)
			return INT64_MIN;
		return (int64_t)d;
	}
	return def;
}

double jget_num(const json_t *o, const char *key, double def)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : def;
}

int jget_bool(const json_t *o, const char *key, int def)
{
	json_t *v = json_object_get(o, key);
	return json_is_boolean(v) ? json_is_true(v) : def;
}

int jreq_str(const json_t *o, const char *key, const char **out, const char *ctx, struct buf *err)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return kf_err(err, "%s: missing field \"%s\"", ctx, key);
	if (!json_is_string(v))
		return kf_err(err, "%s: field \"%s\" must be a string", ctx, key);
	*out = json_string_value(v);
	return 0;
}

int jreq_int(const json_t *o, const char *key, int64_t *out, const char *ctx, struct buf *err)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return kf_err(err, "%s: missing field \"%s\"", ctx, key);
	if (!json_is_integer(v))
		return kf_err(err, "%s: field \"%s\" must be an integer", ctx, key);
	*out = json_integer_value(v);
	return 0;
}

int jreq_num(const json_t *o, const char *key, double *out, const char *ctx, struct buf *err)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return kf_err(err, "%s: missing field \"%s\"", ctx, key);
	if (!json_is_number(v))
		return kf_err(err, "%s: field \"%s\" must be a number", ctx, key);
	*out = json_number_value(v);
	return 0;
}

static int dump_cb(const char *p, size_t n, void *data)
{
	buf_add(data, p, n);
	return 0;
}

json_t *json_column(json_t *rows, const char *key)
{
	json_t *out, *r;
	size_t i;

	if (!rows)
		return NULL;
	out = json_array();
	json_array_foreach(rows, i, r)
		json_array_append(out, json_object_get(r, key));
	json_decref(rows);
	return out;
}

void json_add_compact(struct buf *b, const json_t *v)
{
	json_dump_callback(v, dump_cb, b, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

void json_add_pretty(struct buf *b, const json_t *v)
{
	json_dump_callback(v, dump_cb, b, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

void json_add_string(struct buf *b, const char *s, size_t len)
{
	json_t *v = json_stringn_nocheck(s, len);
	json_dump_callback(v, dump_cb, b, JSON_ENCODE_ANY);
	json_decref(v);
}
