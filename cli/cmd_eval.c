#include "cmds.h"

const char usage_eval[] =
	"kforge eval PROBLEM FILE [--compile-only] [--arch sm_XX] [--json]\n";

int cmd_eval(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)ctx;
	while ((c = cli_getopt(argc, argv, "eval", "h", opts)) != -1)
		if (c == -2)
			return EXIT_USAGE;
	return cli_not_implemented("eval");
}
