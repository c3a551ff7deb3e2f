/* The built-in offline proposer: ideas from the catalogue, kernels from
 * parameterized templates (kernels/kernels.h). Deterministic given
 * the request's seed; records say what was chosen and why (no tokens). */
#ifndef KF_BUILTIN_H
#define KF_BUILTIN_H

#include "collector/proposer.h"
#include "kernels/kernels.h"

int builtin_proposer_open(struct proposer *p, struct buf *err);

#endif
