/* Templates for forward convolutions: standard, dilated, strided, depthwise, pointwise, 1D/2D/3D.
 * (No template yet: this family's problems are searched from the
 * reference only.) */
#include "collector/builtin_tmpl.h"

const struct tmpl_def tmpl_conv_defs[] = {
	{ NULL, NULL, NULL, NULL },
};
