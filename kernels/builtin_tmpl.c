#include "kernels/kernels.h"
#include "kernels/builtin_tmpl.h"
#include "kernels/builtin_conv.h"
#include "kernels/builtin_util.h"

#include <string.h>

static const struct tmpl_def templates[] = {
	{ "ew", tmpl_ew_supports, tmpl_ew_render,
	  "{\"block\": 256, \"vec\": 1, \"ilp\": 1, \"gridstride\": 0, \"waves\": 2, \"fast\": 0, \"stream\": 0}" },
	{ "rowsoftmax", tmpl_rowsoftmax_supports, tmpl_rowsoftmax_render,
	  "{\"block\": 512, \"vec\": 1, \"online\": 0, \"fast\": 0}" },
	{ "reduce", tmpl_reduce_supports, tmpl_reduce_render, "{\"block\": 256, \"unroll\": 1, \"slab\": 0}" },
	{ "matmul", tmpl_matmul_supports, tmpl_matmul_render,
	  "{\"BM\": 64, \"BN\": 64, \"BK\": 16, \"TM\": 4, \"TN\": 4, \"tri_skip\": 0}" },
	{ NULL, NULL, NULL, NULL },
};

/* One array per family file (kernels/builtin_<family>.c). */
static const struct tmpl_def *const families[] = {
	templates, tmpl_norm_defs, tmpl_pool_defs, tmpl_scan_defs, tmpl_loss_defs,
	tmpl_attention_defs, tmpl_attn_tce_defs, tmpl_conv_defs, tmpl_convt_defs, tmpl_mv_defs, tmpl_tce_defs,
	tmpl_conv_epi_defs, tmpl_graph_defs,
};

static const struct tmpl_def *find(const char *id)
{
	for (size_t f = 0; id && f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct tmpl_def *t = families[f]; t->id; t++)
			if (!strcmp(t->id, id))
				return t;
	return NULL;
}

int builtin_tmpl_supports(const char *id, const json_t *spec)
{
	const struct tmpl_def *t = find(id);

	return t && spec && t->supports(spec);
}

/* A level-3 model fp32 can pass (no ill_conditioned flag) whose graph has
 * a node with op a (or b). */
static int model_has(const json_t *spec, const char *a, const char *b)
{
	const json_t *g = json_object_get(json_object_get(spec, "attrs"), "graph"), *n;
	size_t i;

	if (!spec || json_integer_value(json_object_get(spec, "level")) != 3 ||
	    json_is_string(json_object_get(spec, "ill_conditioned")) || !json_is_array(g))
		return 0;
	json_array_foreach(g, i, n) {
		const char *op = json_string_value(json_object_get(n, "op"));
		if (op && (!strcmp(op, a) || (b && !strcmp(op, b))))
			return 1;
	}
	return 0;
}

int builtin_requires(const char *name, const json_t *spec)
{
	const struct bt_mm_kind *k;

	if (!name)
		return 1;
	if (!strcmp(name, "triangular")) {
		k = spec ? bt_mm_kind_of(spec) : NULL;
		return k && k->tri;
	}
	if (!strcmp(name, "depthwise_separable"))
		return spec && cg_separable(spec);
	if (!strcmp(name, "transposed"))
		return spec && json_is_true(json_object_get(json_object_get(spec, "attrs"), "transposed"));
	/* fp32 cannot meet the tolerance (the spec says why, problems/gen/level3):
	 * the graph template's double path (f64) is written for these. */
	if (!strcmp(name, "ill_conditioned"))
		return spec && json_is_string(json_object_get(spec, "ill_conditioned"));
	/* Level-3 models on tensor cores: their convs on the other core than the
	 * plan's, or their GEMMs (an rnn's input projections too) on the shorter
	 * split where no conv is. */
	if (!strcmp(name, "conv_model"))
		return model_has(spec, "conv", NULL);
	if (!strcmp(name, "gemm_model"))
		return !model_has(spec, "conv", NULL) &&
		       (model_has(spec, "linear", "matmul") || model_has(spec, "rnn", NULL));
	/* The split-K kernel's own test: few output tiles, K long. */
	if (!strcmp(name, "small_output_long_k"))
		return builtin_tmpl_supports("matmul_splitk", spec);
	return -1;
}

json_t *builtin_tmpl_params(const char *id, const json_t *params)
{
	const struct tmpl_def *t = find(id);
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
	const struct tmpl_def *t = find(id);
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
