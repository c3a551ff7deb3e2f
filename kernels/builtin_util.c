#include "kernels/builtin_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen/tile_fma_cuh.h"

static const json_t *nth_role(const json_t *spec, const char *key, int i)
{
	return json_array_get(json_object_get(spec, key), (size_t)i);
}

const json_t *bt_input(const json_t *spec, int i)
{
	return nth_role(spec, "inputs", i);
}

const json_t *bt_output(const json_t *spec, int i)
{
	return nth_role(spec, "outputs", i);
}

const char *bt_name(const json_t *t)
{
	const char *s = json_string_value(json_object_get(t, "name"));
	return s ? s : "?";
}

int bt_ndim(const json_t *t)
{
	return (int)json_array_size(json_object_get(t, "shape"));
}

void bt_dims_expr(struct buf *out, const json_t *t, int from, int to)
{
	const json_t *shape = json_object_get(t, "shape");
	int n = 0;

	for (int i = from; i < to; i++) {
		const json_t *d = json_array_get(shape, (size_t)i);
		if (!d)
			continue;
		if (n++)
			buf_adds(out, " * ");
		if (json_is_string(d))
			buf_adds(out, json_string_value(d));
		else
			buf_addf(out, "%lld", (long long)json_integer_value(d));
	}
	if (!n)
		buf_adds(out, "1");
}

long long bt_dims_value(const json_t *spec, const json_t *t, int from, int to)
{
	const json_t *shape = json_object_get(t, "shape"), *sizes = json_object_get(spec, "sizes");
	long long v = 1;

	for (int i = from; i < to; i++) {
		const json_t *d = json_array_get(shape, (size_t)i);
		long long x;
		if (json_is_string(d))
			d = json_object_get(sizes, json_string_value(d));
		if (!json_is_integer(d))
			return -1;
		x = json_integer_value(d);
		if (x <= 0 || v > (1LL << 62) / x)
			return -1;
		v *= x;
	}
	return v;
}

double bt_scalar(const json_t *spec, const char *name, double dflt)
{
	const json_t *v = json_object_get(json_object_get(spec, "scalars"), name);

	if (!json_is_number(v))
		v = json_object_get(json_object_get(spec, "init_args"), name);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

long long bt_int_arg(const json_t *spec, const char *name, long long dflt)
{
	const json_t *v = json_object_get(json_object_get(spec, "init_args"), name);

	if (!json_is_integer(v))
		v = json_object_get(json_object_get(spec, "sizes"), name);
	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

const json_t *bt_attrs(const json_t *spec, const char *family)
{
	const char *f = json_string_value(json_object_get(spec, "family"));

	return f && !strcmp(f, family) ? json_object_get(spec, "attrs") : NULL;
}

const char *bt_op(const json_t *spec, const char *family)
{
	return json_string_value(json_object_get(bt_attrs(spec, family), "op"));
}

const char *bt_id(const json_t *spec)
{
	const char *s = json_string_value(json_object_get(spec, "id"));
	return s ? s : "?";
}

int bt_param(const json_t *params, const char *name, int dflt)
{
	const json_t *v = json_object_get(params, name);

	return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

/* Every kind, at [((batched * 2 + trans_a) * 2 + trans_b) * 3 + tri]. */
#define MM_TRI(b, ta, tb) { ta, tb, b, 0 }, { ta, tb, b, 1 }, { ta, tb, b, 2 }
static const struct bt_mm_kind mm_kinds[24] = {
	MM_TRI(0, 0, 0), MM_TRI(0, 0, 1), MM_TRI(0, 1, 0), MM_TRI(0, 1, 1),
	MM_TRI(1, 0, 0), MM_TRI(1, 0, 1), MM_TRI(1, 1, 0), MM_TRI(1, 1, 1),
};

const struct bt_mm_kind *bt_mm_kind_of(const json_t *spec)
{
	const json_t *a = bt_attrs(spec, "matmul");
	const char *mask = json_string_value(json_object_get(a, "mask"));
	int tri;

	if (!a || json_is_true(json_object_get(a, "diag")))
		return NULL;
	if (!mask || !strcmp(mask, "none"))
		tri = 0;
	else if (!strcmp(mask, "triu"))
		tri = 1;
	else if (!strcmp(mask, "tril"))
		tri = 2;
	else
		return NULL;
	return &mm_kinds[((json_is_true(json_object_get(a, "batched")) * 2 +
			   json_is_true(json_object_get(a, "trans_a"))) * 2 +
			  json_is_true(json_object_get(a, "trans_b"))) * 3 + tri];
}

int bt_mm_vec(const json_t *spec)
{
	const struct bt_mm_kind *k = bt_mm_kind_of(spec);
	const json_t *b = bt_input(spec, 1);

	return k && !k->batched && !k->trans_a && !k->trans_b && !k->tri && bt_ndim(b) == 2 &&
	       bt_dims_value(spec, b, 1, 2) == 1;
}

void bt_mm_dims(const json_t *spec, const struct bt_mm_kind *k, struct buf *batch, struct buf *M,
		struct buf *N, struct buf *K)
{
	const json_t *a = bt_input(spec, 0), *b = bt_input(spec, 1);
	int na = bt_ndim(a), nb = bt_ndim(b), off = k->batched ? 1 : 0;

	if (k->batched)
		bt_dims_expr(batch, a, 0, 1);
	else
		buf_adds(batch, "1");
	if (k->trans_a) {
		bt_dims_expr(K, a, off, off + 1);
		bt_dims_expr(M, a, off + 1, off + 2);
	} else {
		bt_dims_expr(M, a, off, na - 1);
		bt_dims_expr(K, a, na - 1, na);
	}
	if (nb == 1 + off)
		buf_adds(N, "1");
	else if (k->trans_b)
		bt_dims_expr(N, b, off, off + 1);
	else
		bt_dims_expr(N, b, nb - 1, nb);
}

void bt_emit_tile_fma(struct buf *s, const char *a_index)
{
	bt_cuh_fill(s, tile_fma_cuh, "tile_fma", "A_INDEX", a_index, NULL);
}

#define CUH_MARK "//@ "

int bt_cuh_find(const char *cuh, const char *name, const char **p, size_t *n)
{
	size_t mark = strlen(CUH_MARK), len = strlen(name);

	for (const char *l = cuh; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
		if (strncmp(l, CUH_MARK, mark) || strncmp(l + mark, name, len) || l[mark + len] != '\n')
			continue;
		const char *b = l + mark + len + 1, *e = b;
		while (*e && strncmp(e, CUH_MARK, mark)) {
			const char *nl = strchr(e, '\n');
			e = nl ? nl + 1 : e + strlen(e);
		}
		*p = b;
		*n = (size_t)(e - b);
		return 0;
	}
	return -1;
}

#define CUH_MAX_KEYS 16

const char *bt_int(char *b, size_t size, long long v)
{
	snprintf(b, size, "%lld", v);
	return b;
}

static int key_len(const char *p)
{
	int n = 0;

	while ((p[n] >= 'A' && p[n] <= 'Z') || (n && ((p[n] >= '0' && p[n] <= '9') || p[n] == '_')))
		n++;
	return n && p[n] == '@' ? n : 0;
}

int bt_cuh_expand(struct buf *s, const char *cuh, const char *name, const char *const *kv,
		  struct buf *err)
{
	int used[CUH_MAX_KEYS] = { 0 }, nkv = 0;
	const char *p, *e;
	size_t n;

	while (kv && kv[2 * nkv]) {
		if (nkv == CUH_MAX_KEYS || !kv[2 * nkv + 1])
			return kf_err(err, "section %s: too many placeholders or one without value", name);
		nkv++;
	}
	if (bt_cuh_find(cuh, name, &p, &n))
		return kf_err(err, "no section %s", name);
	for (e = p + n; p < e; p++) {
		int k = *p == '@' ? key_len(p + 1) : 0, i;

		if (!k) {
			buf_addc(s, *p);
			continue;
		}
		for (i = 0; i < nkv; i++)
			if (!strncmp(kv[2 * i], p + 1, (size_t)k) && !kv[2 * i][k])
				break;
		if (i == nkv)
			return kf_err(err, "section %s: no value for @%.*s@", name, k, p + 1);
		buf_adds(s, kv[2 * i + 1]);
		used[i] = 1;
		p += k + 1;
	}
	for (int i = 0; i < nkv; i++)
		if (!used[i])
			return kf_err(err, "section %s: no placeholder @%s@", name, kv[2 * i]);
	return 0;
}

static void expand_or_abort(struct buf *s, const char *cuh, const char *name,
			    const char *const *kv)
{
	struct buf err = BUF_INIT;

	if (bt_cuh_expand(s, cuh, name, kv, &err)) {
		fprintf(stderr, "kforge: built-in kernel text: %s\n", err.s);
		abort(); /* invariant: sections and placeholders are fixed text (t0924 checks them) */
	}
}

void bt_cuh_section(struct buf *s, const char *cuh, const char *name)
{
	expand_or_abort(s, cuh, name, NULL);
}

void bt_cuh_fill(struct buf *s, const char *cuh, const char *name, ...)
{
	const char *kv[2 * CUH_MAX_KEYS + 2];
	int n = 0;
	va_list ap;

	va_start(ap, name);
	while (n < 2 * CUH_MAX_KEYS + 1 && (kv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	kv[n] = NULL;
	expand_or_abort(s, cuh, name, kv);
}
