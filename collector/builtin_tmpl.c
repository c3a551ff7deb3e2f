#include "collector/builtin.h"
#include "collector/builtin_tmpl.h"

#include <string.h>

struct tmpl {
	const char *id;
	int (*supports)(const json_t *spec);
	int (*render)(const json_t *spec, const json_t *p, struct buf *s, struct buf *err);
	const char *defaults;
};

static const struct tmpl templates[] = {
	{ "ew", tmpl_ew_supports, tmpl_ew_render,
	  "{\"block\": 256, \"vec\": 1, \"ilp\": 1, \"gridstride\": 0, \"waves\": 2, \"fast\": 0, \"stream\": 0}" },
	{ "rowsoftmax", tmpl_rowsoftmax_supports, tmpl_rowsoftmax_render,
	  "{\"block\": 512, \"vec\": 1, \"online\": 0, \"fast\": 0}" },
	{ "reduce", tmpl_reduce_supports, tmpl_reduce_render, "{\"block\": 256, \"unroll\": 1}" },
	{ "matmul", tmpl_matmul_supports, tmpl_matmul_render,
	  "{\"BM\": 64, \"BN\": 64, \"BK\": 16, \"TM\": 4, \"TN\": 4, \"tri_skip\": 0}" },
};

static const struct tmpl *find(const char *id)
{
	for (size_t i = 0; id && i < sizeof(templates) / sizeof(templates[0]); i++)
		if (!strcmp(templates[i].id, id))
			return &templates[i];
	return NULL;
}

int builtin_tmpl_supports(const char *id, const json_t *spec)
{
	const struct tmpl *t = find(id);

	return t && t->supports(spec);
}

json_t *builtin_tmpl_params(const char *id, const json_t *params)
{
	const struct tmpl *t = find(id);
	json_t *d;
	const char *k;
	json_t *v;

	if (!t)
		return NULL;
	d = json_loads(t->defaults, 0, NULL);
	if (d && params)
		json_object_foreach((json_t *)params, k, v)
			if (json_object_get(d, k))
				json_object_set(d, k, v);
	return d;
}

int builtin_tmpl_render(const char *id, const json_t *spec, const json_t *params,
			struct buf *src, struct buf *err)
{
	const struct tmpl *t = find(id);
	json_t *p;
	int rc;

	if (!t)
		return kf_err(err, "unknown template '%s'", id ? id : "(null)");
	if (!t->supports(spec))
		return kf_err(err, "template '%s' does not apply to this problem", id);
	p = builtin_tmpl_params(id, params);
	rc = t->render(spec, p, src, err);
	json_decref(p);
	return rc;
}
