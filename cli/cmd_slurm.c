#include "cmds.h"

const char usage_slurm[] =
	"kforge slurm submit [--problems LIST] [--shards N] [--partition P] [--dry-run]\n";

int cmd_slurm(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)ctx;
	while ((c = cli_getopt(argc, argv, "slurm", "h", opts)) != -1)
		if (c == -2)
			return EXIT_USAGE;
	return cli_not_implemented("slurm");
}
