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

static void test_ideas_headings(void **state)
{
	struct idea_list l;
	const char *text =
		"## Ideas\n\n"
		"### Idea 1: Vectorized loads\n\n"
		"Use float4 loads and stores.\n"
		"Each thread moves 16 bytes.\n\n"
		"**Categories:** memory, parallelism\n\n"
		"### Idea 2: Warp shuffles\n\n"
		"Reduce within a warp with __shfl_down_sync.\n\n"
		"**3. Persistent blocks**\n"
		"Launch one block per SM.\n";
	(void)state;
	idea_list_init(&l);
	assert_int_equal(llm_parse_ideas(text, 5, &l), 3);
	assert_string_equal(l.v[0].text, "Vectorized loads: Use float4 loads and stores. Each thread "
					 "moves 16 bytes.");
	assert_int_equal(l.v[0].categories, CAT_MEMORY | CAT_PARALLELISM);
	assert_string_equal(l.v[0].category_method, "model");
	assert_string_equal(l.v[1].text, "Warp shuffles: Reduce within a warp with __shfl_down_sync.");
	assert_string_equal(l.v[1].category_method, "keyword");
	assert_string_equal(l.v[2].text, "Persistent blocks: Launch one block per SM.");
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

	/* the launch block in a second ```cuda fence of its own */
	proposal_list_init(&l);
	assert_int_equal(llm_parse_candidates("```cuda\n__global__ void k(float* y) {}\n```\n"
					      "and launch it with:\n"
					      "```cuda\n/*@launch\nk<<<1, 32>>>(y);\n@*/\n```\n",
					      3, &l),
			 1);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0].source,
			    "__global__ void k(float* y) {}\n/*@launch\nk<<<1, 32>>>(y);\n@*/\n");
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
	assert_int_equal(c.send_seed, 1);
	{
		const char *t = "{\"send_seed\": false, \"usd_per_mtok_prompt\": 2, "
				"\"usd_per_mtok_completion\": 8}";
		assert_int_equal(llm_config_parse(&c, t, strlen(t), "cfg", &err), 0);
	}
	assert_int_equal(c.send_seed, 0);
	assert_true(fabs(llm_cost_usd(&c, 1000000, 500000) - 6.0) < 1e-9);
	assert_true(llm_cost_usd(&c, -1, -1) == 0);
	assert_int_equal(llm_config_parse(&c, "{\"send_seed\": 1}", 16, "cfg", &err), -1);

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

static void test_redact(void **state)
{
	struct buf b = BUF_INIT;
	(void)state;
	buf_adds(&b, "bad key sk-123456 and again sk-123456!");
	llm_redact(&b, "sk-123456");
	assert_string_equal(b.s, "bad key [REDACTED] and again [REDACTED]!");
	llm_redact(&b, NULL);
	llm_redact(&b, "");
	assert_string_equal(b.s, "bad key [REDACTED] and again [REDACTED]!");
	/* encoded forms: \u (mixed case, mixed with plain bytes), %XX, base64
	 * of "sk-test-0123456789" alone and after one and two other bytes */
	buf_reset(&b);
	buf_adds(&b, "a \\u0073\\u006B-test-0123456789 b %73%6b%2Dtest-0123456789 c "
		     "c2stdGVzdC0wMTIzNDU2Nzg5 d eHNrLXRlc3QtMDEyMzQ1Njc4OQ== "
		     "e eHhzay10ZXN0LTAxMjM0NTY3ODk= f sk-test-012345678 g");
	assert_int_equal(llm_redact(&b, "sk-test-0123456789"), 5);
	assert_null(strstr(b.s, "0123456789"));
	assert_null(strstr(b.s, "dGVzdC0wMTIzNDU2Nzg"));
	assert_non_null(strstr(b.s, "f sk-test-012345678 g")); /* a prefix is not the key */
	buf_release(&b);
}

/* Prompts render from the project's templates (tests run in the root). */
static void test_prompts(void **state)
{
	struct llm_prompts *pp = NULL;
	struct buf out = BUF_INIT, err = BUF_INIT, big = BUF_INIT;
	json_t *spec = json_pack("{s:s, s:{s:i}, s:{s:f}, s:[{s:s, s:s, s:[s, i]}], s:[], s:s}",
				 "operation", "leaky relu", "sizes", "n", 1024, "scalars",
				 "negative_slope", 0.01, "inputs", "name", "x", "dtype", "float32",
				 "shape", "n", 4, "outputs", "tolerance", "bf16");
	struct proposer_problem pr = { "level1/020_LeakyReLU", spec, "torch \xff\xfe text",
				       "ref src\n\n\n", NULL, NULL, 0 };
	struct idea id = { (char *)"Tile it.", CAT_MEMORY | CAT_CONTROL, (char *)"model", NULL };
	struct idea_request ir = { &pr, NULL, 0, 5, 1, 1 };
	struct impl_request mr = { &pr, &id, NULL, 0, 1, 1, 1 };
	struct seed_kernel sk = { "k1", "src", NULL, NULL, 0, 0 };
	struct repair_request rr = { &pr, &sk, "incorrect", NULL, 2, 1 };
	(void)state;

	assert_int_equal(llm_prompts_open(&pp, "no/such/dir", &err), -1);
	assert_non_null(strstr(err.s, "no/such/dir"));
	assert_int_equal(llm_prompts_open(&pp, "templates/prompts", &err), 0);

	assert_int_equal(llm_prompt_ideas(pp, &ir, &out, &err), 0);
	assert_non_null(strstr(out.s, "Propose 5 new optimization ideas"));
	assert_null(strstr(out.s, "Ideas already tried"));
	assert_non_null(strstr(out.s, "Sizes: n = 1024"));
	assert_non_null(strstr(out.s, "Scalars: negative_slope = 0.01"));
	assert_non_null(strstr(out.s, "input `x`: float32 [n, 4]"));
	assert_non_null(strstr(out.s, "torch \xff\xfe text")); /* bytes kept */
	assert_non_null(strstr(out.s, "an NVIDIA GPU"));

	buf_reset(&out);
	assert_int_equal(llm_prompt_implement(pp, &mr, 1, &out, &err), 0);
	assert_non_null(strstr(out.s, "[memory, control] Tile it."));
	assert_non_null(strstr(out.s, "Write one implementation"));
	assert_non_null(strstr(out.s, "half-precision tolerance"));
	assert_non_null(strstr(out.s, "ref src\n```")); /* trailing blank lines trimmed */
	assert_null(strstr(out.s, "Kernels to build on"));

	while (big.len < 100000)
		buf_adds(&big, "error: something went wrong in line 1\n");
	rr.failure = big.s;
	buf_reset(&out);
	assert_int_equal(llm_prompt_repair(pp, &rr, &out, &err), 0);
	assert_non_null(strstr(out.s, "What went wrong: incorrect"));
	assert_non_null(strstr(out.s, "more bytes cut"));
	assert_true(out.len < 40000);

	buf_reset(&out);
	assert_int_equal(llm_prompt_system(pp, &out, &err), 0);
	assert_non_null(strstr(out.s, "CUDA"));
	llm_prompts_close(pp);
	json_decref(spec);
	buf_release(&out);
	buf_release(&err);
	buf_release(&big);
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
		cmocka_unit_test(test_ideas_headings),
		cmocka_unit_test(test_candidates),   cmocka_unit_test(test_completion),
		cmocka_unit_test(test_backoff),      cmocka_unit_test(test_config),
		cmocka_unit_test(test_request_hash), cmocka_unit_test(test_redact),
		cmocka_unit_test(test_prompts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
