#include "cmds.h"
#include "problem/problem_list.h"
#include "collector/proposers.h"
#include "collector/search.h"
#include "core/cudadrv.h"
#include "core/json.h"
#include "core/log.h"

/* The LLM proposer's own token budget continues from the run's calls. */
#if __has_include("collector/llm_open.c")
#include "collector/llm.h"
#include "core/xalloc.h"
#define HAVE_LLM 1
#endif

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char search_doc[] =
	"Runs a kernel search over problems, or resumes the store's unfinished run\n"
	"when no --problems is given. The same options and seed make the same run:\n"
	"running it again continues it (nothing lost, nothing done twice).\n"
	"'kforge search --replay' alone replays the store's latest run as a new run\n"
	"whose proposer calls are all served from the recorded ones (no network).\n";

static const char *const strategies[] = { "branch", "revise", NULL };

static void on_signal(int sig)
{
	search_request_stop();
	llm_cancel(); /* calls in flight end now, recorded as cancelled */
	signal(sig, SIG_DFL); /* a second one ends the process */
}

/* ---- progress ---- */

struct prog {
	int tty, lines;
	double last;
	int *round_seen;
	const char **state_seen;
	int n;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pline(struct buf *b, const struct search_pstat *p)
{
	buf_addf(b, "%-32s %-8s round %d  %3d kernels  %3d correct", p->problem_id, p->state,
		 p->round, p->kernels, p->correct);
	if (p->best_speedup > 0)
		buf_addf(b, "  best %.2fx", p->best_speedup);
	else if (p->best_ms > 0)
		buf_addf(b, "  best %.3f ms", p->best_ms);
}

static void progress(void *ctx, const struct search_status *st)
{
	struct prog *g = ctx;
	struct buf b = BUF_INIT;
	double t = now_s();

	if (g->tty) {
		int shown = 0;
		if (t - g->last < 0.1 && st->done < st->n)
			return;
		g->last = t;
		if (g->lines)
			buf_addf(&b, "\r\033[%dA", g->lines);
		else
			buf_adds(&b, "\r");
		for (int i = 0; i < st->n && shown < 20; i++) {
			if (st->n > 20 && strcmp(st->p[i].state, "running"))
				continue;
			buf_adds(&b, "\033[K");
			pline(&b, &st->p[i]);
			buf_adds(&b, "\n");
			shown++;
		}
		buf_addf(&b, "\033[Ktotal: %d/%d problems done, %d kernels, %d correct, %d proposer calls, %.0f s\n",
			 st->done, st->n, st->kernels, st->correct, st->llm_calls, st->elapsed_s);
		/* The block may shrink (fewer running problems): clear what was below. */
		buf_adds(&b, "\033[J");
		fputs(b.s, stderr);
		fflush(stderr);
		g->lines = shown + 1;
	} else {
		for (int i = 0; i < st->n && i < g->n; i++) {
			if (g->round_seen[i] == st->p[i].round && g->state_seen[i] == st->p[i].state)
				continue;
			g->round_seen[i] = st->p[i].round;
			g->state_seen[i] = st->p[i].state;
			if (!strcmp(st->p[i].state, "waiting"))
				continue;
			buf_reset(&b);
			pline(&b, &st->p[i]);
			log_info("%s", b.s);
		}
	}
	buf_release(&b);
}

/* The endpoint without any user:password@ part (logs may end up in files). */
static const char *url_for_log(const char *u)
{
	static char out[512];
	const char *at, *scheme;

	if (!u || !*u)
		return "(from the config file)";
	scheme = strstr(u, "://");
	at = strchr(u, '@');
	if (scheme && at && at > scheme && !memchr(scheme + 3, '/', (size_t)(at - scheme - 3)))
		snprintf(out, sizeof(out), "%.*s://%s", (int)(scheme - u), u, at + 1);
	else
		snprintf(out, sizeof(out), "%s", u);
	return out;
}

/* The engine opens the CUDA driver and fails without it or a GPU (its
 * message says which); as for eval, that is exit 3, not a failed run. */
static int no_gpu(const struct search_config *cfg)
{
	struct cudadrv d;
	struct buf err = BUF_INIT;
	int r;

	if (cfg->compile_only)
		return 0;
	r = cudadrv_load(&d, &err) < 0;
	if (!r)
		cudadrv_release(&d);
	buf_release(&err);
	return r;
}

int cmd_search(int argc, char **argv, struct cli_ctx *ctx)
{
	struct search_config cfg;
	struct problem_list pl;
	struct proposer prop = { 0 };
	struct proposer_options po = { 0 };
	struct search_backend be = { 0 };
	struct search_result res;
	struct search_cache *cache = NULL;
	struct prog g = { 0 };
	struct buf err = BUF_INIT, model = BUF_INIT;
	json_t *stored = NULL;
	const char *problems = NULL, *llm_config = NULL;
	char run_id[64] = "";
	int jobs = 0, as_json = 0, rc = EXIT_FAIL, have_prop = 0, have_be = 0, n, check = 0;
	struct cli_opt opts[] = {
		OPT_STR("problems", 0, &problems, "LIST", "level1 | 1,5,23 | 1-10 | level2/3-7 | Softmax | 23_Softmax.py | all"),
		OPT_CHOICE("strategy", 0, &cfg.strategy, strategies, "branch (default) or revise"),
		OPT_INT("rounds", 0, &cfg.rounds, "N", 0, 10000, "rounds after round 0 (revise: turns) (3)"),
		OPT_INT("ideas", 'k', &cfg.k, "N", 1, 1000, "ideas per round (4)"),
		OPT_INT("impls", 'm', &cfg.m, "N", 1, 1000, "implementations per idea (2)"),
		OPT_INT("top-k", 0, &cfg.top_k, "N", 0, 1000,
			"best correct kernels of a round that seed the next (3)"),
		OPT_INT("bank", 0, &cfg.bank, "N", 0, 1000, "good earlier kernels added to the seeds (2)"),
		OPT_SET("no-reference", 0, &cfg.reference, 0,
			"do not evaluate the reference kernel as round 0"),
		OPT_ULLONG("seed", 0, &cfg.seed, "N", 0, 9007199254740992.0, "(1)"),
		OPT_STR("proposer", 0, &cfg.proposer, "P",
			"llm or builtin (default: llm when KFORGE_LLM_BASE_URL is set)"),
		OPT_STR("model", 0, &cfg.model, "NAME", "the LLM's model (else KFORGE_LLM_MODEL)"),
		OPT_STR("llm-config", 0, &llm_config, "PATH", "LLM client configuration file"),
		OPT_FLAG("replay", 0, &cfg.replay,
			 "serve every proposer call from the store's recorded calls"),
		OPT_FLAG("compile-only", 0, &cfg.compile_only, "no GPU: compile and record, status not_run"),
		OPT_STR("arch", 0, &cfg.arch, "SM", "target with --compile-only (sm_90)"),
		OPT_STR("gpu-model", 0, &cfg.gpu_model, "NAME",
			"run on the GPUs of this model only (as `kforge gpu-info --models` names "
			"it; else KFORGE_GPU_MODEL; default: GPU 0's model)"),
		OPT_INT("jobs", 0, &jobs, "N", 1, 1024,
			"problems searched at once (4, or twice the GPUs where that is more)"),
		OPT_DOUBLE("max-timing", 0, &cfg.max_timing_s, "SEC", 0, 86400,
			   "stop a candidate's timed trials after SEC seconds of kernel time "
			   "(at least 10 trials; 1; 0 = all 100)"),
		OPT_FLAG("profile-feedback", 0, &cfg.profile_feedback,
			 "LLM prompts carry the seed kernels' profiles, short (implies profiling)"),
		OPT_DOUBLE("prune-vs-eager", 0, &cfg.prune_vs_eager, "F", 0, 1e6,
			   "stop them after 3 trials when the mean is over F times PyTorch eager's "
			   "on this GPU (3; 0 = never); the verifier times at length"),
		OPT_FLAG("profile", 0, &cfg.profile,
			 "a CUPTI profile of one extra launch block of each correct candidate, apart "
			 "from its timing (recorded; docs/engine.md \"Profiles\")"),
		OPT_INT("max-ideas", 0, &cfg.per_problem.ideas, "N", 0, 1e9, "ideas per problem (0 = no limit)"),
		OPT_INT("max-impls", 0, &cfg.per_problem.impls, "N", 0, 1e9,
			"implementations per problem (0 = no limit)"),
		OPT_INT("max-calls", 0, &cfg.per_problem.llm_calls, "N", 0, 1e9,
			"proposer calls per problem (0 = no limit)"),
		OPT_LLONG("max-tokens", 0, &cfg.per_problem.tokens, "N", 0, 1e15,
			  "tokens per problem (0 = no limit)"),
		OPT_DOUBLE("max-time", 0, &cfg.per_problem.wall_s, "SEC", 0, 1e9,
			   "seconds per problem (0 = no limit)"),
		OPT_INT("total-ideas", 0, &cfg.total.ideas, "N", 0, 1e9, "ideas in the whole run (0 = no limit)"),
		OPT_INT("total-impls", 0, &cfg.total.impls, "N", 0, 1e9,
			"implementations in the whole run (0 = no limit)"),
		OPT_INT("total-calls", 0, &cfg.total.llm_calls, "N", 0, 1e9,
			"proposer calls in the whole run (0 = no limit)"),
		OPT_LLONG("total-tokens", 0, &cfg.total.tokens, "N", 0, 1e15,
			  "tokens in the whole run (0 = no limit)"),
		OPT_DOUBLE("total-time", 0, &cfg.total.wall_s, "SEC", 0, 1e9,
			   "seconds for the whole run (0 = no limit)"),
		OPT_FLAG("json", 0, &as_json, "print the result as JSON"),
		OPT_FLAG("check", 0, &check, "check the options, PROBLEMS and (without --compile-only) "
			 "the GPU, then exit writing nothing (make dataset runs it first)"),
		OPT_END,
	};
	struct cli_spec spec = { "search", "[--problems LIST] [options]", search_doc, opts,
		"Exit: 0 finished; 1 stopped or some problems failed (run it again to resume);\n"
		"3 no GPU or CUDA driver (use --compile-only).\n", 0, NULL, NULL };

	search_config_default(&cfg);
	problem_list_init(&pl);
	search_result_init(&res);
	if ((rc = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		goto out;
	rc = EXIT_FAIL;
	if (n > 0) {
		rc = cli_fail(EXIT_USAGE, "search: unexpected argument '%s' (problems go in --problems)",
			      argv[1]);
		goto out;
	}

	if (!problems) {
		int replay = cfg.replay;
		int r = replay ? search_load_latest(ctx->db_path, ctx->root, &cfg, &pl, &stored, run_id, &err)
			       : search_load_unfinished(ctx->db_path, ctx->root, &cfg, &pl, &stored, run_id, &err);
		if (r < 0) {
			rc = cli_fail(EXIT_FAIL, "%s", err.s);
			goto out;
		}
		if (r == 0) {
			rc = cli_fail(EXIT_USAGE, "search: no %s run in %s; give --problems (see kforge search --help)",
				      replay ? "recorded" : "unfinished", ctx->db_path);
			goto out;
		}
		if (replay) {
			cfg.replay = 1;
			log_info("replaying run %s from its recorded proposer calls", run_id);
		} else {
			log_info("resuming run %s", run_id);
		}
	} else {
		if (!cfg.proposer)
			cfg.proposer = proposer_default_name();
		if ((rc = problem_list_resolve(&pl, ctx->root, problems, &err)) < 0) {
			rc = cli_fail(rc == PROBLEM_UNKNOWN ? EXIT_USAGE : EXIT_FAIL, "%s", err.s);
			goto out;
		}
	}
#ifdef HAVE_LLM
	if (problems && !strcmp(cfg.proposer, "llm") && !cfg.model) {
		/* A new run records its model: resuming or replaying it must not
		 * depend on the environment of the day. */
		if (llm_config_model(llm_config, &model, &err) < 0) {
			rc = cli_fail(EXIT_FAIL, "search: %s", err.s);
			goto out;
		}
		if (model.len)
			cfg.model = model.s;
	}
#endif
	if (check) {
		char gpu[128];
		int r = cfg.compile_only ? 0 : engine_gpu_model(cfg.gpu_model, gpu, sizeof(gpu), &err);
		if (r == KF_ENOMODEL) {
			rc = cli_fail(EXIT_USAGE, "search: %s", err.s);
			goto out;
		}
		if (r < 0) {
			rc = cli_fail(EXIT_NOGPU, "search: %s (without a GPU, use --compile-only)", err.s);
			goto out;
		}
		printf("search: ok: %d problem(s), proposer %s, %s\n", pl.n,
		       cfg.proposer ? cfg.proposer : "(default)",
		       cfg.compile_only ? "compile only" : "GPU found");
		rc = EXIT_OK;
		goto out;
	}
	if (cfg.profile_feedback)
		cfg.profile = 1; /* feedback needs the profiles */
	if (cfg.compile_only && !cfg.arch)
		cfg.arch = "sm_90a"; /* what a search on an H100 or H200 compiles for */
	cfg.problems = &pl;
	{
		char id[64];
		search_run_id(&cfg, id);
		if (problems) {
			char other[64];
			json_t *oc = NULL;
			struct buf e2 = BUF_INIT;
			if (search_find_unfinished(ctx->db_path, other, &oc, &e2) == 1 && strcmp(other, id))
				log_warn("run %s in %s is unfinished; 'kforge search' with no --problems resumes it",
					 other, ctx->db_path);
			json_decref(oc);
			buf_release(&e2);
		}
		memcpy(run_id, id, sizeof(id));
	}

	if (!strcmp(cfg.proposer, "builtin"))
		log_info("proposer: built-in%s", getenv("KFORGE_LLM_BASE_URL") && *getenv("KFORGE_LLM_BASE_URL")
							  ? "" : " (no LLM endpoint configured: KFORGE_LLM_BASE_URL is not set)");
	else if (!strcmp(cfg.proposer, "llm"))
		log_info("proposer: LLM at %s, model %s%s", url_for_log(getenv("KFORGE_LLM_BASE_URL")),
			 cfg.model ? cfg.model : getenv("KFORGE_LLM_MODEL") ? getenv("KFORGE_LLM_MODEL") : "(from the config file)",
			 cfg.replay ? " (replay: recorded calls only)" : "");
	if (search_cache_open(&cache, ctx->db_path, run_id, cfg.replay, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	po.root = ctx->root;
	po.model = cfg.model;
	po.config_path = llm_config;
	po.replay = cfg.replay;
	po.seed = cfg.seed;
	po.cache_lookup = search_cache_lookup;
	po.cache_ctx = cache;
	if (proposer_open(&prop, cfg.proposer, &po, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "search: %s", err.s);
		goto out;
	}
	have_prop = 1;
#ifdef HAVE_LLM
	if (prop.name && !strcmp(prop.name, "llm"))
		llm_proposer_set_tokens_used(&prop, search_tokens_used(ctx->db_path, run_id));
#endif
	if ((rc = search_backend_engine(&be, ctx->root, ctx->db_path, &cfg, &err)) < 0) {
		if (rc == KF_ENOMODEL)
			rc = cli_fail(EXIT_USAGE, "search: %s", err.s);
		else
			rc = cli_fail(no_gpu(&cfg) ? EXIT_NOGPU : EXIT_FAIL, "search: %s%s", err.s,
				      cfg.compile_only ? "" : " (without a GPU, use --compile-only)");
		goto out;
	}
	rc = EXIT_FAIL;
	have_be = 1;
	/* A problem's round 0 is one evaluation: on a host of many GPUs, 4
	 * problems at once would leave most of them idle. */
	if (!jobs) {
		int gpus = be.n_gpus ? be.n_gpus(be.ctx) : 0;
		jobs = gpus > 2 ? 2 * gpus : 4;
	}

	g.tty = log_is_tty() && log_get_level() >= LOG_INFO;
	g.n = pl.n;
	g.round_seen = xcalloc((size_t)pl.n, sizeof(int));
	g.state_seen = xcalloc((size_t)pl.n, sizeof(char *));
	for (int i = 0; i < pl.n; i++)
		g.round_seen[i] = -1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (search_run(&cfg, ctx->db_path, ctx->root, &prop, &be, jobs, progress, &g, &res, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "search: %s", err.s);
		goto out;
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (res.errors.len)
		cli_eputs(res.errors.s);
	if (as_json) {
		json_t *j = json_pack("{s:s,s:s,s:b,s:i,s:i,s:i}", "run_id", res.run_id, "status",
				      res.status, "resumed", res.resumed, "kernels", res.kernels,
				      "correct", res.correct, "failed_problems", res.failed_problems);
		struct buf o = BUF_INIT;
		json_add_pretty(&o, j);
		printf("%s\n", o.s);
		buf_release(&o);
		json_decref(j);
	} else {
		printf("run %s %s: %d problems, %d kernels evaluated, %d correct%s\n", res.run_id,
		       res.status, pl.n, res.kernels, res.correct, res.resumed ? " (resumed)" : "");
	}
	if (!strcmp(res.status, "finished"))
		rc = EXIT_OK;
	else if (!strcmp(res.status, "stopped"))
		rc = cli_fail(EXIT_FAIL, "search stopped; run 'kforge search' again to resume run %s", res.run_id);
	else
		rc = cli_fail(EXIT_FAIL, "%d problems failed; run 'kforge search' again to retry them",
			      res.failed_problems);
out:
	if (have_be)
		search_backend_engine_close(&be);
	if (have_prop)
		proposer_close(&prop);
	search_cache_close(cache);
	search_result_release(&res);
	problem_list_release(&pl);
	json_decref(stored);
	free(g.round_seen);
	free(g.state_seen);
	buf_release(&err);
	buf_release(&model);
	return rc;
}
