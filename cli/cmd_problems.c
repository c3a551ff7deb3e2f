#include "cmds.h"

const char usage_problems[] =
	"kforge problems list [--level N] [--json] | show ID [--json] | check [ID...]\n";

int cmd_problems(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)ctx;
	while ((c = cli_getopt(argc, argv, "problems", "h", opts)) != -1)
		if (c == -2)
			return EXIT_USAGE;
	return cli_not_implemented("problems");
}
