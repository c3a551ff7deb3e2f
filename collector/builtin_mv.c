/* Templates for matrix-vector, split-K, diagonal and tensor-core matmul paths (4, 6, 12, ...).
 * (No template yet: this family's problems are searched from the
 * reference only.) */
#include "collector/builtin_tmpl.h"

const struct tmpl_def tmpl_mv_defs[] = {
	{ NULL, NULL, NULL, NULL },
};
