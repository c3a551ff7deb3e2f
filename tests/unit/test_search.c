/* The search's pure parts: PROBLEMS lists, run identity from the
 * configuration, the proposer registry, the response cache's scope. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "problem/problem_list.h"
#include "collector/builtin.h"
#include "collector/catalogue.h"
#include "collector/proposers.h"
#include "collector/search.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "core/sha256.h"
#include "engine/candidate.h"
#include "store/store.h"

static char dir[64];

static void mkprob(const char *rel)
{
	struct buf p = BUF_INIT, err = BUF_INIT;
	buf_addf(&p, "%s/problems/%s", dir, rel);
	assert_int_equal(mkdir_p(p.s, &err), 0);
	buf_adds(&p, "/spec.json");
	assert_int_equal(write_file_atomic(p.s, "{}", 2, &err), 0);
	buf_release(&p);
	buf_release(&err);
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/kf-search-test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	mkprob("level1/001_Alpha");
	mkprob("level1/002_Beta");
	mkprob("level1/010_Softmax");
	mkprob("level2/001_Gamma");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* Resolves spec; returns the ids joined by spaces, or "ERR: message". */
static char *resolve(const char *spec)
{
	struct problem_list l;
	struct buf out = BUF_INIT, err = BUF_INIT;
	problem_list_init(&l);
	if (problem_list_resolve(&l, dir, spec, &err) < 0)
		buf_addf(&out, "ERR: %s", err.s);
	for (int i = 0; i < l.n; i++)
		buf_addf(&out, "%s%s", i ? " " : "", l.v[i].id);
	problem_list_release(&l);
	buf_release(&err);
	return buf_detach(&out, NULL);
}

#define EXPECT(spec, want)                              \
	do {                                            \
		char *got_ = resolve(spec);             \
		assert_string_equal(got_, want);        \
		free(got_);                             \
	} while (0)

static void test_problem_list(void **state)
{
	char *e;
	(void)state;
	EXPECT("level1", "level1/001_Alpha level1/002_Beta level1/010_Softmax");
	EXPECT("level2", "level2/001_Gamma");
	EXPECT("all", "level1/001_Alpha level1/002_Beta level1/010_Softmax level2/001_Gamma");
	EXPECT("2,1", "level1/001_Alpha level1/002_Beta");
	EXPECT("1-10", "level1/001_Alpha level1/002_Beta level1/010_Softmax");
	EXPECT("level2/1", "level2/001_Gamma");
	EXPECT("softmax, 1", "level1/001_Alpha level1/010_Softmax");
	EXPECT("level1/002_Beta", "level1/002_Beta");
	EXPECT("1,1,Alpha,001", "level1/001_Alpha");
	/* KernelBench's names (issue 36): number and name must agree. */
	EXPECT("10_Softmax.py, level1/2_Beta, 1_Alpha_.py", "level1/001_Alpha level1/002_Beta level1/010_Softmax");
	EXPECT("level2/1_gamma.py", "level2/001_Gamma");
	e = resolve("Softmx");
	assert_string_equal(e, "ERR: unknown problem 'Softmx'; did you mean 'level1/010_Softmax'?");
	free(e);
	e = resolve("1,2_Softmax");
	assert_string_equal(e, "ERR: unknown problem '2_Softmax'; did you mean 'level1/010_Softmax'?");
	free(e);
	e = resolve("7");
	assert_string_equal(e, "ERR: unknown problem '7'");
	free(e);
	e = resolve("3-4");
	assert_non_null(strstr(e, "ERR: PROBLEMS: no level-1 problem numbered 3-4"));
	free(e);
	e = resolve("5-2");
	assert_non_null(strstr(e, "empty range"));
	free(e);
	e = resolve("level9");
	assert_non_null(strstr(e, "no problems in level9"));
	free(e);
	e = resolve(" , ");
	assert_non_null(strstr(e, "empty list"));
	free(e);
}

static void test_run_identity(void **state)
{
	struct search_config a, b;
	struct problem_list l;
	struct buf err = BUF_INIT;
	char ida[64], idb[64];
	json_t *j;
	(void)state;

	problem_list_init(&l);
	assert_int_equal(problem_list_resolve(&l, dir, "level1", &err), 0);
	search_config_default(&a);
	a.problems = &l;
	a.proposer = "builtin";
	a.per_problem.impls = 7;
	search_run_id(&a, ida);
	assert_true(!strncmp(ida, "run_", 4));
	/* Round trip through the stored JSON gives the same run. */
	j = search_config_to_json(&a);
	assert_int_equal(search_config_from_json(&b, j, &err), 0);
	b.problems = &l;
	search_run_id(&b, idb);
	assert_string_equal(ida, idb);
	assert_int_equal(b.per_problem.impls, 7);
	/* Wall time is per invocation: same run. */
	b.total.wall_s = 60;
	search_run_id(&b, idb);
	assert_string_equal(ida, idb);
	/* Another seed, strategy or budget is another run. */
	b.seed = 2;
	search_run_id(&b, idb);
	assert_string_not_equal(ida, idb);
	b.seed = a.seed;
	b.strategy = "revise";
	search_run_id(&b, idb);
	assert_string_not_equal(ida, idb);
	json_decref(j); /* b's strings pointed into it */
	/* A bad strategy in a stored config is refused. */
	j = json_pack("{s:s}", "strategy", "sideways");
	assert_int_equal(search_config_from_json(&b, j, &err), -1);
	assert_non_null(strstr(err.s, "sideways"));
	json_decref(j);
	problem_list_release(&l);
	buf_release(&err);
}

static int dummy_open(struct proposer *p, const struct proposer_options *o, struct buf *err)
{
	(void)o;
	(void)err;
	p->name = "dummy";
	return 0;
}

static void test_registry(void **state)
{
	struct proposer p;
	struct proposer_options o = { 0 };
	struct buf err = BUF_INIT;
	(void)state;

	assert_int_equal(proposer_open(&p, "gpt", &o, &err), -1);
	assert_non_null(strstr(err.s, "unknown proposer 'gpt'"));
	assert_int_equal(proposer_register("dummy", dummy_open), 0);
	assert_int_equal(proposer_open(&p, "dummy", &o, &err), 0);
	assert_string_equal(p.name, "dummy");
	proposer_close(&p);
	unsetenv("KFORGE_LLM_BASE_URL");
	assert_string_equal(proposer_default_name(), "builtin");
	setenv("KFORGE_LLM_BASE_URL", "http://127.0.0.1:1/v1", 1);
	assert_string_equal(proposer_default_name(), "llm");
	unsetenv("KFORGE_LLM_BASE_URL");
	/* A proposer missing from the build says so (or opens when present). */
	buf_reset(&err);
	if (proposer_open(&p, "llm", &o, &err) < 0)
		assert_true(strstr(err.s, "not part of this build") || err.len > 0);
	else
		proposer_close(&p);
	buf_release(&err);
}

static void test_cache_scope(void **state)
{
	struct store s;
	struct buf err = BUF_INIT, out = BUF_INIT, path = BUF_INIT;
	struct search_cache *c;
	char h1[65], h2[65];
	const char *t = "2026-01-01T00:00:00Z";
	(void)state;

	buf_addf(&path, "%s/cache.db", dir);
	assert_int_equal(store_open(&s, path.s, STORE_CREATE, &err), 0);
	sha256_hex("req1", 4, h1);
	sha256_hex("req2", 4, h2);
	for (int i = 0; i < 2; i++) {
		const char *run = i ? "runB" : "runA";
		json_t *row = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:s}", "id", run, "created_at", t,
					"status", "finished", "seed", 1, "strategy", "branch",
					"proposer", "llm", "config", "{}");
		json_object_set_new(row, "kforge_version", json_string("t"));
		assert_int_equal(store_insert(&s, "runs", row, STORE_INSERT, &err), 1);
		json_decref(row);
	}
	json_t *r1 = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "id", "c1", "run_id", "runA",
			       "purpose", "ideas", "proposer", "llm", "request", "req1", "response",
			       "RESPONSE-1", "request_sha256", h1, "created_at", t);
	json_t *r2 = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "id", "c2", "run_id", "runA",
			       "purpose", "ideas", "proposer", "llm", "request", "req2", "response",
			       "partial", "request_sha256", h2, "error", "timeout", "created_at", t);
	assert_int_equal(store_insert(&s, "llm_calls", r1, STORE_INSERT, &err), 1);
	assert_int_equal(store_insert(&s, "llm_calls", r2, STORE_INSERT, &err), 1);
	json_decref(r1);
	json_decref(r2);
	store_close(&s);

	/* Resume of run A: its own calls are served. */
	assert_int_equal(search_cache_open(&c, path.s, "runA", 0, &err), 0);
	assert_int_equal(search_cache_lookup(c, h1, &out), 1);
	assert_string_equal(out.s, "RESPONSE-1");
	/* A failed call is not a cached response. */
	assert_int_equal(search_cache_lookup(c, h2, &out), 0);
	search_cache_close(c);
	/* Another run without --replay does not reuse run A's responses. */
	assert_int_equal(search_cache_open(&c, path.s, "runB", 0, &err), 0);
	assert_int_equal(search_cache_lookup(c, h1, &out), 0);
	search_cache_close(c);
	/* Replay: any run's recorded response. */
	assert_int_equal(search_cache_open(&c, path.s, "runC", 1, &err), 0);
	assert_int_equal(search_cache_lookup(c, h1, &out), 1);
	search_cache_close(c);
	buf_release(&err);
	buf_release(&out);
	buf_release(&path);
}

/* The profile's text for a prompt: bounded and plain whatever the store
 * holds (a thousand kernels, names with escapes, a bad limiter). */
static void test_profile_text(void **state)
{
	json_t *p = json_pack("{s:s, s:i, s:f, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:[]}", "limiter",
			      "memory", "launches", 1000, "kernel_ms", 1.25, "dram_read_bytes",
			      (json_int_t)2000000000, "dram_write_bytes", (json_int_t)1000, "dram_pct",
			      87.4, "l2_hit_pct", 12.0, "sm_pct", 20.0, "tensor_pct", 0.0,
			      "occupancy_pct", 55.5, "kernels");
	json_t *ks = json_object_get(p, "kernels");
	struct buf b = BUF_INIT, name = BUF_INIT;
	(void)state;

	for (int i = 0; i < 1000; i++) {
		buf_reset(&name);
		buf_addf(&name, "k%d_\x1b[31m\xc3\xa9\n", i);
		for (int j = 0; j < 40; j++)
			buf_adds(&name, "verylongname");
		json_array_append_new(ks, json_pack("{s:s, s:f, s:i, s:i, s:s}", "name", name.s,
			"duration_ms", i == 500 ? 9.0 : i == 999 ? 8.0 : i == 7 ? 7.0 : 0.001,
			"registers", 255, "shared_bytes", 49152, "limiter", "memory"));
	}
	proposer_profile_text(p, &b);
	assert_true(b.len > 0 && b.len <= PROPOSER_PROFILE_TEXT_MAX);
	for (size_t i = 0; i < b.len; i++)
		assert_true(b.s[i] == '\n' || (b.s[i] >= 0x20 && b.s[i] < 0x7f));
	assert_non_null(strstr(b.s, "limiter memory; kernel time 1.25 ms over 1000 launches; DRAM 87% "
				 "(read 2 GB, write 1 KB); L2 hit 12%; SM 20%; tensor 0%; occupancy 56%\n"));
	assert_non_null(strstr(b.s, "longest kernels of 1000:\n- k500_??31m???verylongname"));
	/* the three longest, longest first; names cut */
	assert_true(strstr(b.s, "- k500_") < strstr(b.s, "- k999_"));
	assert_true(strstr(b.s, "- k999_") < strstr(b.s, "- k7_"));
	assert_null(strstr(b.s, "- k1_"));
	assert_non_null(strstr(b.s, "...: 9 ms, 255 registers, shared 49.2 KB, memory-limited\n"));
	/* not a known limiter, no metrics, no kernels */
	json_decref(p);
	p = json_pack("{s:s}", "limiter", "\x1b]0;x");
	proposer_profile_text(p, &b);
	assert_string_equal(b.s, "limiter unknown\n");
	json_decref(p);
	buf_release(&b);
	buf_release(&name);
}

/* The built-in proposer's ideas for a problem in a round at seed 7 (k = all), their ids in order. */
static void builtin_ideas(const char *problem, int round, const char *limiter, char *ids, size_t n,
			  json_t **resp, json_t **req)
{
	struct buf err = BUF_INIT, path = BUF_INIT;
	struct proposer pr;
	struct proposer_problem pp;
	struct idea_list l;
	struct proposer_record rec;
	json_t *spec;

	buf_addf(&path, "%s/problems/%s/spec.json", getenv("KF_ROOT") ? getenv("KF_ROOT") : ".", problem);
	spec = json_load_file(path.s, 0, NULL);
	assert_non_null(spec);
	memset(&pp, 0, sizeof(pp));
	pp.id = problem;
	pp.spec = spec;
	assert_int_equal(builtin_proposer_open(&pr, &err), 0);
	struct idea_request rq = { &pp, NULL, 0, 1000, round, 7 };
	rq.limiter = limiter;
	rq.limiter_kernel = "kernel_abc";
	idea_list_init(&l);
	proposer_record_init(&rec);
	assert_int_equal(pr.ideas(pr.self, &rq, &l, &rec, &err), 0);
	ids[0] = 0;
	for (int i = 0; i < l.n; i++)
		snprintf(ids + strlen(ids), n - strlen(ids), "%s%s", i ? " " : "", l.v[i].catalogue_id);
	*resp = json_loads(rec.response.s, 0, NULL);
	*req = json_loads(rec.request.s, 0, NULL);
	idea_list_release(&l);
	proposer_record_release(&rec);
	if (pr.release)
		pr.release(pr.self);
	json_decref(spec);
	buf_release(&err);
	buf_release(&path);
}

/* The best kernel's limiter puts its ideas first and the record says so;
 * without a profile the order is the one before profiles existed. Round 1
 * leads with the template's best-known plan (kernels/plans.c; issue 42),
 * the other ideas in the same order as in later rounds. */
static void test_builtin_limiter(void **state)
{
	static const char relu[] = "level1/019_ReLU", scan[] = "level1/093_masked_cumsum";
	static const struct {
		const char *problem;
		int round;
		const char *limiter, *want;
	} cases[] = {
		/* the order before this change (builtin_emit ideas SPEC 1000 7) */
		{ relu, 2, NULL, "ew-unroll ew-vec4 ew-gridstride ew-ilp ew-streaming-stores ew-fastmath ew-blocksize" },
		{ relu, 2, "memory", "ew-vec4 ew-ilp ew-streaming-stores ew-unroll ew-gridstride ew-fastmath ew-blocksize" },
		{ relu, 2, "compute", "ew-ilp ew-fastmath ew-unroll ew-vec4 ew-gridstride ew-streaming-stores ew-blocksize" },
		{ relu, 2, "latency", "ew-unroll ew-gridstride ew-blocksize ew-vec4 ew-ilp ew-streaming-stores ew-fastmath" },
		/* no elementwise idea fuses launches: the order stays */
		{ relu, 2, "launch", "ew-unroll ew-vec4 ew-gridstride ew-ilp ew-streaming-stores ew-fastmath ew-blocksize" },
		{ scan, 2, NULL, "scan-single-pass scan-streaming-stores scan-block-size scan-double-carry "
				 "scan-warp-per-row scan-fused-mask scan-warp scan-vec4-chunks" },
		/* the ideas that fuse first */
		{ scan, 2, "launch", "scan-fused-mask scan-single-pass scan-streaming-stores scan-block-size "
				     "scan-double-carry scan-warp-per-row scan-warp scan-vec4-chunks" },
		/* round 1: the plan's idea, then the rest as above */
		{ relu, 1, NULL, "ew-fastmath ew-unroll ew-vec4 ew-gridstride ew-ilp ew-streaming-stores ew-blocksize" },
		{ relu, 1, "memory", "ew-fastmath ew-vec4 ew-ilp ew-streaming-stores ew-unroll ew-gridstride ew-blocksize" },
		{ scan, 1, "launch", "scan-warp scan-fused-mask scan-single-pass scan-streaming-stores "
				     "scan-block-size scan-double-carry scan-warp-per-row scan-vec4-chunks" },
	};
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char ids[512];
		json_t *rs, *rq, *first;
		builtin_ideas(cases[c].problem, cases[c].round, cases[c].limiter, ids, sizeof(ids), &rs, &rq);
		assert_string_equal(ids, cases[c].want);
		assert_non_null(rs);
		first = json_array_get(json_object_get(rs, "ideas"), 0);
		if (cases[c].round == 1) {
			/* the plan's record: why it leads, and what it is */
			const char *why = json_string_value(json_object_get(first, "why"));
			json_t *plan = json_object_get(rs, "plan");
			assert_true(json_is_true(json_object_get(first, "plan")));
			assert_non_null(why);
			assert_true(!strncmp(why, "the template's best-known plan: ", 32) && strlen(why) > 40);
			assert_string_equal(json_string_value(json_object_get(plan, "idea")),
					    json_string_value(json_object_get(first, "id")));
			assert_true(json_is_object(json_object_get(plan, "params")));
			/* the other ideas are not the plan */
			assert_null(json_object_get(json_array_get(json_object_get(rs, "ideas"), 1), "plan"));
		} else {
			assert_null(json_object_get(rs, "plan"));
			assert_null(json_object_get(first, "plan"));
		}
		if (!cases[c].limiter) {
			assert_null(json_object_get(rq, "limiter"));
			assert_null(json_object_get(rs, "why"));
			assert_null(strstr(json_string_value(json_object_get(first, "why")), "limiter"));
		} else {
			char want[128];
			snprintf(want, sizeof(want), "limiter %s (profile of kernel_abc): ", cases[c].limiter);
			assert_string_equal(json_string_value(json_object_get(json_object_get(rq, "limiter"),
									      "limiter")), cases[c].limiter);
			assert_non_null(strstr(json_string_value(json_object_get(rs, "why")), want));
			/* (in round 1 the plan leads, and says why) */
			if (cases[c].round > 1 && (cases[c].problem == scan || strcmp(cases[c].limiter, "launch")))
				assert_non_null(strstr(json_string_value(json_object_get(first, "why")), want));
		}
		json_decref(rs);
		json_decref(rq);
	}
}

/* Round 1's implementation of the plan's idea: its first point is the plan's
 * parameters on the template's defaults, whatever the seed, the other point
 * from the idea's shuffle; when that kernel exists already (an earlier
 * round's), the slot goes to another point and the record says so. Round 2
 * takes no plan point. */
static void test_builtin_plan_point(void **state)
{
	static const char prob[] = "level1/089_cumsum";
	struct buf err = BUF_INIT, path = BUF_INIT, src = BUF_INIT;
	struct proposer pr;
	struct proposer_problem pp;
	struct builtin_plan bp;
	struct idea it = { 0 };
	json_t *spec, *planp, *full;
	char h[65];

	(void)state;
	buf_addf(&path, "%s/problems/%s/spec.json", getenv("KF_ROOT") ? getenv("KF_ROOT") : ".", prob);
	spec = json_load_file(path.s, 0, NULL);
	assert_non_null(spec);
	memset(&pp, 0, sizeof(pp));
	pp.id = prob;
	pp.spec = spec;
	pp.arch = "";                                   /* none named: sm_90 */
	assert_int_equal(builtin_best_plan(spec, NULL, &bp), 1);
	assert_string_equal(bp.template_id, "scan"); /* an idea of 4 points */
	planp = json_loads(bp.params, 0, NULL);
	full = builtin_tmpl_params(bp.template_id, planp);
	assert_int_equal(builtin_tmpl_render(bp.template_id, spec, full, &src, &err), 0);
	candidate_hash(src.s, src.len, h);
	it.catalogue_id = (char *)bp.idea;
	assert_int_equal(builtin_proposer_open(&pr, &err), 0);
	for (int known = 0; known < 2; known++)
		for (unsigned long long seed = 1; seed <= 3; seed++)
			for (int round = 1; round <= 2; round++) {
				const char *kn[1] = { h };
				struct impl_request rq = { &pp, &it, NULL, 0, 2, round, seed,
							   known ? kn : NULL, known, NULL, 0 };
				struct proposal_list pl;
				struct proposer_record rec;
				json_t *rs, *plan;
				int has = 0;
				proposal_list_init(&pl);
				proposer_record_init(&rec);
				assert_int_equal(pr.implement(pr.self, &rq, &pl, &rec, &err), 0);
				assert_int_equal(pl.n, 2);
				for (int i = 0; i < pl.n; i++)
					has |= json_equal(pl.v[i].params, full);
				rs = json_loads(rec.response.s, 0, NULL);
				plan = json_object_get(rs, "plan");
				if (round == 2) {
					/* later rounds: no plan point, no plan record */
					assert_null(plan);
				} else if (!known) {
					assert_true(json_equal(pl.v[0].params, full));
					assert_non_null(strstr(pl.v[0].note, "best-known plan"));
					assert_null(strstr(pl.v[1].note, "best-known plan"));
					assert_true(json_is_true(json_object_get(plan, "made")));
					assert_true(json_equal(json_object_get(plan, "params"), planp));
					assert_string_equal(json_string_value(json_object_get(plan, "evidence")),
							    bp.evidence);
				} else {
					assert_false(has);
					assert_true(json_is_false(json_object_get(plan, "made")));
					assert_true(json_integer_value(json_object_get(rs, "skipped_known")) >= 1);
				}
				json_decref(rs);
				proposal_list_release(&pl);
				proposer_record_release(&rec);
			}
	if (pr.release)
		pr.release(pr.self);
	json_decref(full);
	json_decref(planp);
	json_decref(spec);
	buf_release(&src);
	buf_release(&err);
	buf_release(&path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_problem_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_identity, setup, teardown),
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_profile_text),
		cmocka_unit_test(test_builtin_limiter),
		cmocka_unit_test(test_builtin_plan_point),
		cmocka_unit_test_setup_teardown(test_cache_scope, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
