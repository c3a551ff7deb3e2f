#include "cmds.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/shard.h"
#include "collector/slurm.h"
#include "problem/problem_list.h"
#include "core/fsutil.h"
#include "problem/problem.h"
#include "core/xalloc.h"

static const char submit_args[] = "[options] [-- SEARCH-ARGS...]";

struct opts {
	const char *problems, *partition, *gres, *time_limit, *account, *workdir, *arch;
	const char *verify, *pack_version;
	int shards, cpus, compile_only, no_pack, no_site, dry_run, json;
};

/* DIR made absolute against the working directory, for a directory that
 * does not exist yet; 0 or -1 with errno. */
static int absolute_path(const char *dir, char *out, size_t cap)
{
	char cwd[PATH_MAX];
	int n;

	if (dir[0] == '/')
		n = snprintf(out, cap, "%s", dir);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(out, cap, "%s/%s", cwd, dir);
	else
		return -1;
	if (n < 0 || (size_t)n >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
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
	if ((rc = problem_list_resolve(&pl, ctx->root, o->problems, err)) < 0)
		goto out;
	rc = -1;
	if (pl.n == 0) {
		kf_err(err, "no problems match '%s'", o->problems);
		goto out;
	}
	items = xcalloc((size_t)pl.n, sizeof(*items));
	probs = calloc((size_t)pl.n, sizeof(*probs));
	assign = calloc((size_t)pl.n, sizeof(*assign));
	load = calloc((size_t)o->shards, sizeof(*load));
	*lists = xcalloc((size_t)o->shards, sizeof(**lists));
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
	if (o->dry_run) {
		/* Writes nothing: the scripts name the directory as it will be. */
		if (!realpath(o->workdir, wd) &&
		    absolute_path(o->workdir, wd, sizeof(wd)) < 0) {
			rc = cli_fail(EXIT_FAIL, "work directory %s: %s", o->workdir, strerror(errno));
			goto out;
		}
	} else if (mkdir_p(o->workdir, &err) || !realpath(o->workdir, wd)) {
		rc = cli_fail(EXIT_FAIL, "work directory %s: %s", o->workdir,
			      err.len ? err.s : strerror(errno));
		goto out;
	}
	for (i = 0; i < argc; i++) {
		if (extra.len)
			buf_addc(&extra, ' ');
		shell_quote(&extra, argv[i]);
	}
	if ((rc = build_shards(ctx, o, &lists, &summary, &err)) < 0) {
		rc = cli_fail(rc == PROBLEM_UNKNOWN ? EXIT_USAGE : EXIT_FAIL, "%s", err.s);
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
		cli_eputs(summary.s);
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

static int sub_submit(int argc, char **argv, struct cli_ctx *ctx)
{
	struct opts o = { "level1", NULL, "gpu:1", NULL, NULL, "kforge-slurm", "sm_90a",
			  NULL, "0.1.0", 4, 0, 0, 0, 0, 0, 0 };
	int n, rc;
	struct cli_opt opts[] = {
		OPT_STR("problems", 0, &o.problems, "LIST",
			"level1, ids (1,5,23), ranges (1-10) (default level1)"),
		OPT_INT("shards", 0, &o.shards, "N", 1, 10000,
			"array tasks (default 4), balanced by expected cost"),
		OPT_STR("partition", 0, &o.partition, "P", "search partition"),
		OPT_STR("gres", 0, &o.gres, "G", "the search tasks' --gres (default gpu:1; '' for none)"),
		OPT_STR("verify", 0, &o.verify, "P1[,P2...]", "verify on each of these GPU partitions"),
		OPT_STR("time", 0, &o.time_limit, "T", "the jobs' time limit (sbatch --time)"),
		OPT_STR("account", 0, &o.account, "A", "the jobs' account (sbatch --account)"),
		OPT_INT("cpus-per-task", 0, &o.cpus, "N", 1, 4096, "CPUs per search task"),
		OPT_STR("workdir", 0, &o.workdir, "DIR",
			"shared directory for stores and logs (default ./kforge-slurm)"),
		OPT_FLAG("compile-only", 0, &o.compile_only,
			 "search without GPUs (compile and record; status not_run)"),
		OPT_STR("arch", 0, &o.arch, "ARCH", "with --compile-only (default sm_90a)"),
		OPT_STR("pack-version", 0, &o.pack_version, "V", "dataset version to pack (default 0.1.0)"),
		OPT_FLAG("no-pack", 0, &o.no_pack, "skip packing in the final job"),
		OPT_FLAG("no-site", 0, &o.no_site, "skip rendering in the final job"),
		OPT_FLAG("dry-run", 0, &o.dry_run, "print the shards and scripts, submit nothing"),
		OPT_FLAG("json", 0, &o.json, "print the job ids as JSON"),
		OPT_END,
	};
	struct cli_spec spec = { "slurm submit", submit_args,
		"Writes sbatch scripts under --workdir and submits them (--dry-run prints\n"
		"them and writes nothing): a job array whose tasks each search one shard of\n"
		"the problems into a store of their own (requeueable: a restarted task\n"
		"resumes), then a job that merges the shards, verify jobs per GPU partition,\n"
		"and a job that merges, packs and renders.\n"
		"SEARCH-ARGS go to each task's 'kforge search'.\n", opts, NULL, 0, NULL, NULL };

	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return rc;
	if (o.gres && !*o.gres)
		o.gres = NULL;
	return submit(ctx, &o, n, argv + 1);
}

int cmd_slurm(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct cli_sub subs[] = {
		{ "submit", sub_submit, submit_args,
		  "shard the search over a job array, then merge, verify per GPU partition, pack, render" },
		{ NULL, NULL, NULL, NULL },
	};
	return cli_dispatch("slurm", "Runs searches and verification as Slurm jobs (docs/cluster.md).\n",
			    subs, argc, argv, ctx);
}
