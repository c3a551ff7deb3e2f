/* Declarative options: one table per command parses its command line and
 * writes its --help (cli.h). A small scanner of our own rather than argp
 * or getopt_long: the messages name the option and say what is wrong
 * with it (unknown, with a suggestion; needs a value; takes no value; bad
 * number), which argp does not let a caller do, and there is no global
 * parser state to reset between a command and its subcommand. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define HELP_WIDTH 79
#define HELP_COL_MAX 28

/* The options every command takes; dest filled in per parse. */
enum { G_DB, G_VERBOSE, G_QUIET, G_HELP, G_N };

static void global_opts(struct cli_opt *g, struct cli_ctx *ctx)
{
	const struct cli_opt t[G_N + 1] = {
		OPT_STR("db", 0, ctx ? &ctx->db_path : NULL, "PATH",
			"the store (default: $KFORGE_DB or ./kforge.db)"),
		OPT_COUNT("verbose", 'v', ctx ? &ctx->verbose : NULL, 1,
			  "more logging (also KFORGE_LOG=debug|info|warn|error)"),
		OPT_COUNT("quiet", 'q', ctx ? &ctx->verbose : NULL, -1, "less logging"),
		{ "help", 'h', CLI_HELP, NULL, NULL, "this help", 0, 0, NULL, 0 },
		OPT_END,
	};
	memcpy(g, t, sizeof(t));
}

static int takes_value(const struct cli_opt *o)
{
	return o->type != CLI_FLAG && o->type != CLI_COUNT && o->type != CLI_HELP;
}

static void print_cmd(const struct cli_spec *spec, FILE *f)
{
	fprintf(f, "kforge%s%s", spec->cmd ? " " : "", spec->cmd ? spec->cmd : "");
}

static void print_synopsis(const struct cli_spec *spec, FILE *f)
{
	const char *a = spec->args ? spec->args : "";
	int first = 1;

	do {
		size_t n = strcspn(a, "\n");
		fputs(first ? "usage: " : "       ", f);
		print_cmd(spec, f);
		fprintf(f, "%s%.*s\n", n ? " " : "", (int)n, a);
		a += n + (a[n] == '\n');
		first = 0;
	} while (*a);
}

int cli_usage(const struct cli_spec *spec)
{
	print_synopsis(spec, stderr);
	fputs("See '", stderr);
	print_cmd(spec, stderr);
	fputs(" --help'.\n", stderr);
	return EXIT_USAGE;
}

/* "kforge CMD: <msg>" on stderr, then the usage; returns EXIT_USAGE. */
__attribute__((format(printf, 2, 3)))
static int opt_error(const struct cli_spec *spec, const char *fmt, ...)
{
	va_list ap;

	print_cmd(spec, stderr);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return cli_usage(spec);
}

/* Ranges as people write them: 86400, not 86400.000000 or 8.64e+04. */
static void fmt_num(char *out, size_t cap, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		snprintf(out, cap, "%.0f", v);
	else
		snprintf(out, cap, "%g", v);
}

static int parse_ll(const char *s, long long *out)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_double(const char *s, double *out)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	return errno || *end || !isfinite(*out) ? -1 : 0;
}

static int parse_size(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024.0 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static void join_choices(const struct cli_opt *o, const char *sep, const char *last, char *out,
			 size_t cap)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; o->choices[i] && len < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i == 0 ? "" : o->choices[i + 1] ? sep : last,
					o->choices[i]);
}

/* Converts and stores one option's value; EXIT_USAGE after a message. */
static int apply(const struct cli_spec *spec, const struct cli_opt *o, const char *v)
{
	char lo[32], hi[32];
	long long ll = 0;
	double d = 0;

	fmt_num(lo, sizeof(lo), o->lo);
	fmt_num(hi, sizeof(hi), o->hi);
	switch (o->type) {
	case CLI_FLAG:
		*(int *)o->dest = o->val;
		return CLI_GO;
	case CLI_COUNT:
		*(int *)o->dest += o->val;
		return CLI_GO;
	case CLI_STR:
		*(const char **)o->dest = v;
		return CLI_GO;
	case CLI_INT:
	case CLI_LLONG:
	case CLI_ULLONG:
		if (parse_ll(v, &ll) < 0 || !((double)ll >= o->lo && (double)ll <= o->hi))
			return opt_error(spec, "--%s wants an integer in %s..%s, not '%s'", o->name, lo,
					 hi, v);
		if (o->type == CLI_INT)
			*(int *)o->dest = (int)ll;
		else if (o->type == CLI_LLONG)
			*(long long *)o->dest = ll;
		else
			*(unsigned long long *)o->dest = (unsigned long long)ll;
		return CLI_GO;
	case CLI_DOUBLE:
		if (parse_double(v, &d) < 0 || !(d >= o->lo && d <= o->hi))
			return opt_error(spec, "--%s wants a number in %s..%s, not '%s'", o->name, lo, hi,
					 v);
		*(double *)o->dest = d;
		return CLI_GO;
	case CLI_SIZE:
		if (parse_size(v, &d) < 0 || !(d >= o->lo && d <= o->hi))
			return opt_error(spec, "--%s wants a size in bytes in %s..%s (suffixes k, M, G), "
					 "not '%s'", o->name, lo, hi, v);
		*(int64_t *)o->dest = (int64_t)d;
		return CLI_GO;
	case CLI_CHOICE: {
		char all[256];
		for (int i = 0; o->choices[i]; i++)
			if (!strcmp(v, o->choices[i])) {
				*(const char **)o->dest = o->choices[i];
				return CLI_GO;
			}
		join_choices(o, ", ", " or ", all, sizeof(all));
		return opt_error(spec, "unknown %s '%s' (--%s takes %s)", o->name, v, o->name, all);
	}
	case CLI_LIST: {
		struct cli_list *l = o->dest;
		if (l->n >= CLI_LIST_MAX)
			return opt_error(spec, "--%s given more than %d times", o->name, CLI_LIST_MAX);
		l->v[l->n++] = v;
		return CLI_GO;
	}
	case CLI_HELP:
		break;
	}
	return CLI_GO;
}

/* The long option called name (exact, else a unique prefix); NULL with
 * *ambiguous set when several share the prefix. */
static const struct cli_opt *find_long(const struct cli_opt *const tabs[2], const char *name,
				       size_t len, int *ambiguous)
{
	const struct cli_opt *hit = NULL;
	int n = 0;

	*ambiguous = 0;
	for (int t = 0; t < 2; t++)
		for (const struct cli_opt *o = tabs[t]; o && o->name; o++)
			if (strlen(o->name) == len && !strncmp(o->name, name, len))
				return o;
	for (int t = 0; t < 2; t++)
		for (const struct cli_opt *o = tabs[t]; o && o->name; o++)
			if (!strncmp(o->name, name, len)) {
				hit = o;
				n++;
			}
	*ambiguous = n > 1;
	return n == 1 ? hit : NULL;
}

static const struct cli_opt *find_short(const struct cli_opt *const tabs[2], char c)
{
	for (int t = 0; t < 2; t++)
		for (const struct cli_opt *o = tabs[t]; o && o->name; o++)
			if (o->key && o->key == c)
				return o;
	return NULL;
}

static int bad_option(const struct cli_spec *spec, const struct cli_opt *const tabs[2],
		      const char *opt, size_t len)
{
	const char *best = NULL;
	char name[80];
	int bestd = 99;

	snprintf(name, sizeof(name), "%.*s", (int)(len < 64 ? len : 64), opt);
	print_cmd(spec, stderr);
	fprintf(stderr, ": unknown option '%s%s'\n", name, len > 64 ? "..." : "");
	if (name[1] == '-' && name[2]) {
		for (int t = 0; t < 2; t++)
			for (const struct cli_opt *o = tabs[t]; o && o->name; o++) {
				int d = cli_edit_distance(name + 2, o->name);
				if (d < bestd) {
					bestd = d;
					best = o->name;
				}
			}
		if (best && bestd <= 2 + (int)strlen(name + 2) / 4)
			fprintf(stderr, "Did you mean '--%s'?\n", best);
	}
	if (spec->subs)
		fprintf(stderr, "A subcommand's options go after its name: kforge %s SUBCOMMAND "
			"[options].\n", spec->cmd);
	return cli_usage(spec);
}

static int ambiguous(const struct cli_spec *spec, const struct cli_opt *const tabs[2],
		     const char *name, size_t len)
{
	struct buf b = BUF_INIT;
	int rc;

	for (int t = 0; t < 2; t++)
		for (const struct cli_opt *o = tabs[t]; o && o->name; o++)
			if (!strncmp(o->name, name, len))
				buf_addf(&b, "%s--%s", b.len ? ", " : "", o->name);
	rc = opt_error(spec, "option '--%.*s' is ambiguous: %s", (int)len, name, b.s);
	buf_release(&b);
	return rc;
}

/* Two entries with one name or letter would make one of them unreachable. */
static void check_table(const struct cli_opt *const tabs[2])
{
	for (int t = 0; t < 2; t++)
		for (const struct cli_opt *o = tabs[t]; o && o->name; o++)
			for (int u = t; u < 2; u++)
				for (const struct cli_opt *p = u == t ? o + 1 : tabs[u]; p && p->name; p++)
					if (!strcmp(o->name, p->name) || (o->key && o->key == p->key)) {
						fprintf(stderr, "kforge: internal error: option --%s declared "
							"twice\n", o->name);
						abort(); /* invariant: a command's table is fixed at build time */
					}
}

int cli_parse(const struct cli_spec *spec, int argc, char **argv, struct cli_ctx *ctx,
	      int *nargs)
{
	struct cli_opt g[G_N + 1];
	const struct cli_opt *tabs[2];
	int i, n = 0, rc;

	global_opts(g, ctx);
	tabs[0] = spec->opts;
	tabs[1] = g;
	check_table(tabs);
	*nargs = 0;
	/* Arguments move down to argv[1 + n]: never past i, so nothing unread
	 * is overwritten. */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		const struct cli_opt *o;

		if (a[0] != '-' || !a[1]) {
			if (spec->in_order)
				break;
			argv[1 + n++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			for (i++; i < argc; i++)
				argv[1 + n++] = argv[i];
			break;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			int amb = 0;
			o = len ? find_long(tabs, name, len, &amb) : NULL;
			if (!o)
				return amb ? ambiguous(spec, tabs, name, len)
					   : bad_option(spec, tabs, a, (size_t)(eq ? eq - a : (long)strlen(a)));
			if (o->type == CLI_HELP) {
				cli_print_help(spec, stdout);
				return EXIT_OK;
			}
			if (!takes_value(o)) {
				if (eq)
					return opt_error(spec, "option '--%s' takes no value (got '%s')",
							 o->name, a);
			} else if (eq) {
				val = eq + 1;
			} else if (i + 1 < argc) {
				val = argv[++i];
			} else {
				return opt_error(spec, "option '--%s' needs a value (%s)", o->name,
						 o->arg ? o->arg : "one of its choices");
			}
			if ((rc = apply(spec, o, val)) != CLI_GO)
				return rc;
			continue;
		}
		/* -abc: flags bundled; a letter that takes a value takes the rest. */
		for (const char *c = a + 1; *c; c++) {
			char opt[3] = { '-', *c, 0 };
			o = find_short(tabs, *c);
			if (!o)
				return bad_option(spec, tabs, opt, 2);
			if (o->type == CLI_HELP) {
				cli_print_help(spec, stdout);
				return EXIT_OK;
			}
			if (takes_value(o)) {
				if (c[1])
					val = c + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else
					return opt_error(spec, "option '-%c' (--%s) needs a value (%s)", *c,
							 o->name, o->arg ? o->arg : "one of its choices");
				if ((rc = apply(spec, o, val)) != CLI_GO)
					return rc;
				break;
			}
			if ((rc = apply(spec, o, NULL)) != CLI_GO)
				return rc;
		}
	}
	for (; i < argc; i++)      /* in_order: the command and what follows */
		argv[1 + n++] = argv[i];
	argv[1 + n] = NULL;
	*nargs = n;
	if (ctx) {
		if (!ctx->db_path || !*ctx->db_path)
			ctx->db_path = "kforge.db";
		cli_setup_log(ctx);
	}
	return CLI_GO;
}

/* ---- help ---- */

static void opt_label(const struct cli_opt *o, struct buf *b)
{
	buf_reset(b);
	if (o->key)
		buf_addf(b, "  -%c, --%s", o->key, o->name);
	else
		buf_addf(b, "      --%s", o->name);
	if (o->type == CLI_CHOICE && !o->arg) {
		buf_addc(b, ' ');
		for (int i = 0; o->choices[i]; i++)
			buf_addf(b, "%s%s", i ? "|" : "", o->choices[i]);
	} else if (takes_value(o) && o->arg) {
		buf_addf(b, " %s", o->arg);
	}
}

/* Writes text from column col (the cursor is there), wrapped at
 * HELP_WIDTH; '\n' in text starts a new line at col. */
static void put_wrapped(FILE *f, const char *text, int col)
{
	int x = col;

	while (*text) {
		size_t w = strcspn(text, " \n");
		if (x > col && x + 1 + (int)w > HELP_WIDTH) {
			fprintf(f, "\n%*s", col, "");
			x = col;
		} else if (x > col) {
			fputc(' ', f);
			x++;
		}
		fprintf(f, "%.*s", (int)w, text);
		x += (int)w;
		text += w;
		if (*text == '\n') {
			fprintf(f, "\n%*s", col, "");
			x = col;
			text++;
		}
		while (*text == ' ')
			text++;
	}
	fputc('\n', f);
}

static void print_opts(FILE *f, const struct cli_opt *const tabs[], int ntabs, const char *const titles[])
{
	struct buf b = BUF_INIT, h = BUF_INIT;
	int col = 0;

	for (int t = 0; t < ntabs; t++)
		for (const struct cli_opt *o = tabs[t]; o && o->name; o++) {
			opt_label(o, &b);
			if ((int)b.len + 2 > col)
				col = (int)b.len + 2;
		}
	if (col > HELP_COL_MAX)
		col = HELP_COL_MAX;
	for (int t = 0; t < ntabs; t++) {
		if (!tabs[t] || !tabs[t]->name)
			continue;
		fprintf(f, "\n%s\n", titles[t]);
		for (const struct cli_opt *o = tabs[t]; o->name; o++) {
			opt_label(o, &b);
			buf_reset(&h);
			buf_adds(&h, o->help ? o->help : "");
			if (o->type == CLI_LIST)
				buf_adds(&h, " (repeatable)");
			fputs(b.s, f);
			if ((int)b.len + 2 > col)
				fprintf(f, "\n%*s", col, "");
			else
				fprintf(f, "%*s", col - (int)b.len, "");
			put_wrapped(f, h.s, col);
		}
	}
	buf_release(&b);
	buf_release(&h);
}

static void put_text(FILE *f, const char *s)
{
	size_t n = strlen(s);
	fprintf(f, "\n%s%s", s, n && s[n - 1] == '\n' ? "" : "\n");
}

static void print_dispatch_help(const struct cli_spec *spec, FILE *f);

void cli_print_help(const struct cli_spec *spec, FILE *f)
{
	struct cli_opt g[G_N + 1];
	const struct cli_opt *tabs[2];
	static const char *const titles[2] = {
		"Options:", "Global options (before or after the command name):",
	};

	if (spec->help) {
		spec->help(f);
		return;
	}
	if (spec->subs) {
		print_dispatch_help(spec, f);
		return;
	}
	global_opts(g, NULL);
	tabs[0] = spec->opts;
	tabs[1] = g;
	print_synopsis(spec, f);
	if (spec->doc)
		put_text(f, spec->doc);
	print_opts(f, tabs, 2, titles);
	if (spec->footer)
		put_text(f, spec->footer);
}

/* ---- subcommands ---- */

static void print_dispatch_help(const struct cli_spec *spec, FILE *f)
{
	size_t w = 0;

	print_synopsis(spec, f);
	if (spec->doc)
		put_text(f, spec->doc);
	fputs("\nSubcommands:\n", f);
	for (const struct cli_sub *s = spec->subs; s->name; s++)
		if (strlen(s->name) > w)
			w = strlen(s->name);
	for (const struct cli_sub *s = spec->subs; s->name; s++) {
		fprintf(f, "  %-*s  ", (int)w, s->name);
		put_wrapped(f, s->summary, (int)w + 4);
	}
	fprintf(f, "\nSee 'kforge %s SUBCOMMAND --help' for its options; every subcommand\n"
		"also takes the global options (--db PATH, -v, -q).\n", spec->cmd);
}

int cli_dispatch(const char *cmd, const char *doc, const struct cli_sub *subs, int argc,
		 char **argv, struct cli_ctx *ctx)
{
	struct buf syn = BUF_INIT, names = BUF_INIT;
	struct cli_spec spec = { cmd, NULL, doc, NULL, NULL, 1, subs, NULL };
	const struct cli_sub *best = NULL;
	int n, rc, bestd = 99;

	for (const struct cli_sub *s = subs; s->name; s++) {
		buf_addf(&syn, "%s%s%s%s", syn.len ? "\n" : "", s->name, *s->args ? " " : "", s->args);
		buf_addf(&names, "%s%s", names.len ? ", " : "", s->name);
	}
	spec.args = syn.s;
	rc = cli_parse(&spec, argc, argv, ctx, &n);
	if (rc != CLI_GO)
		goto out;
	if (n == 0) {
		rc = opt_error(&spec, "needs a subcommand (%s)", names.s);
		goto out;
	}
	for (const struct cli_sub *s = subs; s->name; s++) {
		int d;
		if (!strcmp(s->name, argv[1])) {
			rc = s->fn(n, argv + 1, ctx);
			goto out;
		}
		d = cli_edit_distance(argv[1], s->name);
		if (d < bestd) {
			bestd = d;
			best = s;
		}
	}
	fprintf(stderr, "kforge %s: unknown subcommand '%s' (%s)\n", cmd, argv[1], names.s);
	if (best && bestd <= 2)
		fprintf(stderr, "Did you mean '%s'?\n", best->name);
	rc = cli_usage(&spec);
out:
	buf_release(&syn);
	buf_release(&names);
	return rc;
}
