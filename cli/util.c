#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cli_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int *prev, *cur, d;

	if (la > 64 || lb > 64)
		return 99;
	prev = calloc(lb + 1, sizeof(int));
	cur = calloc(lb + 1, sizeof(int));
	if (!prev || !cur)
		abort();
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int c = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < c)
				c = prev[j] + 1;
			if (cur[j - 1] + 1 < c)
				c = cur[j - 1] + 1;
			cur[j] = c;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(int));
	}
	d = prev[lb];
	free(prev);
	free(cur);
	return d;
}

int cli_fail(int code, const char *fmt, ...)
{
	va_list ap;
	fputs("kforge: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

int cli_bad_option(const char *cmd, const char *opt, const struct option *longopts)
{
	const char *best = NULL;
	int bestd = 99;
	const char *o = opt;

	while (*o == '-')
		o++;
	for (const struct option *lo = longopts; lo && lo->name; lo++) {
		int d = cli_edit_distance(o, lo->name);
		if (d < bestd) {
			bestd = d;
			best = lo->name;
		}
	}
	fprintf(stderr, "kforge %s: unknown option '%s'\n", cmd, opt);
	if (best && bestd <= 2 + (int)strlen(o) / 4)
		fprintf(stderr, "Did you mean '--%s'?\n", best);
	cli_usage(cmd);
	return EXIT_USAGE;
}

static const struct cli_cmd *find_cmd(const char *name)
{
	for (const struct cli_cmd *c = cli_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int cli_usage(const char *cmd)
{
	const struct cli_cmd *c = find_cmd(cmd);
	if (c && c->usage) {
		const char *nl = strchr(c->usage, '\n');
		fprintf(stderr, "usage: %.*s\n", nl ? (int)(nl - c->usage) : (int)strlen(c->usage), c->usage);
	}
	fprintf(stderr, "See 'kforge %s --help'.\n", cmd);
	return EXIT_USAGE;
}

int cli_help(const char *cmd)
{
	const struct cli_cmd *c = find_cmd(cmd);
	if (!c)
		return EXIT_USAGE;
	printf("usage: %s\n", c->usage ? c->usage : c->name);
	printf("\n%s\n", c->summary);
	return EXIT_OK;
}

int cli_not_implemented(const char *cmd)
{
	fprintf(stderr, "kforge %s: not yet implemented\n", cmd);
	return EXIT_USAGE;
}

int cli_getopt(int argc, char **argv, const char *cmd, const char *shortopts,
	       const struct option *longopts)
{
	char sopts[128];
	int idx = 0, c;

	snprintf(sopts, sizeof(sopts), ":%s", shortopts);
	opterr = 0;
	c = getopt_long(argc, argv, sopts, longopts, &idx);
	if (c == 'h') {
		cli_help(cmd);
		exit(EXIT_OK);
	}
	if (c == ':') {
		fprintf(stderr, "kforge %s: option '%s' needs a value\n", cmd, argv[optind - 1]);
		cli_usage(cmd);
		return -2;
	}
	if (c == '?') {
		char tmp[128];
		if (optopt)
			snprintf(tmp, sizeof(tmp), "-%c", optopt);
		else
			snprintf(tmp, sizeof(tmp), "%.*s", (int)strcspn(argv[optind - 1], "="),
				 argv[optind - 1]);
		cli_bad_option(cmd, tmp, longopts);
		return -2;
	}
	return c;
}

void cli_data_path(struct cli_ctx *ctx, const char *rel, struct buf *out)
{
	buf_reset(out);
	buf_addf(out, "%s/%s", ctx->root, rel);
}
