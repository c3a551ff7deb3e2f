#include "cmds.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "core/fsutil.h"
#include "store/store.h"
#include "store/store_export.h"
#include "site/site.h"

static const char site_doc[] =
	"Renders the store into a static website in DIR (default public/): index,\n"
	"a page per problem, per kernel and per idea category, methodology and\n"
	"downloads, plus a report per problem under DIR/reports/ (HTML and\n"
	"Markdown). Relative links only: the site works from file:// and needs no\n"
	"JavaScript (a small script only adds sorting and a filter to the\n"
	"leaderboard). The tarballs of --dist are copied into DIR/downloads/\n"
	"(hard-linked where possible) unless --base-url says where they are\n"
	"published. The store is --db's (a global option: before or after 'site').\n";

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
	struct site_options o = { NULL, "public", NULL, NULL, 0, 0, NULL, NULL };
	struct site_stats st;
	struct buf err = BUF_INIT, tdir = BUF_INIT, dbp = BUF_INIT, card = BUF_INIT;
	struct buf copy = BUF_INIT, sel = BUF_INIT;
	struct cli_list plist = { { NULL }, 0 };
	json_t *probs = NULL;
	const char *dataset = NULL;
	struct timespec t0, t1;
	int ret = EXIT_FAIL, nargs;
	struct cli_opt opts[] = {
		OPT_STR("output", 'o', &o.out_dir, "DIR",
			"where the site goes (replaced as a whole; must be empty, missing, or a "
			"site kforge made)"),
		OPT_STR("from-dataset", 0, &dataset, "DIR",
			"render an unpacked dataset: its store (DIR/kforge.db, DIR/store.db or the "
			"only *.db/*.sqlite in DIR) and its card (DIR/README.md) on downloads.html"),
		OPT_STR("dist", 0, &o.dist_dir, "DIR",
			"list the tarballs in DIR on downloads.html (size, SHA-256) and copy them "
			"into the site's downloads/"),
		OPT_STR("base-url", 0, &o.base_url, "URL",
			"link the --dist tarballs at URL/NAME instead of copying them into the site"),
		OPT_STR("templates", 0, &o.templates_dir, "DIR", "templates (default: ROOT/templates/site)"),
		OPT_LIST("problems", 0, &plist, "LIST",
			 "only these problems, as pack --problems keeps them (the PROBLEMS of "
			 "kforge search; make dataset passes its PROBLEMS)"),
		OPT_FLAG("no-kernel-pages", 0, &o.no_kernel_pages,
			 "skip the page per kernel (quick previews)"),
		OPT_INT("jobs", 'j', &o.threads, "N", 1, 16,
			"threads for the kernel pages (default: online CPUs, at most 8)"),
		OPT_END,
	};
	struct cli_spec spec = { "site", "[--db FILE] [-o DIR] [--from-dataset DIR] [--dist DIR] [options]", site_doc, opts,
		"Exit status: 0 built, 1 failed (store, templates, I/O), 2 usage.\n", 0, NULL, NULL };

	if ((ret = cli_parse(&spec, argc, argv, ctx, &nargs)) != CLI_GO)
		return ret;
	ret = EXIT_FAIL;
	o.db_path = ctx->db_path;
	if (nargs > 0) {
		fprintf(stderr, "kforge site: unexpected argument '%s'\n", argv[1]);
		return cli_usage(&spec);
	}
	if (!*o.out_dir) {
		fprintf(stderr, "kforge site: -o needs a directory\n");
		return cli_usage(&spec);
	}
	/* Usage errors before anything is allocated. */
	if (o.base_url && (strncmp(o.base_url, "https://", 8) && strncmp(o.base_url, "http://", 7))) {
		fprintf(stderr, "kforge site: --base-url must start with http:// or https://\n");
		return cli_usage(&spec);
	}
	if (o.base_url && strlen(o.base_url) > 2000) {
		fprintf(stderr, "kforge site: --base-url is too long\n");
		return cli_usage(&spec);
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
	if (plist.n && !(probs = cli_problem_ids(ctx, &plist, &err))) {
		ret = cli_fail(EXIT_USAGE, "site: %s", err.s);
		goto done;
	}
	/* An older store is read through a migrated copy (store.h); --problems
	 * renders pack's filtered copy of it. */
	if (store_current_copy(o.db_path, NULL, &copy, &err) < 0)
		goto out;
	if (copy.len)
		o.db_path = copy.s;
	if (probs) {
		struct export_filter f = { probs, 0 };
		const char *t = getenv("TMPDIR");
		int fd;
		buf_addf(&sel, "%s/kforge-site.XXXXXX", t && *t ? t : "/tmp");
		if ((fd = mkstemp(sel.s)) < 0) {
			kf_err(&err, "cannot create %s", sel.s);
			buf_reset(&sel);
			goto out;
		}
		close(fd);
		unlink(sel.s);
		if (store_export_copy(o.db_path, sel.s, &f, &err) < 0) {
			buf_reset(&sel);
			goto out;
		}
		o.db_path = sel.s;
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
done:
	store_copy_remove(copy.s);
	store_copy_remove(sel.s);
	buf_release(&copy);
	buf_release(&sel);
	json_decref(probs);
	buf_release(&err);
	buf_release(&tdir);
	buf_release(&dbp);
	buf_release(&card);
	return ret;
}
