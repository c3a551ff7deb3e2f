/* Drives the LLM proposer directly (tests against mockllm). Configuration
 * comes from the environment and --config exactly as in kforge.
 *
 *   llmcall [--config F] [--prompts DIR] [--problem DIR] [--cache DIR]
 *           [--replay] [--record F] [--k N] [--m N] [--seed N]
 *           [--calls N] [--threads N] [--budget N] ideas|implement|repair
 *
 * --cache DIR plays the collector's part: lookups read DIR/SHA.json and
 * every successful uncached response is written there. Prints one JSON
 * line per call (results and the record without request/response);
 * --record F writes the full records (request and response) to F.
 * Exit: 0 all calls succeeded, 1 some failed, 3 the token budget ran out. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/llm.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "problem/problem.h"

static const char *cache_dir;
static const char *task;
static int k = 3, m = 1;
static unsigned long long seed0 = 1;
static struct proposer prop;
static struct proposer_problem problem;
static json_t *results;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int next_call, ncalls = 1, worst;

static int cache_lookup(void *ctx, const char *sha, struct buf *resp)
{
	struct buf path = BUF_INIT, err = BUF_INIT;
	int rc;
	(void)ctx;
	buf_setf(&path, "%s/%s.json", cache_dir, sha);
	if (!file_exists(path.s)) {
		rc = 0;
	} else if (buf_read_file(resp, path.s, LLM_MAX_RESPONSE_CAP, &err) < 0) {
		buf_setf(resp, "%s", err.s);
		rc = -1;
	} else {
		rc = 1;
	}
	buf_release(&path);
	buf_release(&err);
	return rc;
}

static json_t *cats(unsigned bits)
{
	json_t *a = json_array();
	for (int i = 0; i < CAT_COUNT; i++)
		if (bits & (1u << i))
			json_array_append_new(a, json_string(idea_category_name(i)));
	return a;
}

static json_t *nullable(const char *s)
{
	return s ? json_string(s) : json_null();
}

static void one_call(int idx)
{
	struct proposer_record rec;
	struct idea_list ideas;
	struct proposal_list props;
	struct proposal one;
	struct buf err = BUF_INIT;
	json_t *out = json_object(), *arr = json_array();
	char sha[65];
	int rc = -1;

	proposer_record_init(&rec);
	idea_list_init(&ideas);
	proposal_list_init(&props);
	memset(&one, 0, sizeof(one));
	if (!strcmp(task, "ideas")) {
		struct idea_outcome hist[1] = { { "Use shared memory tiling.", CAT_MEMORY, NULL, 0, 4,
						  2, 1.5 } };
		struct idea_request rq = { &problem, hist, 1, k, 1, seed0 + (unsigned)idx };
		rc = prop.ideas(prop.self, &rq, &ideas, &rec, &err);
		for (int i = 0; i < ideas.n; i++)
			json_array_append_new(arr, json_pack("{s:s, s:o, s:s}", "text", ideas.v[i].text,
							     "categories", cats(ideas.v[i].categories),
							     "method", ideas.v[i].category_method));
		json_object_set_new(out, "ideas", arr);
	} else {
		struct seed_kernel sk = { "kernel_r0_ref", problem.reference_src, NULL, NULL, 1.25,
					  0.9 };
		if (!strcmp(task, "implement")) {
			struct idea id = { (char *)"Use float4 vectorized loads.", CAT_MEMORY,
					   (char *)"model", NULL };
			struct impl_request rq = { &problem, &id, &sk, 1, m, 1, seed0 + (unsigned)idx };
			rc = prop.implement(prop.self, &rq, &props, &rec, &err);
		} else {
			struct repair_request rq = { &problem, &sk, "compile_error",
						     "3:5: error: identifier \"foo\" is undefined", 1,
						     seed0 + (unsigned)idx };
			rc = prop.repair(prop.self, &rq, &one, &rec, &err);
			if (rc == 0)
				*proposal_list_add(&props) = one;
		}
		for (int i = 0; i < props.n; i++)
			json_array_append_new(arr, json_pack("{s:o, s:o, s:o}", "source",
							     nullable(props.v[i].source), "format_error",
							     nullable(props.v[i].format_error), "note",
							     nullable(props.v[i].note)));
		json_object_set_new(out, "proposals", arr);
	}
	llm_request_sha256(rec.request.s, rec.request.len, sha);
	if (cache_dir && rc == 0 && !rec.cached && rec.http_status == 200) {
		struct buf path = BUF_INIT, e2 = BUF_INIT;
		buf_setf(&path, "%s/%s.json", cache_dir, sha);
		write_file_atomic(path.s, rec.response.s, rec.response.len, &e2);
		buf_release(&path);
		buf_release(&e2);
	}
	json_object_set_new(out, "call", json_integer(idx));
	json_object_set_new(out, "rc", json_integer(rc));
	json_object_set_new(out, "err", json_string(err.s));
	json_object_set_new(
		out, "record",
		json_pack("{s:s, s:s, s:i, s:i, s:f, s:i, s:I, s:I, s:I, s:s, s:I, s:s%, s:s%}",
			  "model", rec.model.s, "request_sha256", sha, "http_status", rec.http_status,
			  "retries", rec.retries, "latency_ms", rec.latency_ms, "cached", rec.cached,
			  "prompt_tokens", rec.prompt_tokens, "completion_tokens",
			  rec.completion_tokens, "reasoning_tokens", rec.reasoning_tokens, "error",
			  rec.error.s, "response_bytes", (json_int_t)rec.response.len, "request",
			  rec.request.s, rec.request.len, "response", rec.response.s,
			  rec.response.len));
	json_object_set_new(json_object_get(out, "record"), "attempts",
			    rec.attempts.len ? json_loads(rec.attempts.s, 0, NULL) : json_null());
	pthread_mutex_lock(&mu);
	json_array_append_new(results, out);
	if (rc == LLM_RC_BUDGET)
		worst = 3;
	else if (rc < 0 && worst == 0)
		worst = 1;
	pthread_mutex_unlock(&mu);
	proposer_record_release(&rec);
	idea_list_release(&ideas);
	proposal_list_release(&props);
	buf_release(&err);
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		int i;
		pthread_mutex_lock(&mu);
		i = next_call < ncalls ? next_call++ : -1;
		pthread_mutex_unlock(&mu);
		if (i < 0)
			return NULL;
		one_call(i);
	}
}

static int cmp_call(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "call"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "call"));
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct llm_config cfg;
	struct llm_cache cache = { NULL, cache_lookup };
	struct buf err = BUF_INIT, torch = BUF_INIT, ref = BUF_INIT, path = BUF_INIT;
	const char *config = NULL, *prompts = "templates/prompts", *pdir = NULL, *record = NULL;
	int threads = 1, replay = 0, rc = 1;
	long long budget = -1;
	json_t *spec = NULL;
	pthread_t th[64];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
		if (!strcmp(a, "--replay")) {
			replay = 1;
			continue;
		}
		if (a[0] != '-') {
			task = a;
			continue;
		}
		i++;
		if (!strcmp(a, "--config"))
			config = v;
		else if (!strcmp(a, "--prompts"))
			prompts = v;
		else if (!strcmp(a, "--problem"))
			pdir = v;
		else if (!strcmp(a, "--cache"))
			cache_dir = v;
		else if (!strcmp(a, "--record"))
			record = v;
		else if (!strcmp(a, "--k"))
			k = atoi(v);
		else if (!strcmp(a, "--m"))
			m = atoi(v);
		else if (!strcmp(a, "--seed"))
			seed0 = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--calls"))
			ncalls = atoi(v);
		else if (!strcmp(a, "--threads"))
			threads = atoi(v);
		else if (!strcmp(a, "--budget"))
			budget = atoll(v);
		else {
			fprintf(stderr, "llmcall: unknown option %s\n", a);
			return 2;
		}
	}
	if (!task || (strcmp(task, "ideas") && strcmp(task, "implement") && strcmp(task, "repair")) ||
	    !pdir || threads < 1 || threads > 64 || ncalls < 1) {
		fprintf(stderr, "usage: llmcall --problem DIR [options] ideas|implement|repair\n");
		return 2;
	}
	if (problem_read_spec(pdir, NULL, &spec, &err) < 0)
		goto fail;
	buf_setf(&path, "%s/reference.py", pdir);
	if (buf_read_file(&torch, path.s, 1u << 20, &err) < 0)
		goto fail;
	buf_setf(&path, "%s/reference.cu", pdir);
	if (buf_read_file(&ref, path.s, 1u << 20, &err) < 0)
		goto fail;
	problem.id = jget_str(spec, "id", "");
	problem.spec = spec;
	problem.torch_text = torch.s;
	problem.reference_src = ref.s;
	problem.gpu_name = "NVIDIA H100 80GB HBM3";
	problem.arch = "sm_90";

	llm_config_init(&cfg);
	if (llm_config_load(&cfg, config, &err) < 0)
		goto fail;
	free(cfg.prompts_dir);
	cfg.prompts_dir = strdup(prompts);
	cfg.replay = replay;
	cfg.jitter_seed = 42;
	if (budget >= 0)
		cfg.token_budget = budget;
	if (llm_proposer_open(&prop, &cfg, cache_dir ? &cache : NULL, &err) < 0) {
		llm_config_release(&cfg);
		goto fail;
	}
	llm_config_release(&cfg);
	results = json_array();
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	{
		size_t n = json_array_size(results), i;
		json_t **v = calloc(n + 1, sizeof(*v)), *full = json_array();
		for (i = 0; i < n; i++)
			v[i] = json_array_get(results, i);
		qsort(v, n, sizeof(*v), cmp_call);
		for (i = 0; i < n; i++) {
			json_t *r = json_deep_copy(v[i]), *recd = json_object_get(r, "record");
			json_array_append(full, r);
			json_object_del(recd, "request");
			json_object_del(recd, "response");
			char *s = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
			printf("%s\n", s);
			free(s);
			json_decref(r);
			json_array_set(full, i, v[i]);
		}
		if (record) {
			struct buf b = BUF_INIT;
			json_add_pretty(&b, full);
			if (write_file_atomic(record, b.s, b.len, &err) < 0)
				fprintf(stderr, "llmcall: %s\n", err.s);
			buf_release(&b);
		}
		printf("tokens_used %lld\n", llm_proposer_tokens_used(&prop));
		free(v);
		json_decref(full);
	}
	prop.release(prop.self);
	json_decref(results);
	rc = worst;
	goto out;
fail:
	fprintf(stderr, "llmcall: %s\n", err.s);
out:
	json_decref(spec);
	buf_release(&err);
	buf_release(&torch);
	buf_release(&ref);
	buf_release(&path);
	return rc;
}
