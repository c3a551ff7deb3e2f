/* The search's engine backend over engine.h. */
#include "search.h"

#include <stdlib.h>

static int eng_eval(void *ctx, const char *problem_id, const char *candidate,
		    struct eval_outcome *out, struct buf *err)
{
	struct eval_request req = { .problem_id = problem_id, .candidate = candidate };
	return engine_eval(ctx, &req, out, err);
}

static const char *eng_gpu(void *ctx)
{
	const char *g = engine_gpu_name(ctx);
	return g ? g : "";
}

static const char *eng_arch(void *ctx)
{
	const char *a = engine_arch(ctx);
	return a ? a : "";
}

static int eng_n_gpus(void *ctx)
{
	return engine_n_gpus(ctx);
}

int search_backend_engine(struct search_backend *be, const char *root, const char *db_path,
			  const struct search_config *cfg, struct buf *err)
{
	struct engine_config ec = { 0 };
	struct engine *e = NULL;
	int rc;

	ec.root = root;
	ec.arch = cfg->arch;
	ec.compile_only = cfg->compile_only;
	/* A run keeps the protocol it started with (collect-v1 runs resume as such). */
	if (eval_protocol_by_name(&ec.protocol, cfg->protocol) < 0)
		return kf_err(err, "unknown evaluation protocol '%s'", cfg->protocol);
	ec.protocol.max_timing_s = cfg->max_timing_s;
	ec.protocol.prune_vs_eager = cfg->prune_vs_eager;
	ec.profile = cfg->profile;
	ec.store_path = db_path;
	ec.gpu_model = cfg->gpu_model;
	if ((rc = engine_open(&e, &ec, err)) < 0)
		return rc;
	be->ctx = e;
	be->eval = eng_eval;
	be->gpu_name = eng_gpu;
	be->arch = eng_arch;
	be->n_gpus = eng_n_gpus;
	return 0;
}

void search_backend_engine_close(struct search_backend *be)
{
	if (be->ctx)
		engine_close(be->ctx);
	be->ctx = NULL;
}
