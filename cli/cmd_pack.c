#include "cmds.h"
#include "core/json.h"
#include "store/store.h"
#include "dataset/dataset.h"

#include <stdlib.h>
#include <string.h>

static const char pack_doc[] =
	"Packs the store into DIR/kforge-NAME-X.Y.Z.tar.zst (default DIR dist/, NAME\n"
	"kernelbench): data/*.jsonl, kernels/<problem>/<hash>.cu, sft.jsonl, pairs.jsonl,\n"
	"kforge.db, schema.json, provenance.json, README.md (dataset card), SHA256SUMS.\n"
	"The same store and version give the same bytes; entry times come from\n"
	"SOURCE_DATE_EPOCH when set, else from the data. Each tarball gets a .sha256\n"
	"file beside it. KFORGE_LOG=debug shows the time of each step; -v lists the\n"
	"rows packed per file.\n";

int cmd_pack(int argc, char **argv, struct cli_ctx *ctx)
{
	struct pack_opts o = { NULL, "dist", "kernelbench", NULL, "cc-by-4.0", NULL, 0, 0, -1 };
	struct pack_result r;
	struct buf err = BUF_INIT, copy = BUF_INIT;
	struct cli_list plist = { { NULL }, 0 };
	json_t *probs = NULL;
	int ret, n;
	struct cli_opt opts[] = {
		OPT_STR("version", 0, &o.version, "X.Y.Z", "the dataset's version (required)"),
		OPT_STR("name", 0, &o.name, "NAME", "the dataset's name (kernelbench)"),
		OPT_FLAG("only-verified", 0, &o.only_verified,
			 "only kernels verified on at least one GPU"),
		OPT_LIST("problems", 0, &plist, "LIST",
			 "only these problems: the PROBLEMS of kforge search (level2, 1-10, "
			 "level2/12, Softmax, level1/019_ReLU; make dataset passes its PROBLEMS)"),
		OPT_FLAG("gz", 0, &o.gz, "also write a .tar.gz"),
		OPT_STR("license", 0, &o.license, "ID", "the license named in the card (cc-by-4.0)"),
		OPT_STR("output", 'o', &o.out_dir, "DIR", "where the tarballs go (dist)"),
		OPT_END,
	};
	struct cli_spec spec = { "pack", "--version X.Y.Z [options]", pack_doc, opts, NULL, 0, NULL,
				 NULL };

	if ((ret = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return ret;
	if (n > 0) {
		fprintf(stderr, "kforge pack: unexpected argument '%s'\n", argv[1]);
		return cli_usage(&spec);
	}
	if (!o.version) {
		fprintf(stderr, "kforge pack: --version X.Y.Z is required\n");
		return cli_usage(&spec);
	}
	o.db_path = ctx->db_path;
	if (plist.n && !(probs = cli_problem_ids(ctx, &plist, &err))) {
		ret = cli_fail(EXIT_USAGE, "pack: %s", err.s);
		buf_release(&err);
		return ret;
	}
	o.problems = probs;
	pack_result_init(&r);
	/* An older store is read through a migrated copy (store.h). */
	if (store_current_copy(ctx->db_path, NULL, &copy, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "pack: %s", err.s);
		goto out;
	}
	if (copy.len)
		o.db_path = copy.s;
	if (dataset_pack(&o, &r, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "pack: %s", err.s);
	} else {
		printf("%s  %lld bytes  sha256 %s\n", r.path.s, r.bytes, r.sha256);
		if (o.gz)
			printf("%s  %lld bytes  sha256 %s\n", r.gz_path.s, r.gz_bytes, r.gz_sha256);
		if (ctx->verbose) {
			const char *k;
			json_t *v;
			json_object_foreach(r.counts, k, v)
				printf("  %-28s %lld\n", k, (long long)json_integer_value(v));
		}
		ret = EXIT_OK;
	}
out:
	pack_result_release(&r);
	store_copy_remove(copy.s);
	buf_release(&copy);
	json_decref(probs);
	buf_release(&err);
	return ret;
}
