/* Compiles started ahead of their evaluation (engine_prefetch): a caller
 * that evaluates one kernel after another (the verifier) names the next
 * while the GPU runs the current one, so the GPU does not wait for NVRTC. */
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "engine/candidate.h"
#include "engine/compile_pool.h"

/* The oldest prefetch makes room for a new one: its compile is waited for
 * and dropped (bounded memory; a caller names one or two ahead). */
static void drop_oldest(struct engine *e)
{
	struct compile_result cr;
	struct buf err = BUF_INIT;

	compile_result_init(&cr);
	compile_pool_wait(e->pool, e->pf[0].job, &cr, &err);
	compile_result_release(&cr);
	buf_release(&err);
	free(e->pf[0].src);
	memmove(&e->pf[0], &e->pf[1], (size_t)(--e->n_pf) * sizeof(e->pf[0]));
}

void engine_prefetch(struct engine *e, const char *candidate)
{
	struct candidate c;
	struct buf msg = BUF_INIT;

	if (!e || !candidate)
		return;
	candidate_init(&c);
	/* A candidate that does not parse is left to engine_eval to judge. */
	if (candidate_parse(&c, candidate, strlen(candidate), &msg) == 0) {
		int have = 0;

		pthread_mutex_lock(&e->pf_mu);
		for (int i = 0; i < e->n_pf && !have; i++)
			have = !strcmp(e->pf[i].src, c.device_src);
		if (!have) {
			if (e->n_pf == ENG_PREFETCH)
				drop_oldest(e);
			e->pf[e->n_pf].src = xstrdup(c.device_src);
			e->pf[e->n_pf++].job = compile_pool_submit(e->pool, c.device_src);
		}
		pthread_mutex_unlock(&e->pf_mu);
	}
	candidate_release(&c);
	buf_release(&msg);
}

struct compile_job *eng_prefetched(struct engine *e, const char *device_src)
{
	struct compile_job *job = NULL;

	pthread_mutex_lock(&e->pf_mu);
	for (int i = 0; i < e->n_pf && !job; i++)
		if (!strcmp(e->pf[i].src, device_src)) {
			job = e->pf[i].job;
			free(e->pf[i].src);
			memmove(&e->pf[i], &e->pf[i + 1], (size_t)(e->n_pf - i - 1) * sizeof(e->pf[0]));
			e->n_pf--;
		}
	pthread_mutex_unlock(&e->pf_mu);
	return job;
}

/* Before compile_pool_close, which frees the jobs themselves. */
void eng_prefetch_release(struct engine *e)
{
	for (int i = 0; i < e->n_pf; i++)
		free(e->pf[i].src);
	e->n_pf = 0;
}
