/* Templates for cumsum/cumprod/reverse/exclusive/masked scans (89-93).
 * (No template yet: this family's problems are searched from the
 * reference only.) */
#include "collector/builtin_tmpl.h"

const struct tmpl_def tmpl_scan_defs[] = {
	{ NULL, NULL, NULL, NULL },
};
