/* Worker requests besides evaluations: reference samples for `kforge
 * problems check`, and the GPU's measured ceilings for the roofline. */
#include "worker_int.h"
#include "core/json.h"
#include "core/proc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


#define SAMPLE_MAX 100000

int wk_sample(struct worker *w, const json_t *req, const struct buf *bin, json_t **res,
	      struct buf *err)
{
	const CUdeviceptr *outs = NULL;
	double ms = 0;
	int o = (int)jget_int(req, "out", 0);
	const json_t *idx = json_object_get(req, "idx");
	json_t *vals;
	size_t i, n = json_array_size(idx);

	*res = NULL;
	if (n > SAMPLE_MAX)
		return kf_err(err, "too many sample indices (%zu > %d)", n, SAMPLE_MAX);
	if (wk_ensure_ref_values(w, req, bin, (unsigned long long)jget_int(req, "seed", 0),
				 strcmp(jget_str(req, "draw", ""), "alive") ? 0 : WK_DIST_ALIVE, &outs,
				 &ms, err) < 0)
		return -1;
	if (o < 0 || o >= w->p.n_out)
		return kf_err(err, "no output %d", o);
	vals = json_array();
	for (i = 0; i < n; i++) {
		const struct problem_tensor *t = &w->p.t[w->p.n_in + o];
		long long f = json_integer_value(json_array_get(idx, i));
		size_t es = kf_dtype_size(t->dtype);
		unsigned char b[8] = { 0 };
		double v;
		CUresult r;
		if (f < 0 || f >= t->numel) {
			json_decref(vals);
			return kf_err(err, "sample index %lld out of range (output has %lld elements)", f, t->numel);
		}
		r = w->d.cuMemcpyDtoH(b, outs[o] + (size_t)f * es, es);
		if (r != CUDA_SUCCESS) {
			json_decref(vals);
			return wk_cuda_err(w, r, "reading reference values", err);
		}
		wk_unmask(w, b, (size_t)f * es, es);
		v = wk_host_decode(b, t->dtype);
		json_array_append_new(vals, isfinite(v) ? json_real(v) : json_null());
	}
	*res = json_pack("{s:o,s:f}", "values", vals, "time_ms", ms);
	return 0;
}

static double best_ms(struct worker *w, CUfunction f, unsigned grid, void **args, int reps,
		      struct buf *err)
{
	double best = INFINITY;

	for (int i = 0; i < reps; i++) {
		float ms = 0;
		w->d.cuEventRecord(w->ev[0], w->st);
		if (w->d.cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, w->st, args, NULL) != CUDA_SUCCESS)
			return -1;
		w->d.cuEventRecord(w->ev[1], w->st);
		if (wk_wait(w, w->ev[1], 30, err) != 0)
			return -1;
		w->d.cuEventElapsedTime(&ms, w->ev[0], w->ev[1]);
		if (ms > 0 && ms < best)
			best = ms;
	}
	return best;
}

int wk_peaks(struct worker *w, json_t **res, struct buf *err)
{
	struct wk_buf a, b;
	size_t bytes = 1u << 30, fr = 0, tot = 0;
	long long sm = jget_int(w->info, "sm_count", 132);
	double ms_bw, ms_f, gbs, gflops;
	int iters = 4096;
	unsigned grid_f = (unsigned)(sm * 32);
	CUdeviceptr dummy = w->slots;

	*res = NULL;
	wk_progress(w, 60);
	w->d.cuMemGetInfo(&fr, &tot);
	while (bytes > (64u << 20) && 3 * bytes > fr)
		bytes /= 2;
	if (wk_alloc(w, &a, bytes, err) < 0)
		return -1;
	if (wk_alloc(w, &b, bytes, err) < 0) {
		wk_free(w, &a);
		return -1;
	}
	{
		CUdeviceptr s = a.data, d = b.data;
		unsigned long long n16 = bytes / 16;
		void *args[] = { &d, &s, &n16 };
		ms_bw = best_ms(w, w->f_copy, (unsigned)(sm * 8), args, 10, err);
	}
	{
		void *args[] = { &dummy, &iters };
		ms_f = best_ms(w, w->f_fma, grid_f, args, 5, err);
	}
	wk_free(w, &a);
	wk_free(w, &b);
	if (ms_bw <= 0 || ms_f <= 0 || !isfinite(ms_bw) || !isfinite(ms_f))
		return kf_err(err, "peak measurement failed: %s", err->s);
	gbs = 2.0 * (double)bytes / (ms_bw * 1e-3) / 1e9;
	gflops = (double)grid_f * 256.0 * iters * 16.0 / (ms_f * 1e-3) / 1e9;
	*res = json_pack("{s:f,s:f,s:I}", "gbs", gbs, "gflops", gflops, "bytes", (json_int_t)bytes);
	return 0;
}
