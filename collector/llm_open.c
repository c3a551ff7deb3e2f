/* The LLM proposer's entry in the proposer registry (collector/proposers.h,
 * from the search): configuration from the environment and the config
 * file, prompts under ROOT/templates/prompts, the store's response cache.
 * Built only where the registry exists. */
#if defined(__has_include)
#if __has_include("collector/proposers.h")
#define KF_HAVE_PROPOSERS 1
#endif
#endif

#ifdef KF_HAVE_PROPOSERS
#include <stdlib.h>
#include <string.h>
#include "collector/llm.h"
#include "collector/proposers.h"
#include "core/xalloc.h"

int proposer_llm_open(struct proposer *p, const struct proposer_options *o, struct buf *err)
{
	struct llm_config cfg;
	struct llm_cache cache = { o->cache_ctx, o->cache_lookup };
	struct buf dir = BUF_INIT;
	int rc = -1;

	llm_config_init(&cfg);
	if (llm_config_load(&cfg, o->config_path, err) < 0)
		goto out;
	if (o->model && *o->model) {
		free(cfg.model);
		cfg.model = xstrdup(o->model);
	}
	if (!cfg.prompts_dir) {
		buf_setf(&dir, "%s/templates/prompts", o->root && *o->root ? o->root : ".");
		cfg.prompts_dir = buf_detach(&dir, NULL);
	}
	cfg.replay = o->replay;
	cfg.jitter_seed = o->seed;
	rc = llm_proposer_open(p, &cfg, o->cache_lookup ? &cache : NULL, err);
out:
	llm_config_release(&cfg);
	buf_release(&dir);
	return rc;
}
#else
/* Keeps the translation unit non-empty (ISO C). */
typedef int kf_llm_open_unused;
#endif
