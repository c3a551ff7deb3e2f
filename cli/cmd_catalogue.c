#include "cmds.h"

const char usage_catalogue[] =
	"kforge catalogue [--json]\n";

int cmd_catalogue(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)ctx;
	while ((c = cli_getopt(argc, argv, "catalogue", "h", opts)) != -1)
		if (c == -2)
			return EXIT_USAGE;
	return cli_not_implemented("catalogue");
}
