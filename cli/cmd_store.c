#include "cmds.h"

const char usage_store[] = "kforge store\n";

int cmd_store(int argc, char **argv, struct cli_ctx *ctx)
{
	(void)argc;
	(void)argv;
	(void)ctx;
	return cli_not_implemented("store");
}
