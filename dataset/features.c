/* The Arrow type of each JSONL file, inferred from every row as Arrow's
 * JSON reader infers it, and written into the card as the config's
 * `dataset_info` features: `datasets` reads a file in 10 MiB batches and
 * casts each batch to the first one's types unless the card declares them,
 * so a field that is null in all of the first batch, or an object field the
 * first batch never saw, fails on a big file (docs/dataset.md).
 * A type is "null", "bool", "int64", "float64" or "string", {"list": T} or
 * {"struct": {name: T}}; a conflict (which the shapes prevent) is "!". */
#include "ds_int.h"
#include "core/json.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char *scalar(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	case JSON_INTEGER:
		return "int64";
	case JSON_REAL:
		return "float64";
	case JSON_STRING:
		return "string";
	default:
		return "null";
	}
}

static int is(const json_t *t, const char *name)
{
	return json_is_string(t) && !strcmp(json_string_value(t), name);
}

/* *acc := the type of a column holding *acc's values and v. */
static void unify(json_t **acc, const json_t *v)
{
	json_t *a = *acc;

	if (is(a, "!") || json_is_null(v))
		return;
	if (json_is_array(v)) {
		size_t i;
		json_t *x, *item;
		if (is(a, "null")) {
			json_decref(a);
			a = *acc = json_pack("{s:s}", "list", "null");
		}
		if (!json_is_object(a) || !json_object_get(a, "list")) {
			json_decref(a);
			*acc = json_string("!");
			return;
		}
		item = json_incref(json_object_get(a, "list"));
		json_array_foreach(v, i, x)
			unify(&item, x);
		json_object_set_new(a, "list", item);
		return;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *x, *f;
		if (is(a, "null")) {
			json_decref(a);
			a = *acc = json_pack("{s:{}}", "struct");
		}
		if (!json_is_object(a) || !(f = json_object_get(a, "struct"))) {
			json_decref(a);
			*acc = json_string("!");
			return;
		}
		json_object_foreach((json_t *)v, k, x) {
			json_t *t = json_incref(json_object_get(f, k));
			if (!t)
				t = json_string("null");
			unify(&t, x);
			json_object_set_new(f, k, t);
		}
		return;
	}
	{
		const char *s = scalar(v);
		if (is(a, "null") || (is(a, "int64") && !strcmp(s, "float64"))) {
			json_decref(a);
			*acc = json_string(s);
		} else if (!is(a, s) && !(is(a, "float64") && !strcmp(s, "int64"))) {
			json_decref(a);
			*acc = json_string("!");
		}
	}
}

void ds_type_row(json_t **acc, const json_t *row)
{
	if (!*acc)
		*acc = json_string("null");
	unify(acc, row);
}

static int has_conflict(const json_t *t)
{
	const char *k;
	json_t *x;

	if (is(t, "!"))
		return 1;
	if (json_is_object(t) && json_object_get(t, "list"))
		return has_conflict(json_object_get(t, "list"));
	json_object_foreach(json_object_get(t, "struct"), k, x)
		if (has_conflict(x))
			return 1;
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void yaml_fields(struct buf *b, const json_t *fields, int indent);

/* A feature's mapping without its name, at indent (its first line's
 * indentation is the caller's). */
static void yaml_body(struct buf *b, const json_t *t, int indent)
{
	const json_t *item;

	if (json_is_string(t)) {
		buf_addf(b, is(t, "null") ? "dtype: 'null'\n" : "dtype: %s\n", json_string_value(t));
	} else if ((item = json_object_get(t, "list")) != NULL) {
		if (json_is_string(item)) {
			buf_addf(b, is(item, "null") ? "sequence: 'null'\n" : "sequence: %s\n",
				 json_string_value(item));
		} else if (json_object_get(item, "struct")) {
			buf_adds(b, "list:");
			yaml_fields(b, json_object_get(item, "struct"), indent);
		} else {
			buf_addf(b, "sequence:\n%*s", indent + 2, "");
			yaml_body(b, item, indent + 2);
		}
	} else {
		buf_adds(b, "struct:");
		yaml_fields(b, json_object_get(t, "struct"), indent);
	}
}

/* "- name: ..." per field, by name; "[]" when none. */
static void yaml_fields(struct buf *b, const json_t *fields, int indent)
{
	size_t n = json_object_size(fields), i = 0;
	const char **keys;
	const char *k;
	json_t *x;

	if (!n) {
		buf_adds(b, " []\n");
		return;
	}
	buf_addc(b, '\n');
	keys = xcalloc(n, sizeof(*keys));
	json_object_foreach((json_t *)fields, k, x)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_key);
	for (i = 0; i < n; i++) {
		buf_addf(b, "%*s- name: ", indent, "");
		json_add_string(b, keys[i], strlen(keys[i]));
		buf_addf(b, "\n%*s", indent + 2, "");
		yaml_body(b, json_object_get(fields, keys[i]), indent + 2);
	}
	free(keys);
}

int ds_features_yaml(struct buf *b, const json_t *type, int indent)
{
	if (!json_is_object(type) || !json_object_get(type, "struct") || has_conflict(type))
		return -1;
	buf_addf(b, "%*sfeatures:", indent, "");
	yaml_fields(b, json_object_get(type, "struct"), indent);
	return 0;
}
