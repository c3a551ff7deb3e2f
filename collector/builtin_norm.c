/* Templates for norms: batch/instance/group/layer/RMS/L1/L2/Frobenius (33-40).
 * (No template yet: this family's problems are searched from the
 * reference only.) */
#include "collector/builtin_tmpl.h"

const struct tmpl_def tmpl_norm_defs[] = {
	{ NULL, NULL, NULL, NULL },
};
