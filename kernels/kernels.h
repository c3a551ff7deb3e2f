/* kernels/: the built-in CUDA generators, owned by the template table
 * (builtin_tmpl.c, struct tmpl_def): a family file per operator class
 * (builtin_<family>.c), emit/ for the tensor-core GEMM and convolution
 * cores with fused epilogues, graph/ for the operator graphs of levels 2
 * and 3, cuda/ for the fixed device text embedded at build time. A
 * template turns a problem spec and a parameter object into a candidate
 * file (docs/formats.md); planning and parameters are C, the fixed CUDA
 * text is .cuh. Includes core/, problem/ and engine/ (the candidate
 * format) only; the built-in proposer (collector/) calls it. */
#ifndef KF_KERNELS_H
#define KF_KERNELS_H

#include <jansson.h>
#include "core/buf.h"

/* supports(): whether the template can realize the problem. */
int builtin_tmpl_supports(const char *template_id, const json_t *spec);
/* Whether the problem has the shape an idea is written for (its catalogue
 * "requires"): 1 yes (or name NULL), 0 no, -1 an unknown name. */
int builtin_requires(const char *name, const json_t *spec);
/* Fills in the template's default for every parameter missing in params. */
json_t *builtin_tmpl_params(const char *template_id, const json_t *params);
/* Renders a full candidate file (docs/formats.md). 0 or -1 with err. */
int builtin_tmpl_render(const char *template_id, const json_t *spec, const json_t *params,
			struct buf *src, struct buf *err);

/* A template's best-known plan for a problem (kernels/plans.c): the catalogue
 * idea (collector/catalogue_*.inc) that names it, the template, its
 * parameters (a JSON object, applied on the template's defaults) and where
 * the plan comes from. Static strings. */
struct builtin_plan {
	const char *idea, *template_id, *params, *evidence;
};
/* The plan for the spec on a GPU of arch ("sm_90"; NULL or "" is taken as
 * sm_90, the H100 every plan was measured on): 1 with *out, 0 none. */
int builtin_best_plan(const json_t *spec, const char *arch, struct builtin_plan *out);

#endif
