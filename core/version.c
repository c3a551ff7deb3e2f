#include "core/version.h"
#include "kf_version_gen.h" /* generated into $(BUILD) */

const char *kforge_version(void)
{
	return KFORGE_VERSION;
}
