/* Choosing a proposer by name. Each proposer module defines an opener
 * with the signature below; the registry references them weakly, so a
 * build without one (the built-in proposer and the LLM client are
 * written separately) still links and says clearly what is missing.
 *
 * The response cache: the search wires `cache_lookup` to the store's
 * llm_calls rows by request_sha256 (sha256 of the full request text as
 * recorded in proposer_record.request). With `replay`, a cache miss is an
 * error and no network is touched. */
#ifndef KF_PROPOSERS_H
#define KF_PROPOSERS_H

#include "collector/proposer.h"

struct proposer_options {
	const char *root;           /* data root (templates/prompts) */
	const char *model;          /* NULL: from the environment / config */
	const char *config_path;    /* LLM config file, may be NULL */
	int replay;                 /* cache only, no network */
	unsigned long long seed;
	/* Response cache: 1 and the stored response in out on a hit, 0 on a
	 * miss, -1 on error. Called from any thread. */
	int (*cache_lookup)(void *ctx, const char *request_sha256, struct buf *out);
	void *cache_ctx;
};

typedef int (*proposer_open_fn)(struct proposer *p, const struct proposer_options *o,
				struct buf *err);

/* Openers the proposer modules define (weak references here). */
int proposer_builtin_open(struct proposer *p, const struct proposer_options *o, struct buf *err);
int proposer_llm_open(struct proposer *p, const struct proposer_options *o, struct buf *err);

/* "builtin" or "llm"; NULL or "" picks llm when KFORGE_LLM_BASE_URL is
 * set, else builtin. 0, or -1 with err (unknown name, module not built,
 * configuration error). */
int proposer_open(struct proposer *p, const char *name, const struct proposer_options *o,
		  struct buf *err);
/* The name proposer_open would pick for NULL. */
const char *proposer_default_name(void);
void proposer_close(struct proposer *p);

/* Extra openers (tests register fakes). At most 8. */
int proposer_register(const char *name, proposer_open_fn fn);

#endif
