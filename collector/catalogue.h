/* The built-in proposer's catalogue: optimization ideas written as an LLM
 * would write them, each with its categories, the problem families it
 * applies to, and the template (with parameter ranges) that realizes it.
 * Ideas whose template is NULL are listed but never proposed: no template
 * realizes them yet. */
#ifndef KF_CATALOGUE_H
#define KF_CATALOGUE_H

#include <jansson.h>

/* Problem families, as bits (a problem maps to one; an idea to several). */
enum {
	FAM_ELEMENTWISE = 1 << 0, /* activations, scalar multiply, diagonal scaling */
	FAM_ROWSOFTMAX = 1 << 1,  /* softmax, log-softmax over a row */
	FAM_REDUCE = 1 << 2,      /* sum/mean/max/min/argmax/argmin over a dim */
	FAM_NORM = 1 << 3,        /* batch/instance/group/layer/RMS/L1/L2/Frobenius norms */
	FAM_LOSS = 1 << 4,
	FAM_SCAN = 1 << 5,
	FAM_MATMUL = 1 << 6,
	FAM_CONV = 1 << 7,
	FAM_POOL = 1 << 8,
	FAM_ATTENTION = 1 << 9,
	FAM_GRAPH = 1 << 10,      /* operator graphs (level 2) */
};
#define FAM_COUNT 11
const char *family_name(int bit_index);
/* The family bit of a problem (from spec "family" and attrs "op"), 0 if none. */
unsigned family_of_problem(const json_t *spec);

struct catalogue_idea {
	const char *id;          /* "ew-vec4" */
	const char *text;        /* what and why, in prose */
	unsigned categories;     /* CAT_* bits (collector/proposer.h) */
	unsigned families;       /* FAM_* bits */
	const char *template_id; /* NULL: not realized by a template */
	const char *params;      /* JSON object: parameter -> array of values to vary */
	const char *requires;    /* NULL, or the shape it is written for (builtin_requires):
				  * applies only there, and is tried first there */
};

extern const struct catalogue_idea catalogue[];
extern const int catalogue_count;

const struct catalogue_idea *catalogue_find(const char *id);
/* The whole catalogue as a JSON array (for `kforge catalogue --json`). */
json_t *catalogue_json(void);

#endif
