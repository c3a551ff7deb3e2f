/* Templates for max/avg pooling 1D/2D/3D (41-46).
 * (No template yet: this family's problems are searched from the
 * reference only.) */
#include "collector/builtin_tmpl.h"

const struct tmpl_def tmpl_pool_defs[] = {
	{ NULL, NULL, NULL, NULL },
};
