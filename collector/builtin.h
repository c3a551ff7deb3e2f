/* The built-in offline proposer: ideas from the catalogue, kernels from
 * parameterized templates (collector/builtin_tmpl*.c). Deterministic given
 * the request's seed; records say what was chosen and why (no tokens). */
#ifndef KF_BUILTIN_H
#define KF_BUILTIN_H

#include "collector/proposer.h"

int builtin_proposer_open(struct proposer *p, struct buf *err);

/* Templates. supports(): whether the template can realize the problem. */
int builtin_tmpl_supports(const char *template_id, const json_t *spec);
/* Whether the problem has the shape an idea is written for (its catalogue
 * "requires"): 1 yes (or name NULL), 0 no, -1 an unknown name. */
int builtin_requires(const char *name, const json_t *spec);
/* Fills in the template's default for every parameter missing in params. */
json_t *builtin_tmpl_params(const char *template_id, const json_t *params);
/* Renders a full candidate file (docs/formats.md). 0 or -1 with err. */
int builtin_tmpl_render(const char *template_id, const json_t *spec, const json_t *params,
			struct buf *src, struct buf *err);

#endif
