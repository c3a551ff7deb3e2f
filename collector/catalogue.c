#include "collector/catalogue.h"

#include <string.h>

#include "collector/proposer.h"

#define M CAT_MEMORY
#define A CAT_ASYNC
#define P CAT_PRECISION
#define C CAT_COMPUTE
#define PAR CAT_PARALLELISM
#define CF CAT_CONTROL

const struct catalogue_idea catalogue[] = {
#include "collector/catalogue_ew.inc"
#include "collector/catalogue_softmax.inc"
#include "collector/catalogue_reduce.inc"
#include "collector/catalogue_norm.inc"
#include "collector/catalogue_matmul.inc"
#include "collector/catalogue_conv.inc"
#include "collector/catalogue_convt.inc"
#include "collector/catalogue_pool.inc"
#include "collector/catalogue_scan.inc"
#include "collector/catalogue_loss.inc"
#include "collector/catalogue_attention.inc"
#include "collector/catalogue_graph.inc"
};

const int catalogue_count = (int)(sizeof(catalogue) / sizeof(catalogue[0]));

static const char *const family_names[FAM_COUNT] = {
	"elementwise", "rowsoftmax", "reduce", "norm", "loss", "scan", "matmul", "conv", "pool",
	"attention", "graph",
};

const char *family_name(int i)
{
	return i >= 0 && i < FAM_COUNT ? family_names[i] : "?";
}

unsigned family_of_problem(const json_t *spec)
{
	const char *fam = json_string_value(json_object_get(spec, "family"));
	const char *op = json_string_value(json_object_get(json_object_get(spec, "attrs"), "op"));

	if (!fam)
		fam = "";
	if (!op)
		op = "";
	if (!strcmp(fam, "graph"))
		return FAM_GRAPH;
	/* the matrix-scalar product is "elementwise" (op "scale") */
	if (strstr(fam, "elementwise") || strstr(fam, "activation"))
		return FAM_ELEMENTWISE;
	/* softmax and log-softmax are "norm" ops that work on rows */
	if (strstr(fam, "softmax") || !strcmp(op, "softmax") || !strcmp(op, "log_softmax"))
		return FAM_ROWSOFTMAX;
	if (strstr(fam, "reduc") || strstr(fam, "arg"))
		return FAM_REDUCE;
	if (strstr(fam, "norm"))
		return FAM_NORM;
	if (strstr(fam, "loss"))
		return FAM_LOSS;
	if (strstr(fam, "scan") || strstr(fam, "cum"))
		return FAM_SCAN;
	if (strstr(fam, "matmul") || strstr(fam, "gemm") || strstr(fam, "matvec"))
		return FAM_MATMUL;
	if (strstr(fam, "conv"))
		return FAM_CONV;
	if (strstr(fam, "pool"))
		return FAM_POOL;
	if (strstr(fam, "attention"))
		return FAM_ATTENTION;
	return 0;
}

const struct catalogue_idea *catalogue_find(const char *id)
{
	for (int i = 0; i < catalogue_count; i++)
		if (!strcmp(catalogue[i].id, id))
			return &catalogue[i];
	return NULL;
}

json_t *catalogue_json(void)
{
	json_t *a = json_array();

	for (int i = 0; i < catalogue_count; i++) {
		const struct catalogue_idea *c = &catalogue[i];
		json_t *cats = json_array(), *fams = json_array();
		json_t *params = c->params ? json_loads(c->params, 0, NULL) : NULL;
		for (int b = 0; b < CAT_COUNT; b++)
			if (c->categories & (1u << b))
				json_array_append_new(cats, json_string(idea_category_name(b)));
		for (int b = 0; b < FAM_COUNT; b++)
			if (c->families & (1u << b))
				json_array_append_new(fams, json_string(family_name(b)));
		json_array_append_new(a, json_pack("{s:s,s:s,s:o,s:o,s:s?,s:o*,s:b,s:s?}", "id", c->id,
			"text", c->text, "categories", cats, "families", fams, "template",
			c->template_id, "params", params, "realized", c->template_id != NULL,
			"requires", c->requires));
	}
	return a;
}
