#include "cmds.h"
#include "core/termsafe.h"
#include "dataset/dataset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char verify_args[] = "FILE|DIR";
static const char fetch_args[] = "URL [--sha256 HEX] [-o DIR] [--verify] [options]";
static const char diff_args[] = "A B";
static const char cat_args[] = "FILE|DIR MEMBER";

static int do_verify(const char *path)
{
	struct buf rep = BUF_INIT, err = BUF_INIT;
	struct verify_summary sum;
	int r = dataset_verify(path, &rep, &sum, &err), ret;

	if (r == -1)
		ret = cli_fail(EXIT_FAIL, "dataset verify: %s", err.s);
	else if (r == -2) {
		cli_eputs(rep.s);
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

static int sub_verify(int argc, char **argv, struct cli_ctx *ctx)
{
	int n, rc;
	struct cli_spec spec = { "dataset verify", verify_args,
		"Checks every checksum in SHA256SUMS, every JSONL line against schema.json\n"
		"and the card's counts; FILE a tarball, or DIR where one was extracted.\n", NULL,
		"Exit status 4 when a check fails.\n", 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n != 1)
		return cli_usage(&spec);
	return do_verify(argv[1]);
}

static int sub_fetch(int argc, char **argv, struct cli_ctx *ctx)
{
	struct fetch_opts o = { NULL, ".", NULL, (int64_t)64 << 30, (int64_t)256 << 30, NULL, NULL };
	struct fetch_result r;
	struct buf err = BUF_INIT;
	int ret, verify = 0, n, c;
	struct cli_opt opts[] = {
		OPT_STR("sha256", 0, &o.sha256, "HEX", "the tarball's expected SHA-256"),
		OPT_STR("output", 'o', &o.out_dir, "DIR", "extract into DIR/<name> (default .)"),
		OPT_SIZE("max-bytes", 0, &o.max_bytes, "N", 1, 9e18, "download at most N bytes (64G)"),
		OPT_SIZE("max-extract", 0, &o.max_extract, "N", 1, 9e18, "extract at most N bytes (256G)"),
		OPT_FLAG("verify", 0, &verify, "verify the downloaded tarball before extracting it"),
		OPT_END,
	};
	struct cli_spec spec = { "dataset fetch", fetch_args,
		"Downloads (resuming a partial download, TLS verified, size-limited), checks\n"
		"the SHA-256 and extracts safely into DIR/<name>; plain http:// is accepted\n"
		"for loopback addresses only. --verify runs dataset verify on the downloaded\n"
		"tarball first and extracts only a dataset that passes (else exit 4, the\n"
		"download removed). Extraction refuses links, devices, sparse files, unsafe\n"
		"names and archives that expand over 200 times their size (or --max-extract).\n",
		opts, NULL, 0, NULL, NULL };

	if ((ret = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return ret;
	if (n != 1) {
		fprintf(stderr, "kforge dataset fetch: needs exactly one URL\n");
		return cli_usage(&spec);
	}
	o.url = argv[1];
	o.verify = verify;
	if (isatty(2))
		o.progress = progress;
	fetch_result_init(&r);
	c = dataset_fetch(&o, &r, &err);
	if (o.progress)
		fputc('\n', stderr);
	if (c == -2) {
		cli_eputs(r.report.s);
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
		/* problem ids from two tarballs, maybe downloaded: inert on a terminal */
		struct buf safe = BUF_INIT;
		termsafe_add(&safe, out.s, out.len, TERMSAFE_KEEP_NL);
		fputs(safe.s, stdout);
		buf_release(&safe);
		ret = EXIT_OK;
	}
	buf_release(&out);
	buf_release(&err);
	return ret;
}

static int sub_diff(int argc, char **argv, struct cli_ctx *ctx)
{
	int n, rc;
	struct cli_spec spec = { "dataset diff", diff_args,
		"What changed from tarball A to B: rows per file, problems added or removed,\n"
		"best speedups that moved.\n", NULL, NULL, 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n != 2)
		return cli_usage(&spec);
	return do_diff(argv[1], argv[2]);
}

static int sub_cat(int argc, char **argv, struct cli_ctx *ctx)
{
	struct buf err = BUF_INIT;
	int n, rc;
	struct cli_spec spec = { "dataset cat", cat_args,
		"Writes one file of a dataset tarball (or of the directory it was extracted\n"
		"into) to standard output, e.g. provenance.json or kforge.db, through the\n"
		"same bounded reader as verify (no zstd(1) needed).\n", NULL,
		"Exit status 1 when MEMBER is not in it or it cannot be read.\n", 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (n != 2)
		return cli_usage(&spec);
	if (isatty(1) && strcmp(argv[2], "kforge.db") == 0)
		return cli_fail(EXIT_USAGE, "dataset cat: kforge.db is binary: redirect it to a file");
	rc = EXIT_OK;
	if (dataset_cat(argv[1], argv[2], 1, &err) < 0 && !cli_stdout_gone())
		rc = cli_fail(EXIT_FAIL, "dataset cat: %s", err.s);
	buf_release(&err);
	return rc;
}

int cmd_dataset(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct cli_sub subs[] = {
		{ "verify", sub_verify, verify_args,
		  "checks checksums, JSONL lines against the schema and the card's counts (exit 4 when one fails)" },
		{ "fetch", sub_fetch, fetch_args,
		  "downloads, checks the SHA-256 and extracts safely (--verify: then verifies)" },
		{ "diff", sub_diff, diff_args, "rows per file, problems added or removed, best speedups that moved" },
		{ "cat", sub_cat, cat_args, "writes one file of a dataset to standard output" },
		{ NULL, NULL, NULL, NULL },
	};
	return cli_dispatch("dataset", "Verifies, fetches, diffs and reads dataset tarballs.\n", subs, argc,
			    argv, ctx);
}
