#include "cmds.h"

const char usage_compile_child[] = "kforge compile_child\n";

int cmd_compile_child(int argc, char **argv, struct cli_ctx *ctx)
{
	(void)argc;
	(void)argv;
	(void)ctx;
	return cli_not_implemented("compile_child");
}
