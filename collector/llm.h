/* The LLM proposer: a struct proposer over an OpenAI-compatible
 * /v1/chat/completions endpoint (hosted APIs, vLLM, SGLang, llama.cpp,
 * Ollama).
 *
 *   llm_config.c  configuration from the environment and a JSON file
 *   llm_http.c    libcurl multi on one thread: many requests in flight,
 *                 timeouts, retries with back-off, size caps
 *   llm_prompt.c  request bodies from templates/prompts/NAME.mustache
 *   llm_parse.c   responses -> ideas / candidate files
 *   llm_redact.c  the key, in every encoding, out of what servers send
 *   llm.c         the proposer (ideas, implement, repair), token budget,
 *                 response cache
 *
 * The API key lives only in struct llm_config (memory, wiped on release)
 * and in the Authorization header libcurl sends; it is never put into a
 * request body, record, log line or error text.
 *
 * Response cache and replay: every request body is built deterministically
 * (sorted keys, compact), and its SHA-256 (llm_request_sha256: the hex
 * digest of exactly the bytes in proposer_record.request) is the cache
 * key. The caller stores it with the llm_calls row (request_sha256) and
 * answers lookups from those rows. With cfg.replay set, a miss is an error
 * and no network is touched. */
#ifndef KF_LLM_H
#define KF_LLM_H

#include <stddef.h>
#include "core/buf.h"
#include "collector/proposer.h"

/* Returned by the proposer's ideas/implement/repair when the token budget
 * is spent (err says so). Other failures return -1. */
#define LLM_RC_BUDGET (-2)

/* Hard limits on what comes from outside. */
#define LLM_MAX_CONFIG_BYTES (64u << 10)
#define LLM_MAX_RESPONSE_CAP (64u << 20)   /* max_response_bytes may not exceed it */
#define LLM_MAX_CANDIDATE_BYTES (256u << 10) /* one candidate file from a response */
#define LLM_MAX_IDEA_BYTES 4000            /* one idea's text (longer is cut) */
#define LLM_PROMPT_MAX_HISTORY 200         /* earlier ideas shown (the most recent) */
/* One call's reported token count (prompt, completion or reasoning); a
 * count outside 0..this is recorded as unknown (NULL). */
#define LLM_MAX_CALL_TOKENS 1000000000LL

struct llm_config {
	char *base_url;           /* e.g. "http://127.0.0.1:8000/v1"; owned */
	char *model;              /* owned */
	char *api_key;            /* owned, memory only; NULL: no Authorization header */
	char *prompts_dir;        /* templates/prompts; owned; NULL: "templates/prompts" */
	int concurrency;          /* requests in flight at once (1..256), default 8 */
	double timeout_s;         /* per attempt, default 600 */
	double connect_timeout_s; /* default 10 */
	int retries;              /* extra attempts after the first, default 4 */
	double backoff_base_s;    /* first back-off, default 1; doubles per retry */
	double backoff_max_s;     /* cap on one back-off (Retry-After included), default 60 */
	size_t max_response_bytes; /* default 8 MiB */
	long low_speed_bytes;     /* once the body has begun, abort an attempt slower than
				     this (bytes/s) ... */
	long low_speed_time_s;    /* ... over this long; defaults 1 and 60 */
	double temperature;       /* < 0: not sent (default) */
	double top_p;             /* < 0: not sent (default) */
	long max_tokens;          /* 0: not sent */
	long max_completion_tokens; /* 0: not sent (reasoning models use this) */
	char *reasoning_effort;   /* NULL: not sent; "low", "medium", "high"; owned */
	long long token_budget;   /* prompt + completion tokens over all calls; 0: none */
	int use_n;                /* implement: ask for m choices with "n" instead of m fences */
	int send_seed;            /* send the call's seed (default 1; distinct draws of one
				     prompt then have distinct requests and cache keys) */
	double usd_per_mtok_prompt;     /* prices for cost accounting; 0: unknown */
	double usd_per_mtok_completion;
	int replay;               /* cache only: a miss is an error, no network */
	unsigned long long jitter_seed; /* seeds back-off jitter (0: from the clock) */
};

/* Defaults (no URL, no model, no key). */
void llm_config_init(struct llm_config *c);
/* Wipes the key and frees everything; c can be initialised again. */
void llm_config_release(struct llm_config *c);
/* Layers, later wins: defaults < config file < environment.
 * path: the config file (--llm-config); NULL uses $KFORGE_LLM_CONFIG if set,
 * else no file. Environment: KFORGE_LLM_BASE_URL, KFORGE_LLM_MODEL,
 * KFORGE_LLM_API_KEY (else OPENAI_API_KEY). The file may not hold a key
 * (it names one through "api_key_env" instead). 0 or -1 with err. */
int llm_config_load(struct llm_config *c, const char *path, struct buf *err);
/* Reads one JSON config text into c (used by llm_config_load; for tests). */
int llm_config_parse(struct llm_config *c, const char *text, size_t len, const char *name,
		     struct buf *err);
/* Deep copy (key included). */
void llm_config_copy(struct llm_config *dst, const struct llm_config *src);
/* Checks that a usable endpoint is configured (URL, model, ranges). */
int llm_config_check(const struct llm_config *c, struct buf *err);
/* The model a new LLM run uses (the config file at `path`, then
 * KFORGE_LLM_MODEL) into out; empty when none is set. The search records
 * it in the run's configuration, so resuming and replaying use it
 * whatever the environment says then. */
int llm_config_model(const char *path, struct buf *out, struct buf *err);
/* Cost of one call in USD from its token counts and the configured
 * prices; 0 when prices or counts are unknown. */
double llm_cost_usd(const struct llm_config *c, long long prompt_tokens,
		    long long completion_tokens);
/* 1 when an LLM endpoint is configured in the environment (KFORGE_LLM_BASE_URL). */
int llm_env_configured(void);

/* The response cache. lookup fills response with the raw response body
 * recorded for that request and returns 1; returns 0 on a miss, -1 on an
 * error (with response holding the message). Only successful calls
 * (HTTP 200 with a response) should be answered from the cache. */
struct llm_cache {
	void *ctx;
	int (*lookup)(void *ctx, const char *request_sha256, struct buf *response);
};

/* Hex SHA-256 of a request body: the cache key. */
void llm_request_sha256(const char *body, size_t len, char hex[65]);

/* Opens the LLM proposer into *p (p->name "llm"). cfg is copied; cache
 * may be NULL (no cache; replay then fails every call). Starts the HTTP
 * thread unless cfg->replay. p->release stops it and frees everything.
 * Calls are thread-safe and may run concurrently from many threads. */
int llm_proposer_open(struct proposer *p, const struct llm_config *cfg,
		      const struct llm_cache *cache, struct buf *err);
/* Tokens (prompt + completion) counted so far, cached calls included. */
long long llm_proposer_tokens_used(const struct proposer *p);
/* Resume: start the count at n (tokens of calls recorded earlier). */
void llm_proposer_set_tokens_used(struct proposer *p, long long n);

/* ---- lower layers, exposed for tests and tools ---- */

/* Back-off before retry number `attempt` (1-based): base * 2^(attempt-1),
 * capped at max, with "equal jitter" (half fixed, half scaled by
 * jitter01 in [0,1)). A server's Retry-After (seconds, < 0 when absent)
 * raises it to at least that, still capped at max. Seconds. */
double llm_backoff_delay(int attempt, double base, double max, double retry_after,
			 double jitter01);

/* One HTTP exchange as the caller sees it, after all retries. */
struct llm_http_result {
	int http_status;          /* last status, 0 when none arrived */
	struct buf body;          /* last response body (capped) */
	int retries;              /* attempts made minus one */
	double latency_ms;        /* first attempt start to the end */
	struct buf error;         /* empty on success (2xx) */
	json_t *attempts;         /* every attempt: [{n, http_status, class, error,
				     start_ms, ms}]; see llm_http.c */
};
void llm_http_result_init(struct llm_http_result *r);
void llm_http_result_release(struct llm_http_result *r);

struct llm_http;
/* Starts the transfer thread. cfg must outlive the handle. */
int llm_http_start(struct llm_http **h, const struct llm_config *cfg, struct buf *err);
/* Posts body to URL/chat/completions and waits for the outcome; retries
 * per cfg. Thread-safe. Returns 0 when a 2xx response arrived, -1
 * otherwise (res->error says why; res holds the last status and body). */
int llm_http_post(struct llm_http *h, const char *body, size_t len, struct llm_http_result *res);
void llm_http_stop(struct llm_http *h);
/* Cancels every call, now and later, in every client of the process:
 * transfers in flight end within a second, back-off waits end, and new
 * calls fail at once, each with the error LLM_CANCELLED. Async-signal-safe
 * (a SIGTERM handler calls it). */
void llm_cancel(void);
int llm_cancel_requested(void);
#define LLM_CANCELLED "cancelled"

/* Replaces every occurrence of key (4 bytes or more) in b with
 * "[REDACTED]": plain, JSON-escaped (\uXXXX, any case, any mix),
 * URL-encoded (%XX), and for keys of 12 bytes or more its base64 (either
 * alphabet, any of the three alignments). Returns how many were replaced
 * (llm_redact.c). */
size_t llm_redact(struct buf *b, const char *key);
/* The same on each string of a JSON array (decoded model texts). */
void llm_redact_texts(json_t *texts, const char *key);

/* Prompts: renders templates/prompts/NAME.mustache into message text. */
struct llm_prompts;
int llm_prompts_open(struct llm_prompts **pp, const char *dir, struct buf *err);
void llm_prompts_close(struct llm_prompts *p);
int llm_prompt_ideas(struct llm_prompts *p, const struct idea_request *req, struct buf *out,
		     struct buf *err);
int llm_prompt_implement(struct llm_prompts *p, const struct impl_request *req, int m,
			 struct buf *out, struct buf *err);
int llm_prompt_repair(struct llm_prompts *p, const struct repair_request *req, struct buf *out,
		      struct buf *err);
/* The system message shared by all requests. */
int llm_prompt_system(struct llm_prompts *p, struct buf *out, struct buf *err);

/* Parsing. A chat-completions response body -> the text of each choice
 * (json array of strings, new ref) and token usage (-1 when absent or
 * out of range: see LLM_MAX_CALL_TOKENS).
 * -1 with err when the body is not a chat completion. */
struct llm_usage {
	long long prompt_tokens, completion_tokens, reasoning_tokens;
	int invalid; /* a count was present but not a number in 0..LLM_MAX_CALL_TOKENS */
};
json_t *llm_parse_completion(const char *body, size_t len, struct llm_usage *usage,
			     struct buf *err);
/* Model text -> up to k ideas. Labels the model gave ("[memory, async]"
 * before the text, or "Categories: ..." in it, or a ```json list) give
 * method "model"; otherwise idea_classify_keywords and method "keyword".
 * Returns the number added (0 when none could be read). */
int llm_parse_ideas(const char *text, int k, struct idea_list *out);
/* Model text -> candidate files: each ```cuda fence (the whole file), with
 * an immediately following ```launch fence appended as the launch block.
 * Adds up to max proposals; when none is found adds one with source NULL
 * and format_error set. Returns the number of proposals with a source. */
int llm_parse_candidates(const char *text, int max, struct proposal_list *out);

#endif
