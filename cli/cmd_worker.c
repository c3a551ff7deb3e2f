#include "cmds.h"
#include "engine/worker_int.h"

int cmd_worker(int argc, char **argv, struct cli_ctx *ctx)
{
	int dev = 0, n, rc;
	struct cli_opt opts[] = {
		OPT_INT("device", 0, &dev, "N", 0, 1023, "the GPU's index"),
		OPT_END,
	};
	struct cli_spec spec = { "__worker", "--device N",
		"Internal: the GPU worker the engine starts (protocol on fds 3 and 4).\n", opts, NULL,
		0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n > 0)
		return cli_usage(&spec);
	return worker_main(dev, 3, 4) == 0 ? EXIT_OK : EXIT_FAIL;
}
