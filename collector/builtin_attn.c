/* Templates for scaled dot-product attention (97).
 * (No template yet: this family's problems are searched from the
 * reference only.) */
#include "collector/builtin_tmpl.h"

const struct tmpl_def tmpl_attention_defs[] = {
	{ NULL, NULL, NULL, NULL },
};
