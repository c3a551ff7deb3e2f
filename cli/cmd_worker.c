#include "cmds.h"

const char usage_worker[] = "kforge worker\n";

int cmd_worker(int argc, char **argv, struct cli_ctx *ctx)
{
	(void)argc;
	(void)argv;
	(void)ctx;
	return cli_not_implemented("worker");
}
