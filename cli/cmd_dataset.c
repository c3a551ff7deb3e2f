#include "cmds.h"
#include "dataset/dataset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char usage_dataset[] =
	"kforge dataset verify FILE|DIR\n"
	"       kforge dataset fetch URL [--sha256 HEX] [-o DIR] [--max-bytes N] [--max-extract N]\n"
	"                                [--verify]\n"
	"       kforge dataset diff A B\n"
	"  verify  checks every checksum in SHA256SUMS, every JSONL line against schema.json\n"
	"          and the card's counts (exit 4 when a check fails); FILE a tarball, or DIR\n"
	"          where one was extracted\n"
	"  fetch   downloads (resuming a partial download, TLS verified, size-limited), checks\n"
	"          the SHA-256 and extracts safely into DIR/<name> (default DIR .); plain\n"
	"          http:// is accepted for loopback addresses only; --verify runs dataset\n"
	"          verify on the downloaded tarball first and extracts only a dataset that\n"
	"          passes (else exit 4, the download removed). Extraction refuses links,\n"
	"          devices, sparse files, unsafe names and archives that expand over 200\n"
	"          times their size (or --max-extract, default 256G)\n"
	"  diff    rows per file, problems added or removed, best speedups that moved\n";

static int do_verify(const char *path)
{
	struct buf rep = BUF_INIT, err = BUF_INIT;
	struct verify_summary sum;
	int r = dataset_verify(path, &rep, &sum, &err), ret;

	if (r == -1)
		ret = cli_fail(EXIT_FAIL, "dataset verify: %s", err.s);
	else if (r == -2) {
		fprintf(stderr, "%s", rep.s);
		ret = cli_fail(EXIT_CHECK, "dataset verify: %s FAILED", path);
	} else {
		printf("%s: OK (%lld files, %lld JSONL lines checked)\n", path, sum.files, sum.lines);
		ret = EXIT_OK;
	}
	buf_release(&rep);
	buf_release(&err);
	return ret;
}

static void progress(void *ctx, int64_t done, int64_t total)
{
	(void)ctx;
	if (total > 0)
		fprintf(stderr, "\r%lld / %lld bytes (%d%%)", (long long)done, (long long)total,
			(int)(done * 100 / total));
	else
		fprintf(stderr, "\r%lld bytes", (long long)done);
}

static int parse_size(const char *s, int64_t *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v <= 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	}
	if (*end || v > 9e18)
		return -1;
	*out = (int64_t)v;
	return 0;
}

static int do_fetch(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sha256", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "max-bytes", required_argument, NULL, 'm' },
		{ "max-extract", required_argument, NULL, 'x' },
		{ "verify", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fetch_opts o = { NULL, ".", NULL, (int64_t)64 << 30, (int64_t)256 << 30, NULL, NULL };
	struct fetch_result r;
	struct buf err = BUF_INIT;
	int c, ret, verify = 0;

	optind = 0; /* GNU getopt: start over on the shifted argv */
	while ((c = cli_getopt(argc, argv, "dataset", "ho:", opts)) != -1) {
		switch (c) {
		case -2: return EXIT_USAGE;
		case 's': o.sha256 = optarg; break;
		case 'o': o.out_dir = optarg; break;
		case 'V': verify = 1; break;
		case 'm':
		case 'x':
			if (parse_size(optarg, c == 'm' ? &o.max_bytes : &o.max_extract) < 0)
				return cli_fail(EXIT_USAGE, "dataset fetch: bad size '%s'", optarg);
			break;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "kforge dataset fetch: needs exactly one URL\n");
		return cli_usage("dataset");
	}
	o.url = argv[optind];
	o.verify = verify;
	if (isatty(2))
		o.progress = progress;
	fetch_result_init(&r);
	c = dataset_fetch(&o, &r, &err);
	if (o.progress)
		fputc('\n', stderr);
	if (c == -2) {
		fputs(r.report.s, stderr);
		ret = cli_fail(EXIT_CHECK, "dataset fetch: %s", err.s);
	} else if (c < 0) {
		ret = cli_fail(EXIT_FAIL, "dataset fetch: %s", err.s);
	} else {
		printf("%s  sha256 %s%s\n", r.archive.s, r.sha256, r.resumed ? "  (resumed)" : "");
		if (verify)
			printf("%s: OK (%lld files, %lld JSONL lines checked)\n", r.archive.s,
			       r.verified.files, r.verified.lines);
		printf("extracted into %s\n", r.dir.s);
		ret = EXIT_OK;
	}
	fetch_result_release(&r);
	buf_release(&err);
	return ret;
}

static int do_diff(const char *a, const char *b)
{
	struct buf out = BUF_INIT, err = BUF_INIT;
	int ret;
	if (dataset_diff(a, b, &out, &err) < 0)
		ret = cli_fail(EXIT_FAIL, "dataset diff: %s", err.s);
	else {
		fputs(out.s, stdout);
		ret = EXIT_OK;
	}
	buf_release(&out);
	buf_release(&err);
	return ret;
}

int cmd_dataset(int argc, char **argv, struct cli_ctx *ctx)
{
	const char *sub;

	(void)ctx;
	if (argc < 2)
		return cli_usage("dataset");
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h"))
		return cli_help("dataset");
	if (!strcmp(sub, "verify")) {
		if (argc != 3)
			return cli_usage("dataset");
		return do_verify(argv[2]);
	}
	if (!strcmp(sub, "fetch"))
		return do_fetch(argc - 1, argv + 1);
	if (!strcmp(sub, "diff")) {
		if (argc != 4)
			return cli_usage("dataset");
		return do_diff(argv[2], argv[3]);
	}
	fprintf(stderr, "kforge dataset: unknown subcommand '%s' (verify, fetch, diff)\n", sub);
	return EXIT_USAGE;
}
