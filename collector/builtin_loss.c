/* Templates for losses (94-96, 98-100).
 * (No template yet: this family's problems are searched from the
 * reference only.) */
#include "collector/builtin_tmpl.h"

const struct tmpl_def tmpl_loss_defs[] = {
	{ NULL, NULL, NULL, NULL },
};
