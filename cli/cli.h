/* The kforge CLI: a command table (cli/kforge.c) and one file per command
 * (cli/cmd_NAME.c). Only the CLI prints to stdout and chooses exit codes;
 * the libraries below return 0/-1 with an error buffer. */
#ifndef KF_CLI_H
#define KF_CLI_H

#include <getopt.h>
#include <stdio.h>
#include "core/buf.h"

/* Exit codes (documented in README.md and `kforge --help`). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,     /* the operation failed (I/O, store, network...) */
	EXIT_USAGE = 2,    /* bad command line, unknown command, not implemented */
	EXIT_NOGPU = 3,    /* needs a GPU or CUDA driver that is not there */
	EXIT_CHECK = 4,    /* ran, and a check failed (incorrect kernel, bad dataset) */
};

struct cli_ctx {
	const char *argv0;
	const char *db_path;    /* --db, KFORGE_DB, or ./kforge.db */
	const char *root;       /* where problems/ and templates/ live */
	int verbose;
};

struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv, struct cli_ctx *ctx);
	const char *summary;
	const char *usage;      /* full help text for `kforge CMD --help` */
	int hidden;
};

extern const struct cli_cmd cli_commands[];

/* Prints "kforge CMD: unknown option" plus a suggestion and returns 2. */
int cli_bad_option(const char *cmd, const char *opt, const struct option *longopts);
int cli_usage(const char *cmd);           /* short usage on stderr, returns 2 */
int cli_help(const char *cmd);            /* full help on stdout, returns 0 */
int cli_not_implemented(const char *cmd); /* one line, returns 2 */
/* Prints "kforge: <msg>" on stderr and returns code. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Standard option loop: handles --help (and -h); returns the getopt
 * character, -1 at the end, or -2 after printing a bad-option error. */
int cli_getopt(int argc, char **argv, const char *cmd, const char *shortopts,
	       const struct option *longopts);

/* Damerau-free Levenshtein distance, for "did you mean". */
int cli_edit_distance(const char *a, const char *b);

/* Path under the kforge data root (problems/, templates/). */
void cli_data_path(struct cli_ctx *ctx, const char *rel, struct buf *out);

#endif
