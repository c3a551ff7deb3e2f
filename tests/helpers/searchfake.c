/* Runs a search with a fake engine and a fake proposer, both
 * deterministic, so tests can kill it anywhere and compare stores.
 *   searchfake --db PATH --root DIR [--problems LIST] [--strategy S]
 *              [--rounds R] [--k K] [--m M] [--seed N] [--jobs J]
 *              [--delay-ms D] [--impls N] [--calls N] [--compile-only]
 *              [--resume] [--wall SECONDS] [--bad-utf8] [--proposer builtin]
 *              [--gpu-arch sm_XX] (the fake GPU's target, for the proposer's plans)
 * The fake engine writes kernels and evals rows as the real one would;
 * status and time derive from the candidate's hash. Exit 0 when the run
 * finished, 1 on error. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "problem/problem_list.h"
#include "collector/proposers.h"
#include "collector/search.h"
#include "core/json.h"
#include "core/sha256.h"
#include "store/store.h"
#include "engine/candidate.h"

static const char *db_path;
static int delay_ms;
static int compile_only;
static const char *fake_gpu = "Fake GPU";
static int bad_utf8;  /* ideas and responses carry bytes that are not UTF-8 */

static void nap(void)
{
	if (delay_ms > 0) {
		struct timespec ts = { delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
}

static int fake_eval(void *ctx, const char *problem_id, const char *cand, struct eval_outcome *o,
		     struct buf *err)
{
	struct store st;
	char eid[65], now[32] = "2026-01-01T00:00:00Z";
	struct buf key = BUF_INIT;
	json_t *row;
	int r = -1;
	unsigned h0, h1;

	(void)ctx;
	nap();
	candidate_hash(cand, strlen(cand), o->kernel_hash); /* as the engine: the canonical form */
	buf_addf(&key, "%s|%s|%s|collect-v3", o->kernel_hash, problem_id, fake_gpu);
	sha256_hex(key.s, key.len, eid);
	buf_release(&key);
	memcpy(o->eval_id, eid, sizeof(eid));
	sscanf(o->kernel_hash, "%2x%4x", &h0, &h1);
	snprintf(o->gpu_name, sizeof(o->gpu_name), "%s", compile_only ? "" : fake_gpu);
	if (strstr(cand, "launch block missing")) {
		snprintf(o->status, sizeof(o->status), "format_error");
		buf_adds(&o->detail, "3:1: expected a launch block");
	} else if (h0 % 10 == 0) {
		snprintf(o->status, sizeof(o->status), "compile_error");
		buf_adds(&o->detail, "1:1: error: fake compile error");
	} else if (compile_only) {
		snprintf(o->status, sizeof(o->status), "not_run");
	} else if (h0 % 10 == 1) {
		snprintf(o->status, sizeof(o->status), "incorrect");
		snprintf(o->failed_check, sizeof(o->failed_check), "output_mismatch");
		buf_adds(&o->detail, "max abs err 0.5 at index 7");
	} else {
		snprintf(o->status, sizeof(o->status), "correct");
		o->time_mean_ms = 1.0 + (double)(h1 % 1000) / 100.0;
		o->speedup_eager = 10.0 / o->time_mean_ms;
	}
	if (store_open(&st, db_path, 0, err) < 0)
		return -1;
	if (store_begin(&st, err) < 0)
		goto out;
	row = json_pack("{s:s,s:i,s:s}", "hash", o->kernel_hash, "bytes", (int)strlen(cand),
			"created_at", now);
	json_object_set_new(row, "source", json_string_nocheck(cand));
	r = store_insert(&st, "kernels", row, STORE_IGNORE, err);
	json_decref(row);
	row = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "id", eid, "kernel_hash", o->kernel_hash,
			"problem_id", problem_id, "gpu_name", o->gpu_name, "protocol", "collect-v3",
			"protocol_params", "{}", "status", o->status, "created_at", now);
	if (o->time_mean_ms > 0)
		json_object_set_new(row, "time_mean_ms", json_real(o->time_mean_ms));
	if (r >= 0)
		r = store_insert(&st, "evals", row, STORE_IGNORE, err);
	json_decref(row);
	row = json_pack("{s:s,s:s,s:s,s:f,s:s}", "problem_id", problem_id, "gpu_name", fake_gpu,
			"variant", "eager", "mean_ms", 10.0, "imported_at", now);
	if (r >= 0)
		r = store_insert(&st, "baselines", row, STORE_IGNORE, err);
	json_decref(row);
	if (r < 0 || store_commit(&st, err) < 0) {
		store_rollback(&st);
		r = -1;
	} else {
		r = 0;
	}
out:
	store_close(&st);
	return r;
}

static const char *fake_arch = "";

static const char *fake_arch_of(void *ctx)
{
	(void)ctx;
	return fake_arch;
}

static const char *fake_gpu_name(void *ctx)
{
	(void)ctx;
	return compile_only ? "" : fake_gpu;
}

/* ---- the fake proposer ---- */

static const char *idea_texts[] = {
	"Coalesce global loads with float4 vectorized access",
	"Tile the operands in shared memory",
	"Unroll the inner loop by 4",
	"Use warp shuffle reductions instead of shared memory",
	"Raise occupancy with a smaller thread block",
	"Prefetch the next tile with cp.async double buffering",
};

static void fake_rec(struct proposer_record *rec, const char *purpose, const char *pid,
		     int round, unsigned long long seed, int n)
{
	buf_adds(&rec->model, "fake-model");
	buf_addf(&rec->request, "{\"purpose\":\"%s\",\"problem\":\"%s\",\"round\":%d,\"seed\":%llu,\"n\":%d}",
		 purpose, pid, round, seed, n);
	rec->prompt_tokens = 100;
	rec->completion_tokens = 50;
	rec->latency_ms = 1.5;
}

static int fake_ideas(void *self, const struct idea_request *req, struct idea_list *out,
		      struct proposer_record *rec, struct buf *err)
{
	(void)self;
	(void)err;
	nap();
	fake_rec(rec, "ideas", req->problem->id, req->round, req->seed, req->k);
	for (int i = 0; i < req->k; i++) {
		struct idea *it = idea_list_add(out);
		unsigned pick = (unsigned)((req->seed >> (i * 3)) % 6);
		struct buf t = BUF_INIT;
		buf_addf(&t, "%s (variant %llu, after %d earlier ideas)%s", idea_texts[pick],
			 (req->seed >> 20) % 97, req->n_history, bad_utf8 ? " \xff\xfe\xc3" : "");
		it->text = buf_detach(&t, NULL);
		it->categories = pick == 2 ? 0 : 1u << (pick % 6);
		it->category_method = strdup("model");
		buf_addf(&rec->response, "- %s\n", it->text);
	}
	return 0;
}

static void fake_source(struct buf *b, const char *pid, const char *what, unsigned long long seed,
			int j)
{
	/* Some implementations repeat (seed % 3), so identical kernels occur. */
	buf_addf(b,
		 "// %s for %s, variant %llu\n"
		 "extern \"C\" __global__ void k(const float* x, float* y, long long n)\n"
		 "{ long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }\n"
		 "/*@launch\nk<<<ceil_div(n, 256), 256>>>(x, y, n);\n@*/\n",
		 what, pid, (seed + (unsigned long long)j) % 5);
}

static int fake_implement(void *self, const struct impl_request *req, struct proposal_list *out,
			  struct proposer_record *rec, struct buf *err)
{
	(void)self;
	(void)err;
	nap();
	fake_rec(rec, "implement", req->problem->id, req->round, req->seed, req->m);
	for (int j = 0; j < req->m; j++) {
		struct proposal *p = proposal_list_add(out);
		struct buf s = BUF_INIT;
		if ((req->seed + (unsigned long long)j) % 7 == 3) {
			p->format_error = strdup("the response held no ```cuda block");
			buf_adds(&rec->response, "(no code)\n");
			continue;
		}
		fake_source(&s, req->problem->id, req->idea->text, req->seed, j);
		buf_add(&rec->response, s.s, s.len);
		p->source = buf_detach(&s, NULL);
		p->template_id = strdup("fake_template");
		p->params = json_pack("{s:i,s:i}", "block", 128 << (j % 3), "n_seeds", req->n_seeds);
	}
	return 0;
}

static int fake_repair(void *self, const struct repair_request *req, struct proposal *out,
		       struct proposer_record *rec, struct buf *err)
{
	struct buf s = BUF_INIT, what = BUF_INIT;
	(void)self;
	(void)err;
	nap();
	fake_rec(rec, "repair", req->problem->id, req->turn, req->seed, 1);
	buf_addf(&what, "repair of %s (%s)", req->kernel->kernel_id, req->status);
	fake_source(&s, req->problem->id, what.s, req->seed, 0);
	buf_add(&rec->response, s.s, s.len);
	out->source = buf_detach(&s, NULL);
	buf_release(&what);
	return 0;
}

static int fake_open(struct proposer *p, const struct proposer_options *o, struct buf *err)
{
	(void)o;
	(void)err;
	p->name = "fake";
	p->ideas = fake_ideas;
	p->implement = fake_implement;
	p->repair = fake_repair;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },	 { "root", required_argument, NULL, 'r' },
		{ "problems", required_argument, NULL, 'p' }, { "strategy", required_argument, NULL, 's' },
		{ "rounds", required_argument, NULL, 'R' },	 { "k", required_argument, NULL, 'k' },
		{ "m", required_argument, NULL, 'm' },	 { "seed", required_argument, NULL, 'S' },
		{ "jobs", required_argument, NULL, 'j' },	 { "delay-ms", required_argument, NULL, 'D' },
		{ "impls", required_argument, NULL, 'I' },	 { "calls", required_argument, NULL, 'C' },
		{ "compile-only", no_argument, NULL, 'c' },	 { "resume", no_argument, NULL, 'X' },
		{ "wall", required_argument, NULL, 'W' },	 { "gpu-arch", required_argument, NULL, 'A' },
		{ "bad-utf8", no_argument, NULL, 'U' },	 { "proposer", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	struct search_config cfg;
	struct problem_list pl;
	struct proposer prop;
	struct proposer_options po = { 0 };
	struct search_backend be = { NULL, fake_eval, fake_gpu_name, fake_arch_of };
	struct search_result res;
	struct buf err = BUF_INIT;
	const char *root = ".", *problems = "level1";
	int c, jobs = 3, rc = 1, resume = 0;
	double wall = 0;
	json_t *stored = NULL;
	char run_id[64];

	search_config_default(&cfg);
	cfg.proposer = "fake";
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': db_path = optarg; break;
		case 'r': root = optarg; break;
		case 'p': problems = optarg; break;
		case 's': cfg.strategy = optarg; break;
		case 'R': cfg.rounds = atoi(optarg); break;
		case 'k': cfg.k = atoi(optarg); break;
		case 'm': cfg.m = atoi(optarg); break;
		case 'S': cfg.seed = strtoull(optarg, NULL, 10); break;
		case 'j': jobs = atoi(optarg); break;
		case 'D': delay_ms = atoi(optarg); break;
		case 'I': cfg.per_problem.impls = atoi(optarg); break;
		case 'C': cfg.per_problem.llm_calls = atoi(optarg); break;
		case 'c': compile_only = cfg.compile_only = 1; cfg.arch = "sm_90"; break;
		case 'X': resume = 1; break;
		case 'W': wall = atof(optarg); break;
		case 'A': fake_arch = optarg; break;
		case 'U': bad_utf8 = 1; break;
		case 'P': cfg.proposer = optarg; break;
		default: return 2;
		}
	}
	if (!db_path)
		return 2;
	problem_list_init(&pl);
	search_result_init(&res);
	if (resume) {
		int r = search_load_unfinished(db_path, root, &cfg, &pl, &stored, run_id, &err);
		if (r <= 0) {
			if (!r)
				buf_adds(&err, "no unfinished run");
			goto out;
		}
		compile_only = cfg.compile_only;
	} else if (problem_list_resolve(&pl, root, problems, &err) < 0) {
		goto out;
	}
	cfg.problems = &pl;
	cfg.total.wall_s = wall;
	proposer_register("fake", fake_open);
	if (proposer_open(&prop, cfg.proposer, &po, &err) < 0)
		goto out;
	if (search_run(&cfg, db_path, root, &prop, &be, jobs, NULL, NULL, &res, &err) < 0) {
		proposer_close(&prop);
		goto out;
	}
	proposer_close(&prop);
	printf("%s %s %d kernels %d correct%s\n", res.run_id, res.status, res.kernels, res.correct,
	       res.resumed ? " (resumed)" : "");
	if (res.errors.len)
		fprintf(stderr, "%s", res.errors.s);
	rc = strcmp(res.status, "finished") ? 1 : 0;
out:
	if (err.len)
		fprintf(stderr, "searchfake: %s\n", err.s);
	search_result_release(&res);
	problem_list_release(&pl);
	json_decref(stored);
	buf_release(&err);
	return rc;
}
