/* The LLM proposer (struct proposer): builds a chat-completions request
 * from the prompt templates, answers it from the response cache or over
 * HTTP, accounts tokens against the budget, and parses the answer. */
#include "llm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "core/json.h"
#include "core/log.h"
#include "core/xalloc.h"

struct llm {
	struct llm_config cfg;
	struct llm_cache cache;
	int has_cache;
	struct llm_http *http;
	struct llm_prompts *prompts;
	pthread_mutex_t mu;
	long long tokens_used; /* under mu */
};

static json_t *message(const char *role, const struct buf *text)
{
	json_t *s = json_stringn(text->s, text->len);
	if (!s)
		s = json_stringn_nocheck(text->s, text->len);
	return json_pack("{s:s, s:o}", "role", role, "content", s);
}

/* The request body: deterministic bytes (sorted keys, compact). */
static void build_body(struct llm *l, const struct buf *sys, const struct buf *user, int n,
		       unsigned long long seed, struct buf *out)
{
	const struct llm_config *c = &l->cfg;
	json_t *o = json_pack("{s:s, s:[o, o]}", "model", c->model, "messages",
			      message("system", sys), message("user", user));
	if (c->temperature >= 0)
		json_object_set_new(o, "temperature", json_real(c->temperature));
	if (c->top_p >= 0)
		json_object_set_new(o, "top_p", json_real(c->top_p));
	if (c->max_tokens > 0)
		json_object_set_new(o, "max_tokens", json_integer(c->max_tokens));
	if (c->max_completion_tokens > 0)
		json_object_set_new(o, "max_completion_tokens",
				    json_integer(c->max_completion_tokens));
	if (c->reasoning_effort)
		json_object_set_new(o, "reasoning_effort", json_string(c->reasoning_effort));
	if (n > 1)
		json_object_set_new(o, "n", json_integer(n));
	/* distinct draws of one prompt get distinct requests (and cache keys) */
	if (c->send_seed)
		json_object_set_new(o, "seed",
				    json_integer((json_int_t)(seed & 0x7fffffffffffffffULL)));
	buf_reset(out);
	json_add_compact(out, o);
	json_decref(o);
}

/* One exchange. Returns 0 with *texts (one string per choice), -1 with
 * err, or LLM_RC_BUDGET. rec is filled in every case. */
static int call(struct llm *l, const struct buf *user, int n, unsigned long long seed,
		struct proposer_record *rec, json_t **texts, struct buf *err)
{
	struct buf sys = BUF_INIT, perr = BUF_INIT;
	struct llm_usage u;
	char sha[65];
	int rc = -1, got = 0;

	*texts = NULL;
	buf_setf(&rec->model, "%s", l->cfg.model);
	pthread_mutex_lock(&l->mu);
	if (l->cfg.token_budget > 0 && l->tokens_used >= l->cfg.token_budget) {
		pthread_mutex_unlock(&l->mu);
		buf_setf(&rec->error, "token budget of %lld spent", l->cfg.token_budget);
		kf_err(err, "%s", rec->error.s);
		return LLM_RC_BUDGET;
	}
	pthread_mutex_unlock(&l->mu);
	if (llm_prompt_system(l->prompts, &sys, err) < 0)
		goto out;
	build_body(l, &sys, user, n, seed, &rec->request);
	/* prompts quote stored ideas and kernels (an older store's too) */
	llm_redact(&rec->request, l->cfg.api_key);
	llm_request_sha256(rec->request.s, rec->request.len, sha);
	if (l->has_cache) {
		buf_reset(&rec->response);
		got = l->cache.lookup(l->cache.ctx, sha, &rec->response);
		if (got < 0) {
			kf_err(err, "response cache: %s", rec->response.s);
			buf_reset(&rec->response);
			buf_setf(&rec->error, "%s", err->s);
			goto out;
		}
		if (got > 0) {
			llm_redact(&rec->response, l->cfg.api_key);
			rec->cached = 1;
			rec->http_status = 200;
			rec->latency_ms = 0;
			rec->retries = 0;
		}
	}
	if (!got) {
		struct llm_http_result res;
		if (l->cfg.replay || !l->http) {
			buf_setf(&rec->error, "replay: no recorded response for request %.16s", sha);
			kf_err(err, "%s", rec->error.s);
			goto out;
		}
		llm_http_result_init(&res);
		rc = llm_http_post(l->http, rec->request.s, rec->request.len, &res);
		buf_reset(&rec->response);
		buf_add(&rec->response, res.body.s, res.body.len);
		rec->http_status = res.http_status;
		rec->retries = res.retries;
		rec->latency_ms = res.latency_ms;
		buf_reset(&rec->attempts);
		if (json_array_size(res.attempts))
			json_add_compact(&rec->attempts, res.attempts);
		if (rc < 0) {
			buf_setf(&rec->error, "%s", res.error.s);
			kf_err(err, "LLM request failed: %s", res.error.s);
		}
		llm_http_result_release(&res);
		rc = -1;
		if (rec->error.len)
			goto out;
	}
	*texts = llm_parse_completion(rec->response.s, rec->response.len, &u, &perr);
	/* decoded text: whatever encoding hid the key is undone now */
	llm_redact_texts(*texts, l->cfg.api_key);
	rec->prompt_tokens = u.prompt_tokens;
	rec->completion_tokens = u.completion_tokens;
	rec->reasoning_tokens = u.reasoning_tokens;
	if (u.invalid)
		log_warn("LLM response: token usage out of range (0..%lld or not an integer); "
			 "recorded as unknown", LLM_MAX_CALL_TOKENS);
	pthread_mutex_lock(&l->mu);
	l->tokens_used += (u.prompt_tokens > 0 ? u.prompt_tokens : 0) +
			  (u.completion_tokens > 0 ? u.completion_tokens : 0);
	pthread_mutex_unlock(&l->mu);
	if (!*texts) {
		buf_setf(&rec->error, "%s", perr.s);
		kf_err(err, "LLM response: %s", perr.s);
		goto out;
	}
	rc = 0;
out:
	llm_redact(&rec->error, l->cfg.api_key);
	llm_redact(err, l->cfg.api_key);
	buf_release(&sys);
	buf_release(&perr);
	return rc;
}

static int llm_ideas(void *self, const struct idea_request *req, struct idea_list *out,
		     struct proposer_record *rec, struct buf *err)
{
	struct llm *l = self;
	struct buf user = BUF_INIT;
	json_t *texts = NULL, *t;
	size_t i;
	int rc, k = req->k > 0 ? req->k : 1;

	rc = llm_prompt_ideas(l->prompts, req, &user, err);
	if (rc == 0)
		rc = call(l, &user, 1, req->seed, rec, &texts, err);
	if (rc == 0) {
		json_array_foreach(texts, i, t)
			llm_parse_ideas(json_string_value(t), k - out->n, out);
		if (out->n == 0)
			buf_setf(&rec->error, "no ideas could be read from the response");
	}
	json_decref(texts);
	buf_release(&user);
	return rc;
}

static int llm_implement(void *self, const struct impl_request *req, struct proposal_list *out,
			 struct proposer_record *rec, struct buf *err)
{
	struct llm *l = self;
	struct buf user = BUF_INIT;
	json_t *texts = NULL, *t;
	size_t i;
	int m = req->m > 0 ? req->m : 1, n = l->cfg.use_n && m > 1 ? m : 1;
	int rc = llm_prompt_implement(l->prompts, req, n > 1 ? 1 : m, &user, err);

	if (rc == 0)
		rc = call(l, &user, n, req->seed, rec, &texts, err);
	if (rc == 0) {
		int made = 0;
		json_array_foreach(texts, i, t) {
			int before = out->n;
			if (made >= m)
				break;
			llm_parse_candidates(json_string_value(t), m - made, out);
			made += out->n - before;
		}
	}
	json_decref(texts);
	buf_release(&user);
	return rc;
}

static int llm_repair(void *self, const struct repair_request *req, struct proposal *out,
		      struct proposer_record *rec, struct buf *err)
{
	struct llm *l = self;
	struct buf user = BUF_INIT;
	json_t *texts = NULL;
	int rc = llm_prompt_repair(l->prompts, req, &user, err);

	memset(out, 0, sizeof(*out));
	if (rc == 0)
		rc = call(l, &user, 1, req->seed, rec, &texts, err);
	if (rc == 0) {
		struct proposal_list pl;
		proposal_list_init(&pl);
		llm_parse_candidates(json_string_value(json_array_get(texts, 0)), 1, &pl);
		*out = pl.v[0];
		pl.n = 0; /* moved */
		proposal_list_release(&pl);
	}
	json_decref(texts);
	buf_release(&user);
	return rc;
}

static void llm_release(void *self)
{
	struct llm *l = self;
	if (!l)
		return;
	llm_http_stop(l->http);
	llm_prompts_close(l->prompts);
	llm_config_release(&l->cfg);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

int llm_proposer_open(struct proposer *p, const struct llm_config *cfg,
		      const struct llm_cache *cache, struct buf *err)
{
	struct llm *l;

	if (llm_config_check(cfg, err) < 0)
		return -1;
	l = xcalloc(1, sizeof(*l));
	llm_config_copy(&l->cfg, cfg);
	pthread_mutex_init(&l->mu, NULL);
	if (cache && cache->lookup) {
		l->cache = *cache;
		l->has_cache = 1;
	}
	if (llm_prompts_open(&l->prompts, l->cfg.prompts_dir, err) < 0 ||
	    (!l->cfg.replay && llm_http_start(&l->http, &l->cfg, err) < 0)) {
		llm_release(l);
		return -1;
	}
	memset(p, 0, sizeof(*p));
	p->name = "llm";
	p->self = l;
	p->ideas = llm_ideas;
	p->implement = llm_implement;
	p->repair = llm_repair;
	p->release = llm_release;
	return 0;
}

long long llm_proposer_tokens_used(const struct proposer *p)
{
	struct llm *l = p->self;
	long long n;
	pthread_mutex_lock(&l->mu);
	n = l->tokens_used;
	pthread_mutex_unlock(&l->mu);
	return n;
}

void llm_proposer_set_tokens_used(struct proposer *p, long long n)
{
	struct llm *l = p->self;
	pthread_mutex_lock(&l->mu);
	l->tokens_used = n;
	pthread_mutex_unlock(&l->mu);
}
