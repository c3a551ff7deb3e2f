#include "cmds.h"
#include "engine/compile.h"

#include <string.h>

const char usage_compile_child[] =
	"kforge __compile < REQUEST\n"
	"  Internal: the sandboxed NVRTC compile child (engine/compile.c starts it).\n";

int cmd_compile_child(int argc, char **argv, struct cli_ctx *ctx)
{
	(void)ctx;
	if (argc > 1 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h"))
		return cli_usage("__compile");
	if (argc > 1)
		return cli_help("__compile");
	return compile_child_main(0, 1);
}
