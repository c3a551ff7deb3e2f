/* kforge: the command table and global options. Thin by design. */
#include "cli.h"
#include "cmds.h"
#include "core/log.h"
#include "core/version.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <limits.h>

const struct cli_cmd cli_commands[] = {
	{ "problems", cmd_problems, "List, show and check the problem suite.", usage_problems, 0 },
	{ "baselines", cmd_baselines, "Import and list PyTorch baseline timings per GPU.", usage_baselines, 0 },
	{ "eval", cmd_eval, "Compile, check and time one candidate kernel.", usage_eval, 0 },
	{ "search", cmd_search, "Run (or resume) a kernel search over problems.", usage_search, 0 },
	{ "verify", cmd_verify, "Re-verify the best kernels on this GPU (protocol verify-v3).", usage_verify, 0 },
	{ "merge", cmd_merge, "Merge stores made on several machines or GPUs.", usage_merge, 0 },
	{ "pack", cmd_pack, "Pack the store into a versioned, reproducible tarball.", usage_pack, 0 },
	{ "dataset", cmd_dataset, "Verify, fetch and diff dataset tarballs.", usage_dataset, 0 },
	{ "site", cmd_site, "Render the static results website.", usage_site, 0 },
	{ "report", cmd_report, "Print a search report (Markdown).", usage_report, 0 },
	{ "catalogue", cmd_catalogue, "List the built-in proposer's optimization ideas.", usage_catalogue, 0 },
	{ "template", cmd_template, "Render a Mustache template with JSON data.", usage_template, 0 },
	{ "slurm", cmd_slurm, "Run searches and verification as Slurm jobs.", usage_slurm, 0 },
	{ "store", cmd_store, "Inspect the store (info, tables, integrity).", usage_store, 0 },
	{ "gpu-info", cmd_gpu_info, "Show the visible GPUs (exit 3 when none).", usage_gpu_info, 0 },
	{ "__worker", cmd_worker, "Internal: GPU worker process.", "kforge __worker", 1 },
	{ "__compile", cmd_compile_child, "Internal: NVRTC compile child.", "kforge __compile", 1 },
	{ NULL, NULL, NULL, NULL, 0 },
};

static void print_main_help(FILE *f)
{
	fprintf(f,
		"usage: kforge [--db PATH] [-v|-q] <command> [options]\n"
		"       kforge --help | --version | <command> --help\n\n"
		"Searches for fast CUDA kernels on KernelBench problems and turns the\n"
		"search into a research dataset.\n\n"
		"Commands:\n");
	for (const struct cli_cmd *c = cli_commands; c->name; c++)
		if (!c->hidden)
			fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f,
		"\nGlobal options:\n"
		"  --db PATH   the store (default: $KFORGE_DB or ./kforge.db)\n"
		"  -v, -q      more or less logging (also KFORGE_LOG=debug|info|warn|error)\n"
		"  --version   print the version\n\n"
		"Exit codes: 0 ok; 1 failed; 2 usage error or not implemented;\n"
		"3 no GPU or CUDA driver; 4 a check failed (incorrect kernel, bad dataset).\n");
}

static const char *find_root(const char *argv0)
{
	static char root[PATH_MAX];
	const char *env = getenv("KFORGE_ROOT");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return env;
	/* The binary lives in ROOT, ROOT/build or PREFIX/bin. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *dir = dirname(exe);
		const char *sfx[] = { "/..", "", "/../share/kforge" };
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			char probe[PATH_MAX + 64];
			snprintf(root, sizeof(root), "%s%s", dir, sfx[i]);
			snprintf(probe, sizeof(probe), "%s/problems", root);
			if (access(probe, F_OK) == 0)
				return root;
			snprintf(probe, sizeof(probe), "%s/templates", root);
			if (access(probe, F_OK) == 0)
				return root;
		}
	}
	(void)argv0;
	return ".";
}

int main(int argc, char **argv)
{
	struct cli_ctx ctx = { argv[0], NULL, NULL, 0 };
	const char *lv = getenv("KFORGE_LOG");
	int i = 1;

	/* A peer that closes a pipe (a child, an HTTP server, `| head`) must
	 * give EPIPE to the writer, not kill the whole run. */
	signal(SIGPIPE, SIG_IGN);
	/* Set by the verifier for its sanitized runs: this process (and the GPU
	 * worker it starts, which inherits it) ends with its parent. */
	if (getenv("KFORGE_DIE_WITH_PARENT")) {
		pid_t parent = getppid();
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent || parent == 1)
			return EXIT_FAIL;
	}
	ctx.db_path = getenv("KFORGE_DB");
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			print_main_help(stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--version")) {
			printf("kforge %s\n", kforge_version());
			return EXIT_OK;
		} else if (!strcmp(a, "--db") && i + 1 < argc) {
			ctx.db_path = argv[++i];
		} else if (!strncmp(a, "--db=", 5)) {
			ctx.db_path = a + 5;
		} else if (!strcmp(a, "-v")) {
			ctx.verbose++;
		} else if (!strcmp(a, "-q")) {
			ctx.verbose--;
		} else {
			fprintf(stderr, "kforge: unknown option '%s'\n", a);
			if (!strncmp(a, "--d", 3))
				fprintf(stderr, "Did you mean '--db'?\n");
			fprintf(stderr, "See 'kforge --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (!ctx.db_path || !*ctx.db_path)
		ctx.db_path = "kforge.db";
	ctx.root = find_root(argv[0]);
	{
		enum log_level l = LOG_INFO;
		if (lv && !strcmp(lv, "debug"))
			l = LOG_DEBUG;
		else if (lv && !strcmp(lv, "warn"))
			l = LOG_WARN;
		else if (lv && !strcmp(lv, "error"))
			l = LOG_ERROR;
		l = (enum log_level)((int)l + ctx.verbose);
		if ((int)l < 0)
			l = LOG_ERROR;
		if (l > LOG_DEBUG)
			l = LOG_DEBUG;
		log_setup(l);
	}
	if (i >= argc) {
		print_main_help(stderr);
		return EXIT_USAGE;
	}
	for (const struct cli_cmd *c = cli_commands; c->name; c++) {
		if (strcmp(c->name, argv[i]))
			continue;
		optind = 1;
		return c->fn(argc - i, argv + i, &ctx);
	}
	{
		const char *best = NULL;
		int bestd = 99;
		for (const struct cli_cmd *c = cli_commands; c->name; c++) {
			int d = c->hidden ? 99 : cli_edit_distance(argv[i], c->name);
			if (d < bestd) {
				bestd = d;
				best = c->name;
			}
		}
		fprintf(stderr, "kforge: '%s' is not a kforge command. See 'kforge --help'.\n", argv[i]);
		if (best && bestd <= 3)
			fprintf(stderr, "\nDid you mean '%s'?\n", best);
	}
	return EXIT_USAGE;
}
