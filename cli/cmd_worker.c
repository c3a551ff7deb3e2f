#include "cmds.h"
#include "engine/worker_int.h"

#include <stdlib.h>
#include <string.h>

const char usage_worker[] =
	"kforge __worker --device N\n"
	"Internal: the GPU worker the engine starts (protocol on fds 3 and 4).\n";

int cmd_worker(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, dev = 0;

	(void)ctx;
	while ((c = cli_getopt(argc, argv, "__worker", "h", opts)) != -1) {
		if (c == -2)
			return EXIT_USAGE;
		if (c == 'd')
			dev = atoi(optarg);
	}
	return worker_main(dev, 3, 4) == 0 ? EXIT_OK : EXIT_FAIL;
}
