#include "cmds.h"

const char usage_dataset[] =
	"kforge dataset verify FILE | fetch URL [--sha256 HEX] [-o DIR] | diff A B\n";

int cmd_dataset(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)ctx;
	while ((c = cli_getopt(argc, argv, "dataset", "h", opts)) != -1)
		if (c == -2)
			return EXIT_USAGE;
	return cli_not_implemented("dataset");
}
