#include "json.h"
#include "xalloc.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/* v (> 0) to p significant digits: the digits into d, the exponent of
 * the first returned. */
static int edigits(double v, int p, char d[24])
{
	char t[40];
	int n = 0;

	snprintf(t, sizeof(t), "%.*e", p - 1, v);
	for (const char *c = t; *c && *c != 'e'; c++)
		if (*c >= '0' && *c <= '9')
			d[n++] = *c;
	d[n] = 0;
	return atoi(strchr(t, 'e') + 1);
}

static double digits_value(const char *d, int x)
{
	char t[48];
	snprintf(t, sizeof(t), "0.%se%d", d, x + 1);
	return strtod(t, NULL);
}

/* The next p-digit decimal above (up) or below d * 10^x. */
static void bump(char *d, int *x, int up)
{
	int n = (int)strlen(d), i = n - 1;

	if (up) {
		while (i >= 0 && d[i] == '9')
			d[i--] = '0';
		if (i < 0) {
			d[0] = '1';
			(*x)++;
		} else {
			d[i]++;
		}
		return;
	}
	while (d[i] == '0')
		d[i--] = '9';
	d[i]--;
	if (d[0] == '0') {
		memmove(d, d + 1, (size_t)n);
		d[n - 1] = '9';
		(*x)--;
	}
}

void json_add_real(struct buf *b, double v)
{
	char d[24], t[24];
	int x = 0, n;
	double a = fabs(v);

	if (!isfinite(v)) {
		buf_adds(b, "null");
		return;
	}
	if (a == 0) {
		buf_adds(b, signbit(v) ? "-0.0" : "0.0");
		return;
	}
	/* The fewest significant digits that read back to v (what Python's
	 * repr writes): at each length the nearest decimal, or where v sits
	 * on a tie beside a power of two one of its neighbours (only at 16
	 * digits can a neighbour be near enough; 17 always do). From 15
	 * digits for normal doubles: a shorter one is found there with
	 * trailing zeros. */
	for (int p = a < DBL_MIN ? 1 : 15; p <= 17; p++) {
		x = edigits(a, p, d);
		if (digits_value(d, x) == a)
			break;
		if (p != 16 && a >= DBL_MIN)
			continue;
		snprintf(t, sizeof(t), "%s", d);
		n = x;
		bump(t, &n, 1);
		if (digits_value(t, n) == a) {
			memcpy(d, t, sizeof(t));
			x = n;
			break;
		}
		snprintf(t, sizeof(t), "%s", d);
		n = x;
		bump(t, &n, 0);
		if (digits_value(t, n) == a) {
			memcpy(d, t, sizeof(t));
			x = n;
			break;
		}
	}
	n = (int)strlen(d);
	while (n > 1 && d[n - 1] == '0')
		d[--n] = 0;
	/* Always recognisably a real to readers that type by the text
	 * (Arrow): fixed with a '.' from 1e-4 to 1e16 (2.0, 0.001), else an
	 * exponent without '+' or leading zeros, as jansson writes it. */
	if (v < 0)
		buf_addc(b, '-');
	if (x >= 16 || x < -4) {
		buf_addc(b, d[0]);
		if (n > 1)
			buf_addf(b, ".%s", d + 1);
		buf_addf(b, "e%d", x);
	} else if (x < 0) {
		buf_adds(b, "0.");
		for (int i = -1; i > x; i--)
			buf_addc(b, '0');
		buf_adds(b, d);
	} else if (n > x + 1) {
		buf_addf(b, "%.*s.%s", x + 1, d, d + x + 1);
	} else {
		buf_adds(b, d);
		for (int i = n; i < x + 1; i++)
			buf_addc(b, '0');
		buf_adds(b, ".0");
	}
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void add_short(struct buf *b, const json_t *v, int indent, int depth)
{
	size_t i, n;

	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char **keys;
		const char *k;
		json_t *x;
		if (!(n = json_object_size(v))) {
			buf_adds(b, "{}");
			break;
		}
		keys = xmalloc(n * sizeof(*keys));
		i = 0;
		json_object_foreach((json_t *)v, k, x)
			keys[i++] = k;
		qsort(keys, n, sizeof(*keys), cmp_key);
		buf_addc(b, '{');
		for (i = 0; i < n; i++) {
			if (i)
				buf_addc(b, ',');
			if (indent)
				buf_addf(b, "\n%*s", (depth + 1) * indent, "");
			json_add_string(b, keys[i], strlen(keys[i]));
			buf_adds(b, indent ? ": " : ":");
			add_short(b, json_object_get(v, keys[i]), indent, depth + 1);
		}
		if (indent)
			buf_addf(b, "\n%*s", depth * indent, "");
		buf_addc(b, '}');
		free(keys);
		break;
	}
	case JSON_ARRAY:
		if (!(n = json_array_size(v))) {
			buf_adds(b, "[]");
			break;
		}
		buf_addc(b, '[');
		for (i = 0; i < n; i++) {
			if (i)
				buf_addc(b, ',');
			if (indent)
				buf_addf(b, "\n%*s", (depth + 1) * indent, "");
			add_short(b, json_array_get(v, i), indent, depth + 1);
		}
		if (indent)
			buf_addf(b, "\n%*s", depth * indent, "");
		buf_addc(b, ']');
		break;
	case JSON_REAL:
		json_add_real(b, json_real_value(v));
		break;
	case JSON_STRING:
		json_add_string(b, json_string_value(v), json_string_length(v));
		break;
	default:
		json_dump_callback(v, dump_cb, b, JSON_ENCODE_ANY);
	}
}

void json_add_canonical(struct buf *b, const json_t *v)
{
	add_short(b, v, 0, 0);
}

void json_add_canonical_pretty(struct buf *b, const json_t *v)
{
	add_short(b, v, 2, 0);
}
