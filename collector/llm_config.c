/* LLM configuration: defaults < JSON config file < environment. The key
 * comes only from the environment and stays in memory. */
#include "llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/json.h"
#include "core/sha256.h"
#include "core/xalloc.h"

void llm_config_init(struct llm_config *c)
{
	memset(c, 0, sizeof(*c));
	c->concurrency = 8;
	c->timeout_s = 600;
	c->connect_timeout_s = 10;
	c->retries = 4;
	c->backoff_base_s = 1;
	c->backoff_max_s = 60;
	c->max_response_bytes = 8u << 20;
	c->low_speed_bytes = 1;
	c->low_speed_time_s = 60;
	c->temperature = -1;
	c->top_p = -1;
	c->send_seed = 1;
}

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void llm_config_release(struct llm_config *c)
{
	free(c->base_url);
	free(c->model);
	wipe_free(c->api_key);
	free(c->prompts_dir);
	free(c->reasoning_effort);
	llm_config_init(c);
}

static char *dup_or_null(const char *s)
{
	char *d;
	if (!s)
		return NULL;
	d = xstrdup(s);
	return d;
}

static void set_str(char **dst, const char *s)
{
	char *d = dup_or_null(s);
	free(*dst);
	*dst = d;
}

static void set_key(struct llm_config *c, const char *key)
{
	wipe_free(c->api_key);
	c->api_key = key && *key ? dup_or_null(key) : NULL;
}

void llm_config_copy(struct llm_config *dst, const struct llm_config *src)
{
	*dst = *src;
	dst->base_url = dup_or_null(src->base_url);
	dst->model = dup_or_null(src->model);
	dst->api_key = dup_or_null(src->api_key);
	dst->prompts_dir = dup_or_null(src->prompts_dir);
	dst->reasoning_effort = dup_or_null(src->reasoning_effort);
}

/* Number field within [lo, hi]; absent leaves *out alone. */
static int num_field(const json_t *o, const char *key, double lo, double hi, double *out,
		     const char *name, struct buf *err)
{
	json_t *v = json_object_get(o, key);
	double d;
	if (!v)
		return 0;
	if (!json_is_number(v))
		return kf_err(err, "%s: \"%s\" must be a number", name, key);
	d = json_number_value(v);
	if (!(d >= lo && d <= hi))
		return kf_err(err, "%s: \"%s\" = %g is outside [%g, %g]", name, key, d, lo, hi);
	*out = d;
	return 0;
}

static int int_field(const json_t *o, const char *key, double lo, double hi, long long *out,
		     const char *name, struct buf *err)
{
	json_t *v = json_object_get(o, key);
	double d = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v))
		return kf_err(err, "%s: \"%s\" must be an integer", name, key);
	if (num_field(o, key, lo, hi, &d, name, err) < 0)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

static int str_field(const json_t *o, const char *key, char **out, const char *name,
		     struct buf *err)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (json_is_null(v)) {
		set_str(out, NULL);
		return 0;
	}
	if (!json_is_string(v) || json_string_length(v) > 4096)
		return kf_err(err, "%s: \"%s\" must be a string (at most 4096 bytes)", name, key);
	set_str(out, json_string_value(v));
	return 0;
}

static int bool_field(const json_t *o, const char *key, int *out, const char *name,
		      struct buf *err)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return kf_err(err, "%s: \"%s\" must be true or false", name, key);
	*out = json_is_true(v);
	return 0;
}

static const char *const known_keys[] = {
	"base_url", "model", "api_key_env", "prompts_dir", "concurrency", "timeout_s",
	"connect_timeout_s", "retries", "backoff_base_s", "backoff_max_s",
	"max_response_bytes", "low_speed_bytes", "low_speed_time_s", "temperature", "top_p",
	"max_tokens", "max_completion_tokens", "reasoning_effort", "token_budget", "use_n",
	"send_seed", "usd_per_mtok_prompt", "usd_per_mtok_completion",
	NULL
};

int llm_config_parse(struct llm_config *c, const char *text, size_t len, const char *name,
		     struct buf *err)
{
	struct buf e2 = BUF_INIT;
	json_t *o = json_parse_bounded(text, len, LLM_MAX_CONFIG_BYTES, &e2);
	const char *k;
	json_t *v;
	long long ll;
	int rc = -1;

	if (!o) {
		kf_err(err, "%s: %s", name, e2.s);
		goto out;
	}
	if (!json_is_object(o)) {
		kf_err(err, "%s: the LLM config must be a JSON object", name);
		goto out;
	}
	json_object_foreach(o, k, v) {
		int known = 0;
		for (int i = 0; known_keys[i]; i++)
			known |= !strcmp(k, known_keys[i]);
		if (!strcmp(k, "api_key")) {
			kf_err(err, "%s: keys do not belong in config files; set KFORGE_LLM_API_KEY "
				    "or name a variable with \"api_key_env\"", name);
			goto out;
		}
		if (!known) {
			kf_err(err, "%s: unknown setting \"%s\"", name, k);
			goto out;
		}
	}
	if (str_field(o, "base_url", &c->base_url, name, err) < 0 ||
	    str_field(o, "model", &c->model, name, err) < 0 ||
	    str_field(o, "prompts_dir", &c->prompts_dir, name, err) < 0 ||
	    str_field(o, "reasoning_effort", &c->reasoning_effort, name, err) < 0)
		goto out;
	if (json_object_get(o, "api_key_env")) {
		const char *var = jget_str(o, "api_key_env", NULL);
		if (!var || !*var) {
			kf_err(err, "%s: \"api_key_env\" must name an environment variable", name);
			goto out;
		}
		set_key(c, getenv(var));
	}
	ll = c->concurrency;
	if (int_field(o, "concurrency", 1, 256, &ll, name, err) < 0)
		goto out;
	c->concurrency = (int)ll;
	ll = c->retries;
	if (int_field(o, "retries", 0, 100, &ll, name, err) < 0)
		goto out;
	c->retries = (int)ll;
	ll = (long long)c->max_response_bytes;
	if (int_field(o, "max_response_bytes", 1024, LLM_MAX_RESPONSE_CAP, &ll, name, err) < 0)
		goto out;
	c->max_response_bytes = (size_t)ll;
	ll = c->low_speed_bytes;
	if (int_field(o, "low_speed_bytes", 0, 1e9, &ll, name, err) < 0)
		goto out;
	c->low_speed_bytes = (long)ll;
	ll = c->low_speed_time_s;
	if (int_field(o, "low_speed_time_s", 1, 86400, &ll, name, err) < 0)
		goto out;
	c->low_speed_time_s = (long)ll;
	ll = c->max_tokens;
	if (int_field(o, "max_tokens", 0, 1e9, &ll, name, err) < 0)
		goto out;
	c->max_tokens = (long)ll;
	ll = c->max_completion_tokens;
	if (int_field(o, "max_completion_tokens", 0, 1e9, &ll, name, err) < 0)
		goto out;
	c->max_completion_tokens = (long)ll;
	if (int_field(o, "token_budget", 0, 9e18, &c->token_budget, name, err) < 0)
		goto out;
	if (num_field(o, "timeout_s", 0.001, 86400, &c->timeout_s, name, err) < 0 ||
	    num_field(o, "connect_timeout_s", 0.001, 3600, &c->connect_timeout_s, name, err) < 0 ||
	    num_field(o, "backoff_base_s", 0, 3600, &c->backoff_base_s, name, err) < 0 ||
	    num_field(o, "backoff_max_s", 0, 86400, &c->backoff_max_s, name, err) < 0 ||
	    num_field(o, "temperature", -1, 2, &c->temperature, name, err) < 0 ||
	    num_field(o, "top_p", -1, 1, &c->top_p, name, err) < 0)
		goto out;
	if (bool_field(o, "use_n", &c->use_n, name, err) < 0 ||
	    bool_field(o, "send_seed", &c->send_seed, name, err) < 0 ||
	    num_field(o, "usd_per_mtok_prompt", 0, 1e6, &c->usd_per_mtok_prompt, name, err) < 0 ||
	    num_field(o, "usd_per_mtok_completion", 0, 1e6, &c->usd_per_mtok_completion, name,
		      err) < 0)
		goto out;
	rc = 0;
out:
	json_decref(o);
	buf_release(&e2);
	return rc;
}

int llm_config_load(struct llm_config *c, const char *path, struct buf *err)
{
	const char *env;

	if (!path || !*path) {
		path = getenv("KFORGE_LLM_CONFIG");
		if (path && !*path)
			path = NULL;
	}
	if (path) {
		struct buf text = BUF_INIT;
		int rc = buf_read_file(&text, path, LLM_MAX_CONFIG_BYTES, err);
		if (rc == 0)
			rc = llm_config_parse(c, text.s, text.len, path, err);
		buf_release(&text);
		if (rc < 0)
			return -1;
	}
	if ((env = getenv("KFORGE_LLM_BASE_URL")) && *env)
		set_str(&c->base_url, env);
	if ((env = getenv("KFORGE_LLM_MODEL")) && *env)
		set_str(&c->model, env);
	if ((env = getenv("KFORGE_LLM_API_KEY")) && *env)
		set_key(c, env);
	else if (!c->api_key && (env = getenv("OPENAI_API_KEY")) && *env)
		set_key(c, env);
	return 0;
}

double llm_cost_usd(const struct llm_config *c, long long prompt_tokens,
		    long long completion_tokens)
{
	double usd = 0;
	if (prompt_tokens > 0)
		usd += (double)prompt_tokens * c->usd_per_mtok_prompt / 1e6;
	if (completion_tokens > 0)
		usd += (double)completion_tokens * c->usd_per_mtok_completion / 1e6;
	return usd;
}

int llm_env_configured(void)
{
	const char *u = getenv("KFORGE_LLM_BASE_URL");
	return u && *u;
}

int llm_config_check(const struct llm_config *c, struct buf *err)
{
	if (!c->replay) {
		if (!c->base_url || !*c->base_url)
			return kf_err(err, "no LLM endpoint: set KFORGE_LLM_BASE_URL "
					   "(e.g. http://127.0.0.1:8000/v1) or base_url in the config");
		if (strncmp(c->base_url, "http://", 7) && strncmp(c->base_url, "https://", 8))
			return kf_err(err, "LLM base URL must start with http:// or https://");
	}
	if (!c->model || !*c->model)
		return kf_err(err, "no LLM model: set KFORGE_LLM_MODEL or model in the config");
	if (strlen(c->model) > 256)
		return kf_err(err, "LLM model name is longer than 256 bytes");
	if (c->concurrency < 1 || c->concurrency > 256)
		return kf_err(err, "LLM concurrency must be within 1..256");
	if (c->max_response_bytes < 1024 || c->max_response_bytes > LLM_MAX_RESPONSE_CAP)
		return kf_err(err, "LLM max_response_bytes must be within 1 KiB..64 MiB");
	if (c->reasoning_effort && strlen(c->reasoning_effort) > 32)
		return kf_err(err, "reasoning_effort is too long");
	return 0;
}

void llm_request_sha256(const char *body, size_t len, char hex[65])
{
	sha256_hex(body, len, hex);
}

double llm_backoff_delay(int attempt, double base, double max, double retry_after,
			 double jitter01)
{
	double d = base;
	if (attempt < 1)
		attempt = 1;
	for (int i = 1; i < attempt && d < max; i++)
		d *= 2;
	if (d > max)
		d = max;
	if (jitter01 < 0)
		jitter01 = 0;
	if (jitter01 >= 1)
		jitter01 = 0.999999;
	d = d / 2 + d / 2 * jitter01;
	if (retry_after > d)
		d = retry_after;
	if (d > max)
		d = max;
	return d < 0 || isnan(d) ? 0 : d;
}

int llm_config_model(const char *path, struct buf *out, struct buf *err)
{
	struct llm_config c;
	int r;

	llm_config_init(&c);
	r = llm_config_load(&c, path, err);
	buf_reset(out);
	if (r == 0 && c.model)
		buf_adds(out, c.model);
	llm_config_release(&c);
	return r;
}
