#include "cmds.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "core/fsutil.h"
#include "site/site.h"

const char usage_site[] =
	"kforge site [--db FILE] [-o DIR] [--from-dataset DIR] [--dist DIR]\n"
	"            [--templates DIR] [--no-kernel-pages] [-j N]\n"
	"\n"
	"Renders the store into a static website in DIR (default public/): index,\n"
	"a page per problem, per kernel and per idea category, methodology and\n"
	"downloads, plus Markdown reports under DIR/reports/. Relative links only:\n"
	"the site works from file:// and needs no JavaScript.\n"
	"\n"
	"  --db FILE            the store (default: --db before the command, KFORGE_DB, kforge.db)\n"
	"  -o, --output DIR     where the site goes (replaced as a whole; must be empty,\n"
	"                       missing, or a site kforge made)\n"
	"  --from-dataset DIR   render an unpacked dataset: its store (DIR/kforge.db,\n"
	"                       DIR/store.db or the only *.db/*.sqlite in DIR) and its\n"
	"                       card (DIR/README.md) on downloads.html\n"
	"  --dist DIR           list the tarballs in DIR on downloads.html (size, SHA-256)\n"
	"  --templates DIR      templates (default: ROOT/templates/site)\n"
	"  --no-kernel-pages    skip the page per kernel (quick previews)\n"
	"  -j, --jobs N         threads for the kernel pages (default: online CPUs, at most 8)\n"
	"Exit status: 0 built, 1 failed (store, templates, I/O), 2 usage.\n";

/* The store inside an unpacked dataset. */
static int dataset_store(const char *dir, struct buf *out, struct buf *err)
{
	static const char *const names[] = { "kforge.db", "store.db", "store.sqlite", NULL };
	DIR *d;
	struct dirent *e;
	int found = 0;

	for (int i = 0; names[i]; i++) {
		path_join(out, dir, names[i]);
		if (file_exists(out->s))
			return 0;
	}
	d = opendir(dir);
	if (!d)
		return kf_err(err, "--from-dataset %s: not a directory", dir);
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if ((n > 3 && !strcmp(e->d_name + n - 3, ".db")) ||
		    (n > 7 && !strcmp(e->d_name + n - 7, ".sqlite"))) {
			path_join(out, dir, e->d_name);
			found++;
		}
	}
	closedir(d);
	if (found != 1)
		return kf_err(err, "--from-dataset %s: %s", dir,
			      found ? "several stores (*.db); name one with --db" : "no store (*.db) in it");
	return 0;
}

int cmd_site(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "from-dataset", required_argument, NULL, 'D' },
		{ "dist", required_argument, NULL, 'T' },
		{ "templates", required_argument, NULL, 't' },
		{ "no-kernel-pages", no_argument, NULL, 'K' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct site_options o = { ctx->db_path, "public", NULL, NULL, 0, 0 };
	struct site_stats st;
	struct buf err = BUF_INIT, tdir = BUF_INIT, dbp = BUF_INIT, card = BUF_INIT;
	const char *dataset = NULL;
	struct timespec t0, t1;
	int c, ret = EXIT_FAIL;

	while ((c = cli_getopt(argc, argv, "site", "ho:j:", opts)) != -1) {
		switch (c) {
		case -2: return EXIT_USAGE;
		case 'd': o.db_path = optarg; break;
		case 'o': o.out_dir = optarg; break;
		case 'D': dataset = optarg; break;
		case 'T': o.dist_dir = optarg; break;
		case 't': o.templates_dir = optarg; break;
		case 'K': o.no_kernel_pages = 1; break;
		case 'j':
			o.threads = atoi(optarg);
			if (o.threads < 1 || o.threads > 16) {
				fprintf(stderr, "kforge site: --jobs takes 1 to 16\n");
				return cli_usage("site");
			}
			break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kforge site: unexpected argument '%s'\n", argv[optind]);
		return cli_usage("site");
	}
	if (!*o.out_dir) {
		fprintf(stderr, "kforge site: -o needs a directory\n");
		return cli_usage("site");
	}
	if (!o.threads) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.threads = n < 1 ? 1 : n > 8 ? 8 : (int)n;
	}
	if (dataset) {
		if (dataset_store(dataset, &dbp, &err) < 0)
			goto out;
		o.db_path = dbp.s;
		path_join(&card, dataset, "README.md");
		o.card_path = card.s;
	}
	if (!o.templates_dir) {
		cli_data_path(ctx, "templates/site", &tdir);
		o.templates_dir = tdir.s;
	}
	if (o.dist_dir && !is_dir(o.dist_dir)) {
		kf_err(&err, "--dist %s: not a directory", o.dist_dir);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (site_build(&o, &st, &err) < 0)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("site: %s: %ld pages (%ld problems, %ld kernels), %ld reports in %.1f s\n",
	       o.out_dir, st.pages, st.problems, st.kernels, st.reports,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	ret = EXIT_OK;
out:
	if (ret != EXIT_OK)
		cli_fail(EXIT_FAIL, "site: %s", err.s);
	buf_release(&err);
	buf_release(&tdir);
	buf_release(&dbp);
	buf_release(&card);
	return ret;
}
