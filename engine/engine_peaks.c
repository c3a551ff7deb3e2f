/* The GPU's measured ceilings (copy bandwidth, FP32 FMA rate) for the
 * roofline, cached per GPU model in the gpus table; and reference samples
 * for `kforge problems check`. Both are worker requests. */
#include "engine_int.h"
#include "engine/rt.h"
#include "core/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int engine_measure_peaks(struct engine *e, struct buf *err)
{
	json_t *req = json_object(), *res = NULL;
	int r = supervisor_request(e->sup, RT_PEAKS, req, NULL, 0, &res, err);

	json_decref(req);
	if (r < 0)
		return -1;
	if (json_object_get(res, "engine_error") || jget_num(res, "gbs", 0) <= 0) {
		kf_err(err, "%s", jget_str(res, "engine_error", jget_str(res, "detail", "no result")));
		json_decref(res);
		return -1;
	}
	e->peak_gbs = jget_num(res, "gbs", 0);
	e->peak_gflops = jget_num(res, "gflops", 0);
	json_decref(res);
	return 0;
}

void engine_gpu_peaks(const struct engine *e, double *gbs, double *gflops)
{
	*gbs = e->peak_gbs;
	*gflops = e->peak_gflops;
}

int engine_sample(struct engine *e, const char *problem_id, unsigned long long seed, int out,
		  const long long *idx, int n, double *values, double *time_ms, struct buf *err)
{
	return engine_sample_draw(e, problem_id, seed, 0, out, idx, n, values, time_ms, err);
}

int engine_sample_draw(struct engine *e, const char *problem_id, unsigned long long seed, int alive,
		       int out, const long long *idx, int n, double *values, double *time_ms,
		       struct buf *err)
{
	struct eng_problem *ep;
	json_t *req, *res = NULL, *ix, *vals;
	int r;

	if (e->compile_only || !e->sup)
		return kf_err(err, "reference samples need a GPU");
	if (!(ep = engine_problem(e, problem_id, err)) || engine_problem_reference(e, ep, err) < 0)
		return -1;
	ix = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(ix, json_integer(idx[i]));
	req = json_pack("{s:s,s:s,s:s,s:I,s:I,s:i,s:o}", "problem_dir", ep->dir, "ref_hash",
			ep->ref_hash, "ref_plan", ep->ref_plan.s, "ref_cubin_len",
			(json_int_t)ep->ref_cubin.len, "seed", (json_int_t)seed, "out", out, "idx", ix);
	if (alive)
		json_object_set_new(req, "draw", json_string("alive"));
	r = supervisor_request(e->sup, RT_SAMPLE, req, ep->ref_cubin.s, ep->ref_cubin.len, &res, err);
	json_decref(req);
	if (r < 0)
		return -1;
	if (!json_object_get(res, "values")) {
		kf_err(err, "%s", jget_str(res, "engine_error", jget_str(res, "detail", "reference run failed")));
		json_decref(res);
		return -1;
	}
	vals = json_object_get(res, "values");
	for (int i = 0; i < n; i++) {
		json_t *v = json_array_get(vals, (size_t)i);
		values[i] = json_is_number(v) ? json_number_value(v) : NAN;
	}
	*time_ms = jget_num(res, "time_ms", 0);
	json_decref(res);
	return 0;
}

static struct engine *sample_engine;

static void sample_engine_close(void)
{
	engine_close(sample_engine);
	sample_engine = NULL;
}

int engine_reference_sample(const struct problem *p, unsigned long long seed, int out,
			    const long long *idx, int n, double *vals, struct buf *err)
{
	return engine_reference_sample_draw(p, seed, 0, out, idx, n, vals, err);
}

int engine_reference_sample_draw(const struct problem *p, unsigned long long seed, int alive,
				 int out, const long long *idx, int n, double *vals,
				 struct buf *err)
{
	double ms = 0;
	int rc;

	if (!sample_engine) {
		struct engine_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		eval_protocol_default(&cfg.protocol);
		cfg.root = ".";
		cfg.store_path = ":memory:";
		cfg.n_compile = 2;
		if ((rc = engine_open(&sample_engine, &cfg, err)) < 0)
			return rc;
		atexit(sample_engine_close);
	}
	return engine_sample_draw(sample_engine, p->dir, seed, alive, out, idx, n, vals, &ms, err);
}
