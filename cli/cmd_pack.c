#include "cmds.h"
#include "core/json.h"
#include "dataset/dataset.h"

#include <stdlib.h>
#include <string.h>

const char usage_pack[] =
	"kforge pack --version X.Y.Z [--name NAME] [--only-verified] [--problems LIST] [--gz]\n"
	"            [--license ID] [-o DIR]\n"
	"  Packs the store into DIR/kforge-NAME-X.Y.Z.tar.zst (default DIR dist/, NAME\n"
	"  kernelbench): data/*.jsonl, kernels/<problem>/<hash>.cu, sft.jsonl, pairs.jsonl,\n"
	"  kforge.db, schema.json, provenance.json, README.md (dataset card), SHA256SUMS.\n"
	"  The same store and version give the same bytes; entry times come from\n"
	"  SOURCE_DATE_EPOCH when set, else from the data.\n"
	"  --problems LIST   comma-separated problem ids (level1/019_ReLU,...)\n"
	"  --only-verified   only kernels verified on at least one GPU\n"
	"  --gz              also write a .tar.gz\n";

int cmd_pack(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "version", required_argument, NULL, 'V' },
		{ "name", required_argument, NULL, 'n' },
		{ "only-verified", no_argument, NULL, 'v' },
		{ "problems", required_argument, NULL, 'p' },
		{ "gz", no_argument, NULL, 'z' },
		{ "license", required_argument, NULL, 'l' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pack_opts o = { ctx->db_path, "dist", "kernelbench", NULL, "cc-by-4.0", NULL, 0, 0, -1 };
	struct pack_result r;
	struct buf err = BUF_INIT;
	json_t *probs = NULL;
	int c, ret;

	while ((c = cli_getopt(argc, argv, "pack", "ho:", opts)) != -1) {
		switch (c) {
		case -2:
			json_decref(probs);
			return EXIT_USAGE;
		case 'V': o.version = optarg; break;
		case 'n': o.name = optarg; break;
		case 'v': o.only_verified = 1; break;
		case 'z': o.gz = 1; break;
		case 'l': o.license = optarg; break;
		case 'o': o.out_dir = optarg; break;
		case 'p': {
			char *dup = strdup(optarg), *save = NULL;
			if (!dup)
				abort();
			if (!probs)
				probs = json_array();
			for (char *t = strtok_r(dup, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
				json_array_append_new(probs, json_string(t));
			free(dup);
			break;
		}
		}
	}
	if (optind < argc) {
		json_decref(probs);
		fprintf(stderr, "kforge pack: unexpected argument '%s'\n", argv[optind]);
		return cli_usage("pack");
	}
	if (!o.version) {
		json_decref(probs);
		fprintf(stderr, "kforge pack: --version X.Y.Z is required\n");
		return cli_usage("pack");
	}
	o.problems = probs;
	pack_result_init(&r);
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
	pack_result_release(&r);
	json_decref(probs);
	buf_release(&err);
	return ret;
}
