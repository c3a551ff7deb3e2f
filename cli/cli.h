/* cli/: the only layer that prints and exits; includes every layer.
 *
 * The kforge CLI: a command table (cli/kforge.c) and one file per command
 * (cli/cmd_NAME.c). Only the CLI prints to stdout and chooses exit codes;
 * the libraries below return 0/-1 with an error buffer. */
#ifndef KF_CLI_H
#define KF_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
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
	int verbose;            /* -v minus -q */
};

struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv, struct cli_ctx *ctx);
	const char *summary;
	int hidden;
};

extern const struct cli_cmd cli_commands[];

/* ---- options: one declarative table per command (cli/opt.c) ----
 * The table parses the command line and writes `kforge CMD --help`.
 * Every command also takes the global options (--db PATH, -v, -q) before
 * or after its name, and -h/--help. Long options may be abbreviated to a
 * unique prefix; a value follows as the next argument or after '='; short
 * flags may be bundled (-vv); "--" ends the options. */
enum cli_type {
	CLI_FLAG,     /* int: set to val */
	CLI_COUNT,    /* int: val added each time (repeatable: -v -v) */
	CLI_STR,      /* const char *: the argument itself */
	CLI_INT,      /* int: a decimal integer in [lo, hi] */
	CLI_LLONG,    /* long long: a decimal integer in [lo, hi] */
	CLI_ULLONG,   /* unsigned long long: a decimal integer in [lo, hi] */
	CLI_DOUBLE,   /* double: a number in [lo, hi] */
	CLI_SIZE,     /* int64_t: bytes, optional k/M/G suffix (x1024), in [lo, hi] */
	CLI_CHOICE,   /* const char *: one of choices (the table's own string) */
	CLI_LIST,     /* struct cli_list: each occurrence appended (repeatable) */
	CLI_HELP,     /* -h/--help (added by the parser) */
};

#define CLI_LIST_MAX 64
struct cli_list {
	const char *v[CLI_LIST_MAX];
	int n;
};

struct cli_opt {
	const char *name;          /* long name without "--"; NULL ends a table */
	char key;                  /* short letter, or 0 */
	enum cli_type type;
	void *dest;                /* where the value goes (type above) */
	const char *arg;           /* the value's name in help ("N"); NULL for flags */
	const char *help;
	double lo, hi;             /* numbers: the accepted range, inclusive */
	const char *const *choices; /* CLI_CHOICE: NULL-ended */
	int val;                   /* CLI_FLAG: value stored; CLI_COUNT: added */
};

/* The casts check dest's type at compile time (pointer mismatch warning). */
#define CLI_DEST(T, p) ((void *)(1 ? (p) : (T *)0))
#define OPT_FLAG(n, k, p, help) { n, k, CLI_FLAG, CLI_DEST(int, p), NULL, help, 0, 0, NULL, 1 }
#define OPT_SET(n, k, p, v, help) { n, k, CLI_FLAG, CLI_DEST(int, p), NULL, help, 0, 0, NULL, v }
#define OPT_COUNT(n, k, p, v, help) { n, k, CLI_COUNT, CLI_DEST(int, p), NULL, help, 0, 0, NULL, v }
#define OPT_STR(n, k, p, a, help) \
	{ n, k, CLI_STR, CLI_DEST(const char *, p), a, help, 0, 0, NULL, 0 }
#define OPT_INT(n, k, p, a, lo, hi, help) \
	{ n, k, CLI_INT, CLI_DEST(int, p), a, help, lo, hi, NULL, 0 }
#define OPT_LLONG(n, k, p, a, lo, hi, help) \
	{ n, k, CLI_LLONG, CLI_DEST(long long, p), a, help, lo, hi, NULL, 0 }
#define OPT_ULLONG(n, k, p, a, lo, hi, help) \
	{ n, k, CLI_ULLONG, CLI_DEST(unsigned long long, p), a, help, lo, hi, NULL, 0 }
#define OPT_DOUBLE(n, k, p, a, lo, hi, help) \
	{ n, k, CLI_DOUBLE, CLI_DEST(double, p), a, help, lo, hi, NULL, 0 }
#define OPT_SIZE(n, k, p, a, lo, hi, help) \
	{ n, k, CLI_SIZE, CLI_DEST(int64_t, p), a, help, lo, hi, NULL, 0 }
#define OPT_CHOICE(n, k, p, ch, help) \
	{ n, k, CLI_CHOICE, CLI_DEST(const char *, p), NULL, help, 0, 0, ch, 0 }
#define OPT_LIST(n, k, p, a, help) \
	{ n, k, CLI_LIST, CLI_DEST(struct cli_list, p), a, help, 0, 0, NULL, 0 }
#define OPT_END { NULL, 0, CLI_FLAG, NULL, NULL, NULL, 0, 0, NULL, 0 }

/* Commands with subcommands (kforge dataset verify ...). */
struct cli_sub {
	const char *name;          /* NULL ends a table */
	int (*fn)(int argc, char **argv, struct cli_ctx *ctx);
	const char *args;          /* the synopsis after "kforge CMD NAME" */
	const char *summary;
};

struct cli_spec {
	const char *cmd;           /* "eval", "dataset fetch": in messages and help */
	const char *args;          /* what follows the command in the synopsis; "\n"
				      starts another synopsis line */
	const char *doc;           /* printed after the synopsis (pre-formatted), or NULL */
	const struct cli_opt *opts; /* may be NULL */
	const char *footer;        /* printed after the options, or NULL */
	int in_order;              /* stop at the first argument (it names a command) */
	const struct cli_sub *subs; /* cli_dispatch: the subcommands, for the help */
	void (*help)(FILE *f);     /* replaces the generated help, or NULL */
};

/* Returned by cli_parse when the command goes on. */
#define CLI_GO (-1)

/* Parses argv[1..argc) with spec's options and the global ones. The
 * arguments that are not options end up in argv[1..*nargs], in order
 * (with in_order: the first one and everything after it). Returns CLI_GO,
 * EXIT_OK after printing the help, or EXIT_USAGE after saying what is
 * wrong (with the usage line) on stderr. */
int cli_parse(const struct cli_spec *spec, int argc, char **argv, struct cli_ctx *ctx,
	      int *nargs);
/* The usage line and "See 'kforge CMD --help'." on stderr; returns 2. */
int cli_usage(const struct cli_spec *spec);
/* The generated help (synopsis, doc, every option with its help). */
void cli_print_help(const struct cli_spec *spec, FILE *f);

/* Parses the global options before the subcommand and runs it with
 * argv[0] = its name; `kforge CMD --help` lists subs; returns the exit code. */
int cli_dispatch(const char *cmd, const char *doc, const struct cli_sub *subs, int argc,
		 char **argv, struct cli_ctx *ctx);

/* Sets the log level from KFORGE_LOG and ctx->verbose (cli/kforge.c). */
void cli_setup_log(const struct cli_ctx *ctx);

int cli_not_implemented(const char *cmd); /* one line, returns 2 */
/* Prints "kforge: <msg>" on stderr and returns code. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes s to stderr with its control characters escaped (core/termsafe.h):
 * for reports and lists that quote server, store or file text. */
void cli_eputs(const char *s);

/* Whether stdout is a pipe or socket whose reader has gone (EPIPE, as in
 * `kforge ... | head`): output cut short that way is no error, and the
 * command ends quietly (cli/kforge.c). */
int cli_stdout_gone(void);

/* Damerau-free Levenshtein distance, for "did you mean". */
int cli_edit_distance(const char *a, const char *b);

/* pack's and site's --problems into a new array of ids: each item a
 * problem of the store (named as anywhere: 19, 19_ReLU.py, level1/019_ReLU),
 * else a PROBLEMS form of kforge search (level2, 1-10, all) resolved
 * against ROOT/problems. NULL with err (PROBLEM_UNKNOWN's did-you-mean over
 * the store's problems) on a bad item. */
json_t *cli_problem_ids(struct cli_ctx *ctx, const struct cli_list *pl, struct buf *err);

/* Path under the kforge data root (problems/, templates/). */
void cli_data_path(struct cli_ctx *ctx, const char *rel, struct buf *out);

#endif
