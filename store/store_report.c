#include "store_report.h"
#include "store_lineage.h"
#include "store_verify.h"
#include "core/json.h"
#include "problem/problem.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

int store_report_find_problem(struct store *s, const char *q, struct buf *id, struct buf *err)
{
	json_t *rows = store_query_all(s, "SELECT id, level, number FROM problems ORDER BY level, number",
				       NULL, err);
	struct problem_name *v;
	size_t i, n;
	int r;

	if (!rows)
		return -1;
	n = json_array_size(rows);
	v = xcalloc(n + 1, sizeof(*v));
	for (i = 0; i < n; i++) {
		json_t *row = json_array_get(rows, i);
		v[i].id = jget_str(row, "id", "");
		v[i].level = (int)jget_int(row, "level", -1);
		v[i].number = (int)jget_int(row, "number", -1);
	}
	r = problem_name_one(v, (int)n, q, err);
	if (r >= 0) {
		buf_reset(id);
		buf_adds(id, v[r].id);
	}
	free(v);
	json_decref(rows);
	return r < 0 ? r : 0;
}

static json_t *run_info(struct store *s, const char *sql, const char *arg, struct buf *err)
{
	json_t *row = NULL, *pa = json_pack("[s]", arg), *cfg, *out;

	if (store_query_one(s, sql, pa, &row, err) < 0) {
		json_decref(pa);
		return NULL;
	}
	json_decref(pa);
	if (!row)
		return NULL;
	cfg = json_loads(jget_str(row, "config", "{}"), 0, NULL);
	out = json_pack("{s:s,s:s,s:s,s:s?,s:I,s:s,s:s,s:s,s:I,s:s?,s:s?}", "id", jget_str(row, "id", ""),
			"strategy", jget_str(row, "strategy", ""), "proposer",
			jget_str(row, "proposer", ""), "model", jget_str(row, "model", NULL), "seed",
			(json_int_t)jget_int(row, "seed", 0), "status", jget_str(row, "status", ""),
			"gpu_name", jget_str(row, "gpu_name", ""), "protocol",
			jget_str(cfg, "protocol", "collect-v1"), "rounds",
			(json_int_t)jget_int(cfg, "rounds", 0), "created_at",
			jget_str(row, "created_at", NULL), "finished_at", jget_str(row, "finished_at", NULL));
	json_object_set(out, "compile_only", json_object_get(cfg, "compile_only") ? json_object_get(cfg, "compile_only") : json_false());
	json_decref(cfg);
	json_decref(row);
	return out;
}

/* The model: as configured, else as the proposer reported it. */
#define RUN_COLS "id, strategy, proposer, COALESCE(model, (SELECT l.model FROM llm_calls l" \
	" WHERE l.run_id = runs.id AND l.model IS NOT NULL ORDER BY l.rowid LIMIT 1)) AS model," \
	" seed, status, gpu_name, config, created_at, finished_at"

/* Candidates with results, verification state on the run's GPU. */
static json_t *cands(struct store *s, const char *run_id, const char *problem_id,
		     const char *gpu, const char *protocol, struct buf *err)
{
	json_t *pa = json_pack("[s,s,s,s]", run_id, problem_id, gpu, protocol);
	json_t *r = store_query_all(
		s,
		"SELECT c.id, c.round, c.idea_id, c.status, c.kernel_hash, e.time_mean_ms, sp.speedup_eager,"
		" EXISTS(SELECT 1 FROM " KF_VERDICTS("verifications") " v WHERE v.kernel_hash = c.kernel_hash"
		"  AND v.problem_id = c.problem_id AND v.gpu_name = ?3"
		"  AND " KF_FLAGGED_VERDICT " IN ('failed', 'flagged')) AS vfailed"
		" FROM candidates c LEFT JOIN evals e ON e.kernel_hash = c.kernel_hash"
		"  AND e.problem_id = c.problem_id AND e.gpu_name = ?3 AND e.protocol = ?4"
		" LEFT JOIN eval_speedups sp ON sp.eval_id = e.id"
		" WHERE c.run_id = ?1 AND c.problem_id = ?2 ORDER BY c.round, c.rowid",
		pa, err);
	json_decref(pa);
	return r;
}

static int compiled(const char *st)
{
	return strcmp(st, "pending") && strcmp(st, "format_error") && strcmp(st, "compile_error");
}

/* Is a better than b (both correct)? Faster first, then the smaller id. */
static int better(const json_t *a, const json_t *b)
{
	double ta = jget_num(a, "time_mean_ms", 0), tb = jget_num(b, "time_mean_ms", 0);
	if (!b)
		return 1;
	if ((ta > 0) != (tb > 0))
		return ta > 0;
	if (ta != tb)
		return ta < tb;
	return strcmp(jget_str(a, "id", ""), jget_str(b, "id", "")) < 0;
}

struct agg {
	int kernels, compiled, correct;
	const json_t *best;
};

static void agg_add(struct agg *g, const json_t *c, json_t *excluded)
{
	const char *st = jget_str(c, "status", "");
	g->kernels++;
	g->compiled += compiled(st);
	if (strcmp(st, "correct"))
		return;
	g->correct++;
	if (jget_int(c, "vfailed", 0)) {
		if (excluded)
			json_array_append_new(excluded, json_string(jget_str(c, "id", "")));
		return;
	}
	if (better(c, g->best))
		g->best = c;
}

static void agg_put(json_t *o, const struct agg *g)
{
	json_object_set_new(o, "kernels", json_integer(g->kernels));
	json_object_set_new(o, "compiled", json_integer(g->compiled));
	json_object_set_new(o, "correct", json_integer(g->correct));
	json_object_set_new(o, "best_speedup", g->best && jget_num(g->best, "speedup_eager", 0) > 0
						       ? json_real(jget_num(g->best, "speedup_eager", 0))
						       : json_null());
	json_object_set_new(o, "best_ms", g->best && jget_num(g->best, "time_mean_ms", 0) > 0
						  ? json_real(jget_num(g->best, "time_mean_ms", 0))
						  : json_null());
	json_object_set_new(o, "best", g->best ? json_string(jget_str(g->best, "id", "")) : json_null());
}

static json_t *idea_of(struct store *s, const char *idea_id, struct buf *err)
{
	json_t *row = NULL, *pa = json_pack("[s]", idea_id), *cats;
	if (store_query_one(s, "SELECT id, text, round, catalogue_id FROM ideas WHERE id = ?", pa, &row, err) < 0 || !row) {
		json_decref(pa);
		return json_null();
	}
	cats = store_query_all(s, "SELECT category, method FROM idea_categories WHERE idea_id = ? ORDER BY category",
			       pa, err);
	json_decref(pa);
	json_object_set_new(row, "categories", cats ? cats : json_array());
	return row;
}

json_t *store_report_problem(struct store *s, const char *problem_id, const char *run_id,
			     struct buf *err)
{
	json_t *run, *cs = NULL, *out = NULL, *rounds, *excluded, *c, *prob = NULL, *pa;
	struct agg all = { 0 };
	size_t i;

	if (run_id)
		run = run_info(s, "SELECT " RUN_COLS " FROM runs WHERE id = ?", run_id, err);
	else
		run = run_info(s, "SELECT " RUN_COLS " FROM runs WHERE id = (SELECT run_id FROM candidates"
				  " WHERE problem_id = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 1)",
			       problem_id, err);
	if (!run) {
		if (!err->len)
			kf_err(err, "no search of %s in the store%s%s", problem_id, run_id ? " run " : "",
			       run_id ? run_id : "");
		return NULL;
	}
	cs = cands(s, jget_str(run, "id", ""), problem_id, jget_str(run, "gpu_name", ""),
		   jget_str(run, "protocol", ""), err);
	if (!cs)
		goto out;
	pa = json_pack("[s]", problem_id);
	store_query_one(s, "SELECT id, name, level, number FROM problems WHERE id = ?", pa, &prob, err);
	json_decref(pa);
	excluded = json_array();
	json_array_foreach(cs, i, c)
		agg_add(&all, c, excluded);
	rounds = json_array();
	{
		/* Every round the search opened, and any round holding candidates. */
		json_t *rr, *rp = json_pack("[s,s]", jget_str(run, "id", ""), problem_id), *x;
		int maxr = -1;
		size_t k;
		rr = store_query_all(s, "SELECT round, status FROM rounds WHERE run_id = ? AND problem_id = ?",
				     rp, err);
		json_decref(rp);
		json_array_foreach(cs, i, c)
			if (jget_int(c, "round", 0) > maxr)
				maxr = (int)jget_int(c, "round", 0);
		json_array_foreach(rr, k, x)
			if (jget_int(x, "round", 0) > maxr)
				maxr = (int)jget_int(x, "round", 0);
		for (int r = 0; r <= maxr; r++) {
			struct agg g = { 0 };
			const char *status = NULL;
			json_t *o;
			json_array_foreach(cs, i, c)
				if (jget_int(c, "round", -1) == r)
					agg_add(&g, c, NULL);
			json_array_foreach(rr, k, x)
				if (jget_int(x, "round", -1) == r)
					status = jget_str(x, "status", NULL);
			if (!g.kernels && !status)
				continue;
			o = json_pack("{s:i,s:s?}", "round", r, "status", status);
			agg_put(o, &g);
			json_array_append_new(rounds, o);
		}
		json_decref(rr);
	}
	out = json_pack("{s:o,s:o,s:o,s:o,s:o}", "problem", prob ? prob : json_pack("{s:s}", "id", problem_id),
			"run", json_incref(run), "stats", json_object(), "rounds", rounds, "excluded",
			excluded);
	agg_put(json_object_get(out, "stats"), &all);
	if (all.best) {
		json_t *best, *ver, *vpa;
		vpa = json_pack("[s,s]", jget_str(all.best, "kernel_hash", ""), problem_id);
		ver = store_query_all(s, "SELECT DISTINCT gpu_name FROM " KF_VERDICTS("verifications")
					 " WHERE kernel_hash = ?"
					 " AND problem_id = ? AND verdict = 'verified' ORDER BY gpu_name", vpa, err);
		json_decref(vpa);
		best = json_pack("{s:s,s:I,s:s?,s:o,s:o,s:o}", "id", jget_str(all.best, "id", ""), "round",
				 (json_int_t)jget_int(all.best, "round", 0), "kernel_hash",
				 jget_str(all.best, "kernel_hash", NULL), "speedup",
				 jget_num(all.best, "speedup_eager", 0) > 0 ? json_real(jget_num(all.best, "speedup_eager", 0)) : json_null(),
				 "time_ms",
				 jget_num(all.best, "time_mean_ms", 0) > 0 ? json_real(jget_num(all.best, "time_mean_ms", 0)) : json_null(),
				 "verified_on", json_array());
		for (size_t k = 0; ver && k < json_array_size(ver); k++)
			json_array_append(json_object_get(best, "verified_on"),
					  json_object_get(json_array_get(ver, k), "gpu_name"));
		json_decref(ver);
		json_object_set_new(best, "idea", jget_str(all.best, "idea_id", NULL)
							 ? idea_of(s, jget_str(all.best, "idea_id", ""), err)
							 : json_null());
		json_object_set_new(out, "best", best);
		/* issue 41: its profile on the run's GPU, the ideas that led to it */
		json_t *prof = NULL, *chain;
		if (store_kernel_profile(s, jget_str(all.best, "kernel_hash", ""), problem_id,
					 jget_str(run, "gpu_name", ""), &prof, err) < 0 ||
		    !(chain = store_idea_chain(s, jget_str(all.best, "id", ""),
					       jget_str(run, "gpu_name", ""), STORE_CHAIN_MAX, err))) {
			json_decref(out);
			out = NULL;
			goto out;
		}
		json_object_set_new(best, "profile", prof ? prof : json_null());
		json_object_set_new(out, "chain", chain);
	} else {
		json_object_set_new(out, "best", json_null());
		json_object_set_new(out, "chain", json_array());
	}
out:
	json_decref(cs);
	json_decref(run);
	return out;
}

json_t *store_report_run(struct store *s, const char *run_id, struct buf *err)
{
	json_t *run, *probs, *p, *out, *list;
	size_t i;

	if (run_id)
		run = run_info(s, "SELECT " RUN_COLS " FROM runs WHERE id = ?", run_id, err);
	else
		run = run_info(s, "SELECT " RUN_COLS " FROM runs WHERE ?1 = ?1 ORDER BY created_at DESC, rowid DESC LIMIT 1",
			       "", err);
	if (!run) {
		if (!err->len)
			kf_err(err, run_id ? "no run %s in the store" : "no search in the store%s",
			       run_id ? run_id : "");
		return NULL;
	}
	{
		json_t *pa = json_pack("[s]", jget_str(run, "id", ""));
		probs = store_query_all(s, "SELECT DISTINCT problem_id FROM rounds WHERE run_id = ? ORDER BY problem_id",
					pa, err);
		json_decref(pa);
	}
	if (!probs) {
		json_decref(run);
		return NULL;
	}
	list = json_array();
	json_array_foreach(probs, i, p) {
		const char *pid = jget_str(p, "problem_id", "");
		json_t *cs = cands(s, jget_str(run, "id", ""), pid, jget_str(run, "gpu_name", ""),
				   jget_str(run, "protocol", ""), err), *c, *o;
		struct agg g = { 0 };
		size_t j;
		if (!cs)
			continue;
		json_array_foreach(cs, j, c)
			agg_add(&g, c, NULL);
		o = json_pack("{s:s}", "id", pid);
		agg_put(o, &g);
		json_array_append_new(list, o);
		json_decref(cs);
	}
	json_decref(probs);
	out = json_pack("{s:o,s:o}", "run", run, "problems", list);
	return out;
}

json_t *store_report_gpus(struct store *s, struct buf *err)
{
	json_t *gpus, *rows, *r, *out, *probs, *names;
	size_t i;

	gpus = store_query_all(s,
			       "SELECT name FROM gpus UNION SELECT gpu_name FROM verifications"
			       " UNION SELECT gpu_name FROM evals WHERE gpu_name != '' ORDER BY 1",
			       NULL, err);
	if (!gpus)
		return NULL;
	rows = store_query_all(
		s,
		"SELECT v.problem_id, v.gpu_name, v.kernel_hash, e.time_mean_ms, sp.speedup_eager"
		" FROM " KF_VERDICTS("verifications") " v JOIN evals e ON e.id = v.eval_id"
		" LEFT JOIN eval_speedups sp ON sp.eval_id = v.eval_id"
		" WHERE " KF_FLAGGED_VERDICT " = 'verified'"   /* flagged: not verified */
		" ORDER BY v.problem_id, v.gpu_name, e.time_mean_ms IS NULL, e.time_mean_ms, v.kernel_hash",
		NULL, err);
	if (!rows) {
		json_decref(gpus);
		return NULL;
	}
	names = json_column(gpus, "name");
	probs = json_array();
	json_array_foreach(rows, i, r) {
		const char *pid = jget_str(r, "problem_id", "");
		json_t *last = json_array_size(probs) ? json_array_get(probs, json_array_size(probs) - 1) : NULL;
		json_t *best;
		if (!last || strcmp(jget_str(last, "id", ""), pid)) {
			last = json_pack("{s:s,s:{}}", "id", pid, "best");
			json_array_append_new(probs, last);
		}
		best = json_object_get(last, "best");
		/* Rows come fastest first per (problem, GPU): keep the first. */
		if (json_object_get(best, jget_str(r, "gpu_name", "")))
			continue;
		json_object_set_new(best, jget_str(r, "gpu_name", ""),
				    json_pack("{s:s,s:o,s:o}", "kernel_hash", jget_str(r, "kernel_hash", ""),
					      "speedup", jget_num(r, "speedup_eager", 0) > 0 ? json_real(jget_num(r, "speedup_eager", 0)) : json_null(),
					      "time_ms", jget_num(r, "time_mean_ms", 0) > 0 ? json_real(jget_num(r, "time_mean_ms", 0)) : json_null()));
	}
	json_decref(rows);
	out = json_pack("{s:o,s:o}", "gpus", names, "problems", probs);
	return out;
}
