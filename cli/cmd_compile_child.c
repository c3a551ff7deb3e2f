#include "cmds.h"
#include "engine/compile.h"


int cmd_compile_child(int argc, char **argv, struct cli_ctx *ctx)
{
	int n, rc;
	struct cli_spec spec = { "__compile", "< REQUEST",
		"Internal: the sandboxed NVRTC compile child (engine/compile.c starts it).\n"
		"Reads the request on stdin and writes the reply on stdout.\n", NULL, NULL, 0, NULL,
		NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n > 0)
		return cli_usage(&spec);
	return compile_child_main(0, 1);
}
