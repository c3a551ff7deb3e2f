/* collector/llm_*: response parsing, idea labels, back-off arithmetic,
 * configuration. (HTTP behaviour is tested end to end in t05NN.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collector/llm.h"

static void test_ideas_labels(void **state)
{
	struct idea_list l;
	const char *text =
		"Sure! Here are ideas:\n\n"
		"1. [memory, parallelism] Use float4 loads so each thread\n"
		"   moves 16 bytes.\n"
		"2) **[Asynchronous operations and latency hiding]** Prefetch with cp.async.\n"
		"3. Unroll the inner loop by 4.\n"
		"   Categories: control, compute\n"
		"4. Use tensor cores via wmma for the products.\n"
		"5. [memory] Use float4 loads so each thread moves 16 bytes.\n"
		"Idea 6: [precision] Store intermediates in half.\n";
	(void)state;
	idea_list_init(&l);
	assert_int_equal(llm_parse_ideas(text, 10, &l), 5);
	assert_string_equal(l.v[0].text, "Use float4 loads so each thread moves 16 bytes.");
	assert_int_equal(l.v[0].categories, CAT_MEMORY | CAT_PARALLELISM);
	assert_string_equal(l.v[0].category_method, "model");
	assert_int_equal(l.v[1].categories, CAT_ASYNC);
	assert_string_equal(l.v[2].text, "Unroll the inner loop by 4.");
	assert_int_equal(l.v[2].categories, CAT_CONTROL | CAT_COMPUTE);
	assert_string_equal(l.v[2].category_method, "model");
	/* no label: the keyword classifier, and says so */
	assert_int_equal(l.v[3].categories, CAT_COMPUTE);
	assert_string_equal(l.v[3].category_method, "keyword");
	/* the duplicate (5.) is dropped; "Idea 6:" counts */
	assert_string_equal(l.v[4].text, "Store intermediates in half.");
	assert_int_equal(l.v[4].categories, CAT_PRECISION);
	idea_list_release(&l);

	/* k caps the count; brackets that are not labels stay in the text */
	idea_list_init(&l);
	assert_int_equal(llm_parse_ideas("1. [x, y] tile it\n2. second\n3. third\n", 2, &l), 2);
	assert_string_equal(l.v[0].text, "[x, y] tile it");
	assert_string_equal(l.v[0].category_method, "keyword");
	assert_int_equal(l.v[0].categories, CAT_MEMORY); /* "tile" */
	idea_list_release(&l);

	idea_list_init(&l);
	assert_int_equal(llm_parse_ideas("I have no ideas today.", 3, &l), 0);
	idea_list_release(&l);
}

static void test_ideas_json(void **state)
{
	struct idea_list l;
	const char *text = "```json\n{\"ideas\": [{\"text\": \"Vectorize\", \"categories\": "
			   "[\"memory\"]}, {\"idea\": \"Split K\"}, \"Plain string idea\"]}\n```\n";
	(void)state;
	idea_list_init(&l);
	assert_int_equal(llm_parse_ideas(text, 5, &l), 3);
	assert_string_equal(l.v[0].text, "Vectorize");
	assert_int_equal(l.v[0].categories, CAT_MEMORY);
	assert_string_equal(l.v[0].category_method, "model");
	assert_string_equal(l.v[1].category_method, "keyword");
	assert_string_equal(l.v[2].text, "Plain string idea");
	idea_list_release(&l);
}

static void test_candidates(void **state)
{
	struct proposal_list l;
	const char *two =
		"First, a plain one.\n\n```cuda\nextern \"C\" __global__ void k(float* y) {}\n"
		"/*@launch\nk<<<1, 32>>>(y);\n@*/\n```\n"
		"Second, launch apart:\n```cu\nextern \"C\" __global__ void k2(float* y) {}\n```\n"
		"```launch\nk2<<<1, 64>>>(y);\n```\n";
	(void)state;
	proposal_list_init(&l);
	assert_int_equal(llm_parse_candidates(two, 4, &l), 2);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0].note, "First, a plain one.");
	assert_non_null(strstr(l.v[0].source, "k<<<1, 32>>>(y);\n@*/"));
	assert_string_equal(l.v[1].source, "extern \"C\" __global__ void k2(float* y) {}\n"
					   "\n/*@launch\nk2<<<1, 64>>>(y);\n@*/\n");
	assert_string_equal(l.v[1].note, "Second, launch apart:");
	proposal_list_release(&l);

	/* max caps */
	proposal_list_init(&l);
	assert_int_equal(llm_parse_candidates(two, 1, &l), 1);
	assert_int_equal(l.n, 1);
	proposal_list_release(&l);

	/* no code block: one malformed proposal */
	proposal_list_init(&l);
	assert_int_equal(llm_parse_candidates("Just words, no code.", 3, &l), 0);
	assert_int_equal(l.n, 1);
	assert_null(l.v[0].source);
	assert_non_null(strstr(l.v[0].format_error, "no ```cuda code block"));
	proposal_list_release(&l);

	/* code without any launch block */
	proposal_list_init(&l);
	assert_int_equal(llm_parse_candidates("```cuda\n__global__ void k() {}\n```\n", 3, &l), 0);
	assert_null(l.v[0].source);
	assert_non_null(strstr(l.v[0].format_error, "no launch block"));
	proposal_list_release(&l);

	/* cut off mid-block */
	proposal_list_init(&l);
	assert_int_equal(llm_parse_candidates("```cuda\n__global__ void k() {\n", 3, &l), 0);
	assert_non_null(strstr(l.v[0].format_error, "not closed"));
	proposal_list_release(&l);

	/* python fences are ignored; an unlabelled fence counts when it is CUDA */
	proposal_list_init(&l);
	assert_int_equal(llm_parse_candidates("```python\nx = 1\n```\n```\n__global__ void k(){}\n"
					      "/*@launch\nk<<<1,1>>>();\n@*/\n```\n",
					      3, &l),
			 1);
	assert_int_equal(l.n, 1);
	proposal_list_release(&l);
}

static void test_completion(void **state)
{
	struct llm_usage u;
	struct buf err = BUF_INIT;
	json_t *t;
	const char *ok = "{\"choices\":[{\"message\":{\"content\":\"hi\"}},{\"message\":{\"content\":"
			 "[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]}}],"
			 "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":20,"
			 "\"completion_tokens_details\":{\"reasoning_tokens\":7}}}";
	(void)state;
	t = llm_parse_completion(ok, strlen(ok), &u, &err);
	assert_non_null(t);
	assert_int_equal(json_array_size(t), 2);
	assert_string_equal(json_string_value(json_array_get(t, 0)), "hi");
	assert_string_equal(json_string_value(json_array_get(t, 1)), "ab");
	assert_int_equal(u.prompt_tokens, 10);
	assert_int_equal(u.completion_tokens, 20);
	assert_int_equal(u.reasoning_tokens, 7);
	json_decref(t);

	assert_null(llm_parse_completion("{\"choices\": [", 13, &u, &err));
	assert_non_null(strstr(err.s, "not JSON"));
	assert_null(llm_parse_completion("{\"error\":{\"message\":\"quota\"}}", 29, &u, &err));
	assert_non_null(strstr(err.s, "quota"));
	t = llm_parse_completion("{\"choices\":[{\"message\":{\"content\":\"x\"}}]}", 41, &u, &err);
	assert_non_null(t);
	assert_int_equal(u.prompt_tokens, -1);
	assert_int_equal(u.reasoning_tokens, -1);
	json_decref(t);
	buf_release(&err);
}

static void test_backoff(void **state)
{
	(void)state;
	/* base * 2^(n-1), half fixed and half jittered */
	assert_true(fabs(llm_backoff_delay(1, 1, 60, -1, 0) - 0.5) < 1e-9);
	assert_true(fabs(llm_backoff_delay(1, 1, 60, -1, 0.5) - 0.75) < 1e-9);
	assert_true(fabs(llm_backoff_delay(3, 1, 60, -1, 0) - 2.0) < 1e-9);
	assert_true(fabs(llm_backoff_delay(4, 0.5, 60, -1, 0.999) - 3.998) < 1e-3);
	/* capped */
	assert_true(llm_backoff_delay(30, 1, 60, -1, 0.99) <= 60);
	assert_true(llm_backoff_delay(1000, 1, 60, -1, 0.99) <= 60);
	/* Retry-After raises it, the cap still holds */
	assert_true(fabs(llm_backoff_delay(1, 1, 60, 7, 0) - 7) < 1e-9);
	assert_true(fabs(llm_backoff_delay(1, 1, 60, 3600, 0) - 60) < 1e-9);
	assert_true(fabs(llm_backoff_delay(5, 1, 60, 2, 0) - 8) < 1e-9);
	assert_true(llm_backoff_delay(1, 0, 0, -1, 0.5) == 0);
	/* monotone in the attempt without jitter */
	for (int a = 1; a < 12; a++)
		assert_true(llm_backoff_delay(a, 0.1, 5, -1, 0) <= llm_backoff_delay(a + 1, 0.1, 5, -1, 0));
}

static void test_config(void **state)
{
	struct llm_config c;
	struct buf err = BUF_INIT;
	const char *good = "{\"concurrency\": 4, \"timeout_s\": 2.5, \"retries\": 1, "
			   "\"max_response_bytes\": 4096, \"temperature\": 0.2, "
			   "\"max_completion_tokens\": 1000, \"reasoning_effort\": \"high\", "
			   "\"token_budget\": 5000, \"model\": \"m\", \"base_url\": \"http://h/v1\"}";
	(void)state;
	llm_config_init(&c);
	assert_int_equal(llm_config_parse(&c, good, strlen(good), "cfg", &err), 0);
	assert_int_equal(c.concurrency, 4);
	assert_true(c.timeout_s == 2.5);
	assert_int_equal(c.retries, 1);
	assert_int_equal(c.max_response_bytes, 4096);
	assert_int_equal(c.max_completion_tokens, 1000);
	assert_string_equal(c.reasoning_effort, "high");
	assert_int_equal(c.token_budget, 5000);
	assert_int_equal(llm_config_check(&c, &err), 0);

	/* keys never come from files; unknown settings and bad ranges fail */
	assert_int_equal(llm_config_parse(&c, "{\"api_key\": \"sk-x\"}", 19, "cfg", &err), -1);
	assert_non_null(strstr(err.s, "keys do not belong"));
	assert_null(strstr(err.s, "sk-x"));
	assert_int_equal(llm_config_parse(&c, "{\"concurency\": 2}", 17, "cfg", &err), -1);
	assert_non_null(strstr(err.s, "unknown setting \"concurency\""));
	assert_int_equal(llm_config_parse(&c, "{\"concurrency\": 0}", 18, "cfg", &err), -1);
	assert_int_equal(llm_config_parse(&c, "{\"retries\": 1.5}", 16, "cfg", &err), -1);
	assert_int_equal(llm_config_parse(&c, "[1]", 3, "cfg", &err), -1);

	/* environment wins over the file; OPENAI_API_KEY is the fallback */
	setenv("KFORGE_LLM_MODEL", "env-model", 1);
	unsetenv("KFORGE_LLM_API_KEY");
	setenv("OPENAI_API_KEY", "sk-fallback", 1);
	unsetenv("KFORGE_LLM_CONFIG");
	assert_int_equal(llm_config_load(&c, NULL, &err), 0);
	assert_string_equal(c.model, "env-model");
	assert_string_equal(c.api_key, "sk-fallback");
	setenv("KFORGE_LLM_API_KEY", "sk-primary", 1);
	assert_int_equal(llm_config_load(&c, NULL, &err), 0);
	assert_string_equal(c.api_key, "sk-primary");
	llm_config_release(&c);
	assert_null(c.api_key);

	llm_config_init(&c);
	assert_int_equal(llm_config_check(&c, &err), -1); /* no endpoint */
	llm_config_release(&c);
	buf_release(&err);
}

static void test_request_hash(void **state)
{
	char a[65], b[65];
	(void)state;
	llm_request_sha256("{\"model\":\"m\"}", 13, a);
	llm_request_sha256("{\"model\":\"n\"}", 13, b);
	assert_int_equal(strlen(a), 64);
	assert_string_not_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ideas_labels), cmocka_unit_test(test_ideas_json),
		cmocka_unit_test(test_candidates),   cmocka_unit_test(test_completion),
		cmocka_unit_test(test_backoff),      cmocka_unit_test(test_config),
		cmocka_unit_test(test_request_hash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
