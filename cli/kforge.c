/* kforge: the command table and global options. Thin by design. */
#include "cli.h"
#include "cmds.h"
#include "core/log.h"
#include "core/version.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio_ext.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
/* Sanitizer builds only. NVRTC leaves a dynamic-TLS entry that
 * LeakSanitizer's tracer reads as a wild range and dies on ("Tracer caught
 * signal 11", GCC 12's libsanitizer with glibc 2.36: the compile child of
 * level-2 065's wgmma kernel, depending on the working directory's path).
 * So no thread-local roots: kforge keeps no heap pointer in TLS, and
 * glibc's pthread_setspecific blocks, which then look leaked, are
 * suppressed (allocations made inside it only). */
const char *__lsan_default_options(void);
const char *__lsan_default_suppressions(void);
const char *__lsan_default_options(void)
{
	return "use_tls=0";
}
const char *__lsan_default_suppressions(void)
{
	return "leak:pthread_setspecific\n";
}
#endif
#include <string.h>
#include <libgen.h>
#include <limits.h>

static int cmd_help(int argc, char **argv, struct cli_ctx *ctx);
static int cmd_version(int argc, char **argv, struct cli_ctx *ctx);

const struct cli_cmd cli_commands[] = {
	{ "problems", cmd_problems, "List, show and check the problem suite.", 0 },
	{ "baselines", cmd_baselines, "Import and list PyTorch baseline timings per GPU.", 0 },
	{ "eval", cmd_eval, "Compile, check and time one candidate kernel.", 0 },
	{ "search", cmd_search, "Run (or resume) a kernel search over problems.", 0 },
	{ "verify", cmd_verify, "Re-verify the best kernels on this GPU (protocol verify-v4).", 0 },
	{ "merge", cmd_merge, "Merge stores made on several machines or GPUs.", 0 },
	{ "pack", cmd_pack, "Pack the store into a versioned, reproducible tarball.", 0 },
	{ "dataset", cmd_dataset, "Verify, fetch and diff dataset tarballs.", 0 },
	{ "site", cmd_site, "Render the static results website.", 0 },
	{ "report", cmd_report, "Print a search report (Markdown).", 0 },
	{ "catalogue", cmd_catalogue, "List the built-in proposer's optimization ideas.", 0 },
	{ "template", cmd_template, "Render a Mustache template with JSON data.", 0 },
	{ "slurm", cmd_slurm, "Run searches and verification as Slurm jobs.", 0 },
	{ "store", cmd_store, "Inspect the store (info, tables, integrity).", 0 },
	{ "gpu-info", cmd_gpu_info, "Show the visible GPUs (exit 3 when none).", 0 },
	{ "help", cmd_help, "Show this help, or a command's (kforge help CMD).", 0 },
	{ "version", cmd_version, "Print the version.", 0 },
	{ "__worker", cmd_worker, "Internal: GPU worker process.", 1 },
	{ "__compile", cmd_compile_child, "Internal: NVRTC compile child.", 1 },
	{ NULL, NULL, NULL, 0 },
};

static const char main_args[] = "[--db PATH] [-v|-q] <command> [options]";

static void print_main_help(FILE *f)
{
	fprintf(f,
		"usage: kforge %s\n"
		"       kforge --help | --version | help <command> | <command> --help\n\n"
		"Searches for fast CUDA kernels on KernelBench problems and turns the\n"
		"search into a research dataset.\n\n"
		"Commands:\n", main_args);
	for (const struct cli_cmd *c = cli_commands; c->name; c++)
		if (!c->hidden)
			fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f,
		"\nGlobal options (before or after the command name):\n"
		"  --db PATH   the store (default: $KFORGE_DB or ./kforge.db)\n"
		"  -v, -q      more or less logging (also KFORGE_LOG=debug|info|warn|error)\n"
		"  --version   print the version (before the command name only)\n\n"
		"Exit codes: 0 ok; 1 failed; 2 usage error (unknown problem too) or not\n"
		"implemented; 3 no GPU or CUDA driver; 4 a check failed (incorrect kernel,\n"
		"bad dataset). Output cut short by its reader (kforge ... | head) is not\n"
		"an error: kforge stops quietly with the command's own code.\n");
}

static const struct cli_cmd *find_cmd(const char *name)
{
	for (const struct cli_cmd *c = cli_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static int unknown_cmd(const char *name)
{
	const char *best = NULL;
	int bestd = 99;

	for (const struct cli_cmd *c = cli_commands; c->name; c++) {
		int d = c->hidden ? 99 : cli_edit_distance(name, c->name);
		if (d < bestd) {
			bestd = d;
			best = c->name;
		}
	}
	fprintf(stderr, "kforge: '%s' is not a kforge command. See 'kforge --help'.\n", name);
	if (best && bestd <= 3)
		fprintf(stderr, "\nDid you mean '%s'?\n", best);
	return EXIT_USAGE;
}

/* kforge help [CMD [SUB...]] is kforge CMD [SUB...] --help. */
static int cmd_help(int argc, char **argv, struct cli_ctx *ctx)
{
	const struct cli_cmd *c;
	char *args[16];
	int n = 0;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_main_help(stdout);
		return EXIT_OK;
	}
	if (!(c = find_cmd(argv[1])) || c->hidden)
		return unknown_cmd(argv[1]);
	if (argc > 14)
		return cli_fail(EXIT_USAGE, "help: too many words");
	for (int i = 1; i < argc; i++)
		args[n++] = argv[i];
	args[n++] = (char *)"--help"; /* the parsers do not write argv */
	args[n] = NULL;
	return c->fn(n, args, ctx);
}

static int cmd_version(int argc, char **argv, struct cli_ctx *ctx)
{
	struct cli_spec spec = { "version", "", "Prints the version (as kforge --version).\n", NULL,
				 NULL, 0, NULL, NULL };
	int n, rc;

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n > 0)
		return cli_usage(&spec);
	printf("kforge %s\n", kforge_version());
	return EXIT_OK;
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

void cli_setup_log(const struct cli_ctx *ctx)
{
	const char *lv = getenv("KFORGE_LOG");
	int l = LOG_INFO;

	if (lv && !strcmp(lv, "debug"))
		l = LOG_DEBUG;
	else if (lv && !strcmp(lv, "warn"))
		l = LOG_WARN;
	else if (lv && !strcmp(lv, "error"))
		l = LOG_ERROR;
	l += ctx->verbose;
	log_setup(l < LOG_ERROR ? LOG_ERROR : l > LOG_DEBUG ? LOG_DEBUG : (enum log_level)l);
}

int cli_stdout_gone(void)
{
	struct pollfd p = { STDOUT_FILENO, 0, 0 };
	struct stat st;

	if (fstat(STDOUT_FILENO, &st) < 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return 0;
	/* POLLERR: a pipe without readers; POLLHUP: a socket shut down. */
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

/* As coreutils' close_stdout: output lost to a full disk is a failure,
 * not exit 0. A command that already failed keeps its code. Output that
 * its reader stopped reading (EPIPE: `kforge problems list | head`) is
 * not: kforge ends quietly with the command's code, as ripgrep does,
 * so `set -o pipefail` scripts do not fail on a `| head`. */
static int close_stdout(int rc)
{
	int prev = ferror(stdout), pending = __fpending(stdout) != 0, fail;
	int gone = prev && cli_stdout_gone(); /* before fclose closes fd 1 */

	errno = 0;
	fail = fclose(stdout) != 0;
	if (gone || (fail && errno == EPIPE))
		return rc;
	if (prev || (fail && (pending || errno != EBADF))) {
		if (fail && errno)
			fprintf(stderr, "kforge: write error on standard output: %s\n", strerror(errno));
		else
			fprintf(stderr, "kforge: write error on standard output\n");
		return rc == EXIT_OK ? EXIT_FAIL : rc;
	}
	return rc;
}

static int run(int argc, char **argv, struct cli_ctx *ctx, int *hidden)
{
	int version = 0, n, rc;
	struct cli_opt opts[] = {
		OPT_FLAG("version", 0, &version, "print the version"),
		OPT_END,
	};
	struct cli_spec spec = { NULL, main_args, NULL, opts, NULL, 1, NULL, print_main_help };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (version) {
		printf("kforge %s\n", kforge_version());
		return EXIT_OK;
	}
	if (n == 0) {
		print_main_help(stderr);
		return EXIT_USAGE;
	}
	ctx->root = find_root(argv[0]);
	{
		const struct cli_cmd *c = find_cmd(argv[1]);
		if (!c)
			return unknown_cmd(argv[1]);
		*hidden = c->hidden;
		return c->fn(n, argv + 1, ctx);
	}
}

int main(int argc, char **argv)
{
	struct cli_ctx ctx = { argv[0], NULL, NULL, 0 };
	int hidden = 0, rc;

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
	rc = run(argc, argv, &ctx, &hidden);
	/* The internal commands' stdout is a protocol channel they write and
	 * check themselves (__compile), or not theirs (__worker: fds 3 and 4);
	 * their exit codes mean something else. */
	return hidden ? rc : close_stdout(rc);
}
