#include "cmds.h"

const char usage_pack[] =
	"kforge pack --version X.Y.Z [--only-verified] [--problems LIST] [-o DIR]\n";

int cmd_pack(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)ctx;
	while ((c = cli_getopt(argc, argv, "pack", "h", opts)) != -1)
		if (c == -2)
			return EXIT_USAGE;
	return cli_not_implemented("pack");
}
