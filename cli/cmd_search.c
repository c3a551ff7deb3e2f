#include "cmds.h"
#include "collector/problem_list.h"
#include "collector/proposers.h"
#include "collector/search.h"
#include "core/json.h"
#include "core/log.h"

/* The LLM proposer's own token budget continues from the run's calls. */
#if __has_include("collector/llm_open.c")
#include "collector/llm.h"
#define HAVE_LLM 1
#endif

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char usage_search[] =
	"kforge search [--problems LIST] [options]\n"
	"\n"
	"Runs a kernel search over problems, or resumes the store's unfinished run\n"
	"when no --problems is given. The same options and seed make the same run:\n"
	"running it again continues it (nothing lost, nothing done twice).\n"
	"'kforge search --replay' alone replays the store's latest run as a new run\n"
	"whose proposer calls are all served from the recorded ones (no network).\n"
	"\n"
	"  --problems LIST      level1 | 1,5,23 | 1-10 | level2/3-7 | Softmax | all\n"
	"  --strategy S         branch (default) or revise\n"
	"  --rounds N           rounds after round 0 (revise: turns) (3)\n"
	"  -k, --ideas N        ideas per round (4)\n"
	"  -m, --impls N        implementations per idea (2)\n"
	"  --top-k N            best correct kernels of a round that seed the next (3)\n"
	"  --bank N             good earlier kernels added to the seeds (2)\n"
	"  --no-reference       do not evaluate the reference kernel as round 0\n"
	"  --seed N             (1)\n"
	"  --proposer P         llm or builtin (default: llm when KFORGE_LLM_BASE_URL is set)\n"
	"  --model NAME         the LLM's model (else KFORGE_LLM_MODEL)\n"
	"  --llm-config PATH    LLM client configuration file\n"
	"  --replay             serve every proposer call from the store's recorded calls\n"
	"  --compile-only       no GPU: compile and record, status not_run\n"
	"  --arch SM            target with --compile-only (sm_90)\n"
	"  --jobs N             problems searched at once (4)\n"
	"  --max-timing SEC     stop a candidate's timed trials after SEC seconds of kernel\n"
	"                       time (at least 10 trials; 1; 0 = all 100)\n"
	"  --prune-vs-eager N   stop them after 3 trials when the mean is over N times PyTorch\n"
	"                       eager's on this GPU (3; 0 = never); the verifier times at length\n"
	"  --max-ideas N, --max-impls N, --max-calls N, --max-tokens N, --max-time SEC\n"
	"                       budgets per problem (0 = none)\n"
	"  --total-ideas N, --total-impls N, --total-calls N, --total-tokens N, --total-time SEC\n"
	"                       budgets for the whole run\n"
	"  --json               print the result as JSON\n";

enum {
	O_STRATEGY = 256, O_ROUNDS, O_TOPK, O_BANK, O_NOREF, O_SEED, O_PROPOSER, O_MODEL, O_LLMCFG,
	O_REPLAY, O_CONLY, O_ARCH, O_JOBS, O_JSON, O_PROBLEMS,
	O_MAX_IDEAS, O_MAX_IMPLS, O_MAX_CALLS, O_MAX_TOKENS, O_MAX_TIME,
	O_TOT_IDEAS, O_TOT_IMPLS, O_TOT_CALLS, O_TOT_TOKENS, O_TOT_TIME, O_MAX_TIMING, O_PRUNE,
};

static void on_signal(int sig)
{
	search_request_stop();
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

static int parse_int(const char *s, long long *out)
{
	char *end;
	double d = strtod(s, &end);
	if (end == s || *end || d < 0 || d > 9e15)
		return -1;
	*out = (long long)d;
	return 0;
}

int cmd_search(int argc, char **argv, struct cli_ctx *ctx)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "problems", required_argument, NULL, O_PROBLEMS },
		{ "strategy", required_argument, NULL, O_STRATEGY },
		{ "rounds", required_argument, NULL, O_ROUNDS },
		{ "ideas", required_argument, NULL, 'k' },
		{ "impls", required_argument, NULL, 'm' },
		{ "top-k", required_argument, NULL, O_TOPK },
		{ "bank", required_argument, NULL, O_BANK },
		{ "no-reference", no_argument, NULL, O_NOREF },
		{ "seed", required_argument, NULL, O_SEED },
		{ "proposer", required_argument, NULL, O_PROPOSER },
		{ "model", required_argument, NULL, O_MODEL },
		{ "llm-config", required_argument, NULL, O_LLMCFG },
		{ "replay", no_argument, NULL, O_REPLAY },
		{ "compile-only", no_argument, NULL, O_CONLY },
		{ "arch", required_argument, NULL, O_ARCH },
		{ "jobs", required_argument, NULL, O_JOBS },
		{ "json", no_argument, NULL, O_JSON },
		{ "max-ideas", required_argument, NULL, O_MAX_IDEAS },
		{ "max-impls", required_argument, NULL, O_MAX_IMPLS },
		{ "max-calls", required_argument, NULL, O_MAX_CALLS },
		{ "max-tokens", required_argument, NULL, O_MAX_TOKENS },
		{ "max-time", required_argument, NULL, O_MAX_TIME },
		{ "total-ideas", required_argument, NULL, O_TOT_IDEAS },
		{ "total-impls", required_argument, NULL, O_TOT_IMPLS },
		{ "total-calls", required_argument, NULL, O_TOT_CALLS },
		{ "total-tokens", required_argument, NULL, O_TOT_TOKENS },
		{ "total-time", required_argument, NULL, O_TOT_TIME },
		{ "max-timing", required_argument, NULL, O_MAX_TIMING },
		{ "prune-vs-eager", required_argument, NULL, O_PRUNE },
		{ NULL, 0, NULL, 0 },
	};
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
	int c, jobs = 4, as_json = 0, rc = EXIT_FAIL, have_prop = 0, have_be = 0;
	long long v = 0;

	search_config_default(&cfg);
	problem_list_init(&pl);
	search_result_init(&res);
	while ((c = cli_getopt(argc, argv, "search", "hk:m:", opts)) != -1) {
		if (c == -2)
			return EXIT_USAGE;
		if (optarg && c != O_PROBLEMS && c != O_STRATEGY && c != O_PROPOSER && c != O_MODEL &&
		    c != O_LLMCFG && c != O_ARCH && parse_int(optarg, &v) < 0)
			return cli_fail(EXIT_USAGE, "search: '%s' is not a number", optarg);
		switch (c) {
		case O_PROBLEMS: problems = optarg; break;
		case O_STRATEGY: cfg.strategy = optarg; break;
		case O_ROUNDS: cfg.rounds = (int)v; break;
		case 'k': cfg.k = (int)v; break;
		case 'm': cfg.m = (int)v; break;
		case O_TOPK: cfg.top_k = (int)v; break;
		case O_BANK: cfg.bank = (int)v; break;
		case O_NOREF: cfg.reference = 0; break;
		case O_SEED: cfg.seed = (unsigned long long)v; break;
		case O_PROPOSER: cfg.proposer = optarg; break;
		case O_MODEL: cfg.model = optarg; break;
		case O_LLMCFG: llm_config = optarg; break;
		case O_REPLAY: cfg.replay = 1; break;
		case O_CONLY: cfg.compile_only = 1; break;
		case O_ARCH: cfg.arch = optarg; break;
		case O_JOBS: jobs = (int)v; break;
		case O_JSON: as_json = 1; break;
		case O_MAX_IDEAS: cfg.per_problem.ideas = (int)v; break;
		case O_MAX_IMPLS: cfg.per_problem.impls = (int)v; break;
		case O_MAX_CALLS: cfg.per_problem.llm_calls = (int)v; break;
		case O_MAX_TOKENS: cfg.per_problem.tokens = v; break;
		case O_MAX_TIME: cfg.per_problem.wall_s = (double)v; break;
		case O_TOT_IDEAS: cfg.total.ideas = (int)v; break;
		case O_TOT_IMPLS: cfg.total.impls = (int)v; break;
		case O_TOT_CALLS: cfg.total.llm_calls = (int)v; break;
		case O_TOT_TOKENS: cfg.total.tokens = v; break;
		case O_TOT_TIME: cfg.total.wall_s = (double)v; break;
		case O_MAX_TIMING: cfg.max_timing_s = (double)v; break;
		case O_PRUNE: cfg.prune_vs_eager = (double)v; break;
		}
	}
	if (optind < argc)
		return cli_fail(EXIT_USAGE, "search: unexpected argument '%s' (problems go in --problems)",
				argv[optind]);
	if (strcmp(cfg.strategy, "branch") && strcmp(cfg.strategy, "revise"))
		return cli_fail(EXIT_USAGE, "search: unknown strategy '%s' (branch or revise)", cfg.strategy);
	if (cfg.rounds < 0 || cfg.k < 1 || cfg.m < 1 || cfg.rounds > 10000 || cfg.k > 1000 || cfg.m > 1000)
		return cli_fail(EXIT_USAGE, "search: --rounds, --ideas and --impls out of range");

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
		if (problem_list_resolve(&pl, ctx->root, problems, &err) < 0) {
			rc = cli_fail(EXIT_USAGE, "%s", err.s);
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
	if (cfg.compile_only && !cfg.arch)
		cfg.arch = "sm_90";
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
	if (search_backend_engine(&be, ctx->root, ctx->db_path, &cfg, &err) < 0) {
		rc = cli_fail(EXIT_FAIL, "search: %s%s", err.s,
			      cfg.compile_only ? "" : " (without a GPU, use --compile-only)");
		goto out;
	}
	have_be = 1;

	g.tty = log_is_tty() && log_get_level() >= LOG_INFO;
	g.n = pl.n;
	g.round_seen = calloc((size_t)pl.n, sizeof(int));
	g.state_seen = calloc((size_t)pl.n, sizeof(char *));
	if (!g.round_seen || !g.state_seen)
		abort();
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
		fprintf(stderr, "%s", res.errors.s);
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
