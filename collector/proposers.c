#include "proposers.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct {
	const char *name;
	proposer_open_fn fn;
} extra[8];
static int n_extra;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

int proposer_register(const char *name, proposer_open_fn fn)
{
	int ret = -1;
	pthread_mutex_lock(&reg_lock);
	if (n_extra < (int)(sizeof(extra) / sizeof(extra[0]))) {
		extra[n_extra].name = name;
		extra[n_extra].fn = fn;
		n_extra++;
		ret = 0;
	}
	pthread_mutex_unlock(&reg_lock);
	return ret;
}

const char *proposer_default_name(void)
{
	const char *u = getenv("KFORGE_LLM_BASE_URL");
	return u && *u ? "llm" : "builtin";
}

int proposer_open(struct proposer *p, const char *name, const struct proposer_options *o,
		  struct buf *err)
{
	proposer_open_fn fn = NULL;

	memset(p, 0, sizeof(*p));
	if (!name || !*name)
		name = proposer_default_name();
	pthread_mutex_lock(&reg_lock);
	for (int i = 0; i < n_extra; i++)
		if (!strcmp(extra[i].name, name))
			fn = extra[i].fn;
	pthread_mutex_unlock(&reg_lock);
	if (!fn) {
		if (!strcmp(name, "builtin"))
			fn = proposer_builtin_open;
		else if (!strcmp(name, "llm"))
			fn = proposer_llm_open;
		else
			return kf_err(err, "unknown proposer '%s' (known: builtin, llm)", name);
	}
	return fn(p, o, err);
}

void proposer_close(struct proposer *p)
{
	if (p->release)
		p->release(p->self);
	memset(p, 0, sizeof(*p));
}
