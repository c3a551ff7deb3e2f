#include "cmds.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/shard.h"
#include "collector/slurm.h"
#include "collector/problem_list.h"
#include "core/fsutil.h"
#include "core/problem.h"

const char usage_slurm[] =
	"kforge slurm submit [options] [-- SEARCH-ARGS...]\n"
	"  Writes sbatch scripts under --workdir and submits them: a job array whose\n"
	"  tasks each search one shard of the problems into a store of their own\n"
	"  (requeueable: a restarted task resumes), then a job that merges the shards,\n"
	"  verify jobs per GPU partition, and a job that merges, packs and renders.\n"
	"  --problems LIST       level1, ids (1,5,23), ranges (1-10) (default level1)\n"
	"  --shards N            array tasks (default 4), balanced by expected cost\n"
	"  --partition P         search partition      --gres G   (default gpu:1)\n"
	"  --verify P1[,P2...]   verify on each of these GPU partitions\n"
	"  --time T  --account A  --cpus-per-task N\n"
	"  --workdir DIR         shared directory for stores and logs (default ./kforge-slurm)\n"
	"  --compile-only        search without GPUs (compile and record; status not_run)\n"
	"  --arch ARCH           with --compile-only (default sm_90)\n"
	"  --pack-version V      dataset version to pack (default 0.1.0)\n"
	"  --no-pack  --no-site  skip packing / rendering in the final job\n"
	"  --dry-run             print the shards and scripts, submit nothing\n"
	"  --json                print the job ids as JSON\n";

struct opts {
	const char *problems, *partition, *gres, *time_limit, *account, *workdir, *arch;
	const char *verify, *pack_version;
	int shards, cpus, compile_only, no_pack, no_site, dry_run, json;
};

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

/* Splits "a,b,c" into plan->verify_partitions (pointers into copy). */
static int split_verify(char *copy, struct slurm_plan *plan)
{
	char *save = NULL, *t;

	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (plan->n_verify >= SLURM_MAX_VERIFY)
			return -1;
		plan->verify_partitions[plan->n_verify++] = t;
	}
	return 0;
}

static int build_shards(struct cli_ctx *ctx, const struct opts *o, char ***lists,
			struct buf *summary, struct buf *err)
{
	struct problem_list pl;
	struct shard_item *items = NULL;
	struct problem *probs = NULL;
	double *load = NULL;
	int *assign = NULL, i, rc = -1;

	problem_list_init(&pl);
	if (problem_list_resolve(&pl, ctx->root, o->problems, err))
		goto out;
	if (pl.n == 0) {
		kf_err(err, "no problems match '%s'", o->problems);
		goto out;
	}
	items = calloc((size_t)pl.n, sizeof(*items));
	probs = calloc((size_t)pl.n, sizeof(*probs));
	assign = calloc((size_t)pl.n, sizeof(*assign));
	load = calloc((size_t)o->shards, sizeof(*load));
	*lists = calloc((size_t)o->shards, sizeof(**lists));
	if (!items || !probs || !assign || !load || !*lists) {
		kf_err(err, "out of memory");
		goto out;
	}
	for (i = 0; i < pl.n; i++) {
		problem_init(&probs[i]);
		if (problem_load(&probs[i], pl.v[i].dir, err))
			goto out;
		items[i].id = probs[i].id;
		items[i].cost = shard_problem_cost(&probs[i]);
	}
	if (shard_assign(items, pl.n, o->shards, assign, load, err))
		goto out;
	for (int s = 0; s < o->shards; s++) {
		struct buf l = BUF_INIT;
		for (i = 0; i < pl.n; i++)
			if (assign[i] == s)
				buf_addf(&l, "%s%s", l.len ? "," : "", probs[i].id);
		if (!l.len) {
			buf_release(&l);
			kf_err(err, "%d shards for %d problems: some shards would be empty",
			       o->shards, pl.n);
			goto out;
		}
		buf_addf(summary, "shard %d: expected %.0f s: %s\n", s, load[s], l.s);
		(*lists)[s] = buf_detach(&l, NULL);
	}
	rc = 0;
out:
	if (probs)
		for (i = 0; i < pl.n; i++)
			problem_release(&probs[i]);
	free(probs);
	free(items);
	free(assign);
	free(load);
	problem_list_release(&pl);
	return rc;
}

static int submit(struct cli_ctx *ctx, struct opts *o, int argc, char **argv)
{
	struct slurm_plan plan;
	struct buf err = BUF_INIT, out = BUF_INIT, extra = BUF_INIT, summary = BUF_INIT;
	char exe[PATH_MAX], wd[PATH_MAX], **lists = NULL;
	char *verify_copy = NULL;
	ssize_t n;
	int i, rc = EXIT_FAIL;

	memset(&plan, 0, sizeof(plan));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return cli_fail(EXIT_FAIL, "cannot find the kforge binary's path");
	exe[n] = 0;
	if (mkdir_p(o->workdir, &err) || !realpath(o->workdir, wd)) {
		rc = cli_fail(EXIT_FAIL, "work directory %s: %s", o->workdir,
			      err.len ? err.s : strerror(errno));
		goto out;
	}
	for (i = 0; i < argc; i++) {
		if (extra.len)
			buf_addc(&extra, ' ');
		shell_quote(&extra, argv[i]);
	}
	if (build_shards(ctx, o, &lists, &summary, &err)) {
		rc = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	plan.kforge = exe;
	plan.root = ctx->root;
	plan.workdir = wd;
	plan.n_shards = o->shards;
	plan.shard_problems = (const char *const *)lists;
	plan.partition = o->partition;
	plan.gres = o->gres;
	plan.time_limit = o->time_limit;
	plan.account = o->account;
	plan.cpus_per_task = o->cpus;
	plan.compile_only = o->compile_only;
	plan.arch = o->arch;
	plan.search_args = extra.s;
	plan.pack_version = o->no_pack ? NULL : o->pack_version;
	plan.site = !o->no_site;
	if (o->verify) {
		verify_copy = strdup(o->verify);
		if (!verify_copy || split_verify(verify_copy, &plan)) {
			rc = cli_fail(EXIT_USAGE, "at most %d verify partitions", SLURM_MAX_VERIFY);
			goto out;
		}
	}
	if (o->dry_run) {
		if (slurm_render(&plan, &out, &err)) {
			rc = cli_fail(EXIT_USAGE, "%s", err.s);
			goto out;
		}
		fputs(summary.s, stdout);
		fputs(out.s, stdout);
		rc = EXIT_OK;
		goto out;
	}
	if (slurm_submit(&plan, &out, &err)) {
		rc = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	if (o->json) {
		printf("{\"workdir\": \"%s\"", wd);
		char *save = NULL, *t;
		for (t = strtok_r(out.s, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
			char *eq = strchr(t, '=');
			if (eq) {
				*eq = 0;
				printf(", \"%s\": \"%s\"", t, eq + 1);
			}
		}
		printf("}\n");
	} else {
		fputs(summary.s, stderr);
		printf("submitted: %s\nwork directory: %s (logs in logs/)\n", out.s, wd);
	}
	rc = EXIT_OK;
out:
	if (lists)
		for (i = 0; i < o->shards; i++)
			free(lists[i]);
	free(lists);
	free(verify_copy);
	buf_release(&err);
	buf_release(&out);
	buf_release(&extra);
	buf_release(&summary);
	return rc;
}

int cmd_slurm(int argc, char **argv, struct cli_ctx *ctx)
{
	enum { O_PROBLEMS = 256, O_SHARDS, O_PART, O_GRES, O_TIME, O_ACCOUNT, O_CPUS, O_VERIFY,
	       O_WORKDIR, O_COMPILE_ONLY, O_ARCH, O_PACKV, O_NOPACK, O_NOSITE, O_DRY, O_JSON };
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "problems", required_argument, NULL, O_PROBLEMS },
		{ "shards", required_argument, NULL, O_SHARDS },
		{ "partition", required_argument, NULL, O_PART },
		{ "gres", required_argument, NULL, O_GRES },
		{ "time", required_argument, NULL, O_TIME },
		{ "account", required_argument, NULL, O_ACCOUNT },
		{ "cpus-per-task", required_argument, NULL, O_CPUS },
		{ "verify", required_argument, NULL, O_VERIFY },
		{ "workdir", required_argument, NULL, O_WORKDIR },
		{ "compile-only", no_argument, NULL, O_COMPILE_ONLY },
		{ "arch", required_argument, NULL, O_ARCH },
		{ "pack-version", required_argument, NULL, O_PACKV },
		{ "no-pack", no_argument, NULL, O_NOPACK },
		{ "no-site", no_argument, NULL, O_NOSITE },
		{ "dry-run", no_argument, NULL, O_DRY },
		{ "json", no_argument, NULL, O_JSON },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { "level1", NULL, "gpu:1", NULL, NULL, "kforge-slurm", "sm_90",
			  NULL, "0.1.0", 4, 0, 0, 0, 0, 0, 0 };
	int c;

	if (argc < 2 || strcmp(argv[1], "submit")) {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
			return cli_help("slurm");
		return cli_fail(EXIT_USAGE, "slurm: expected 'submit' (see kforge slurm --help)");
	}
	argc--;
	argv++;
	while ((c = cli_getopt(argc, argv, "slurm", "h", opts)) != -1) {
		switch (c) {
		case -2: return EXIT_USAGE;
		case O_PROBLEMS: o.problems = optarg; break;
		case O_SHARDS:
			if (parse_int(optarg, 1, 10000, &o.shards))
				return cli_fail(EXIT_USAGE, "--shards: 1..10000");
			break;
		case O_PART: o.partition = optarg; break;
		case O_GRES: o.gres = *optarg ? optarg : NULL; break;
		case O_TIME: o.time_limit = optarg; break;
		case O_ACCOUNT: o.account = optarg; break;
		case O_CPUS:
			if (parse_int(optarg, 1, 4096, &o.cpus))
				return cli_fail(EXIT_USAGE, "--cpus-per-task: 1..4096");
			break;
		case O_VERIFY: o.verify = optarg; break;
		case O_WORKDIR: o.workdir = optarg; break;
		case O_COMPILE_ONLY: o.compile_only = 1; break;
		case O_ARCH: o.arch = optarg; break;
		case O_PACKV: o.pack_version = optarg; break;
		case O_NOPACK: o.no_pack = 1; break;
		case O_NOSITE: o.no_site = 1; break;
		case O_DRY: o.dry_run = 1; break;
		case O_JSON: o.json = 1; break;
		default: return cli_usage("slurm");
		}
	}
	return submit(ctx, &o, argc - optind, argv + optind);
}
