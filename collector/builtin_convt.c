/* Templates for transposed convolutions 1D/2D/3D, grouped, dilated, strided.
 * (No template yet: this family's problems are searched from the
 * reference only.) */
#include "collector/builtin_tmpl.h"

const struct tmpl_def tmpl_convt_defs[] = {
	{ NULL, NULL, NULL, NULL },
};
