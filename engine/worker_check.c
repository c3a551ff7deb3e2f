/* One checked run: the candidate launched, then its outputs compared with
 * the kept reference, the inputs' checksums and the guards counted, and
 * the verdict judged from the result slots. */
#include "worker_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- one checked run ------------------------------------------------------- */

double wk_host_decode(const unsigned char *p, enum kf_dtype t)
{
	switch (t) {
	case KF_F32: { float f; memcpy(&f, p, 4); return f; }
	case KF_F16: {
		unsigned h = (unsigned)p[0] | ((unsigned)p[1] << 8);
		unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
		double v = e == 0 ? m * ldexp(1, -24) : e == 31 ? (m ? NAN : INFINITY)
				    : ldexp(1.0 + m / 1024.0, (int)e - 15);
		return (h >> 15) ? -v : v;
	}
	case KF_BF16: {
		unsigned u = ((unsigned)p[0] | ((unsigned)p[1] << 8)) << 16;
		float f;
		memcpy(&f, &u, 4);
		return f;
	}
	case KF_I64: { long long v; memcpy(&v, p, 8); return (double)v; }
	case KF_I32: { int v; memcpy(&v, p, 4); return v; }
	default: return p[0];
	}
}

double wk_finite_or_big(double v)
{
	return isfinite(v) ? v : 1e300;
}

double wk_bits_d(unsigned long long u)
{
	double d;
	memcpy(&d, &u, 8);
	return d;
}


/* Launches the compares, checksums and guard counts after a run; slots
 * base.. (n_out compares, n_in sums, 1 guard). */
int wk_post_checks(struct wk_eval_state *es, struct wk_keep *k, const struct wk_buf *ins,
		       int base, int verify_out, struct buf *err)
{
	struct worker *w = es->w;
	int g = base + w->p.n_out + w->p.n_in;

	for (int o = 0; verify_out && o < w->p.n_out; o++)
		if (wk_compare(w, es, o, k->out[o], base + o, err) < 0)
			return -1;
	for (int t = 0; t < w->p.n_in; t++)
		if (wk_checksum(w, &ins[t], base + w->p.n_out + t, err) < 0)
			return -1;
	for (int t = 0; t < w->p.n_in; t++)
		if (wk_count_guard(w, &ins[t], g, err) < 0)
			return -1;
	for (int o = 0; o < w->p.n_out; o++)
		if (wk_count_guard(w, &w->out[o], g, err) < 0)
			return -1;
	for (int i = 0; i < es->cand.plan.n_scratch; i++)
		if (wk_count_guard(w, &es->cand.scratch[i], g, err) < 0)
			return -1;
	return 0;
}

/* Reads the verdict of slots base.. into v; 0 pass, 1 fail. */
int wk_judge(struct wk_eval_state *es, struct wk_keep *k, int base, int verify_out,
		 const char *what, struct run_verdict *v)
{
	struct worker *w = es->w;
	const unsigned long long *h = w->hslots;
	int g = base + w->p.n_out + w->p.n_in;

	v->max_abs = v->max_rel = 0;
	v->mismatches = 0;
	if (h[g * WK_SLOT_U64]) {
		snprintf(v->check, sizeof(v->check), "guard_overwritten");
		buf_addf(&v->detail, "%s: %llu bytes of the guard canaries around the buffers were overwritten (out-of-bounds write)",
			 what, h[g * WK_SLOT_U64]);
		return 1;
	}
	for (int t = 0; t < w->p.n_in; t++)
		if (h[(base + w->p.n_out + t) * WK_SLOT_U64] != k->in_sum[t]) {
			snprintf(v->check, sizeof(v->check), "inputs_modified");
			buf_addf(&v->detail, "%s: input %s was modified by the kernel", what, w->p.t[t].name);
			return 1;
		}
	return verify_out ? wk_judge_outputs(es, k, base, what, v) : 0;
}

int wk_judge_outputs(struct wk_eval_state *es, struct wk_keep *k, int base, const char *what,
		     struct run_verdict *v)
{
	struct worker *w = es->w;
	const unsigned long long *h = w->hslots;

	for (int o = 0; o < w->p.n_out; o++) {
		const unsigned long long *s = h + (size_t)(base + o) * WK_SLOT_U64;
		const struct problem_tensor *t = &w->p.t[w->p.n_in + o];
		double ma = wk_bits_d(s[0]), mr = wk_bits_d(s[1]);
		long long mis = (long long)s[2], nans = (long long)s[3], poi = (long long)s[4];
		if (ma > v->max_abs)
			v->max_abs = ma;
		if (mr > v->max_rel)
			v->max_rel = mr;
		if (mis && !nans && !poi && es->normwise &&
		    ma <= es->atol + es->rtol * wk_bits_d(s[6])) {
			/* Mixed-sign draws (normal, wide uniform) make long fp32 sums
			 * cancel: near-zero outputs carry the rounding of terms of the
			 * output's scale. Within the tolerance at that scale: a pass. */
			mis = 0;
		}
		v->mismatches += mis;
		if (!mis && !nans && !poi)
			continue;
		if (poi >= t->numel) {
			snprintf(v->check, sizeof(v->check), "output_not_written");
			buf_addf(&v->detail, "%s: output %s was not written at all", what, t->name);
		} else if (poi > 0 && mis > 0) {
			snprintf(v->check, sizeof(v->check), "partial_write");
			buf_addf(&v->detail, "%s: output %s: %lld of %lld elements were not written",
				 what, t->name, poi, t->numel);
		} else if (nans > 0 && mis > 0) {
			snprintf(v->check, sizeof(v->check), "nan");
			buf_addf(&v->detail, "%s: output %s: %lld NaN values", what, t->name, nans);
		} else if (mis > 0) {
			snprintf(v->check, sizeof(v->check), "output_mismatch");
			buf_addf(&v->detail, "%s: output %s: %lld of %lld elements differ (max abs err %.3g, max rel err %.3g, atol %g, rtol %g)",
				 what, t->name, mis, t->numel, wk_finite_or_big(ma), wk_finite_or_big(mr),
				 es->atol, es->rtol);
		} else {
			continue;
		}
		if (s[5] > 0 && s[5] <= (unsigned long long)t->numel) {
			/* One example, for the author. */
			unsigned char a[8] = { 0 }, b[8] = { 0 };
			size_t es_ = kf_dtype_size(t->dtype), off = (size_t)(s[5] - 1) * es_;
			if (w->d.cuMemcpyDtoH(a, w->out[o].data + off, es_) == CUDA_SUCCESS &&
			    w->d.cuMemcpyDtoH(b, k->out[o] + off, es_) == CUDA_SUCCESS &&
			    (wk_unmask(w, b, off, es_), 1))
				buf_addf(&v->detail, "; e.g. flat index %llu: got %.9g, expected %.9g",
					 s[5] - 1, wk_host_decode(a, t->dtype), wk_host_decode(b, t->dtype));
		}
		return 1;
	}
	return 0;
}

int wk_checked_run(struct wk_eval_state *es, struct wk_keep *k, const struct wk_buf *ins,
		   const char *what, CUevent e0, CUevent e1, struct run_verdict *v, struct buf *err)
{
	struct worker *w = es->w;
	int nslots = w->p.n_out + w->p.n_in + 1, r;
	float ms = 0;

	w->d.cuMemsetD8Async(w->slots, 0, (size_t)nslots * WK_SLOT_U64 * 8, w->st);
	r = wk_launch_candidate(es, ins, e0, e1, err);
	if (r != RUN_OK)
		return r;
	/* The checks are queued behind the launch: the same work after every one. */
	if (wk_post_checks(es, k, ins, 0, 1, err) < 0)
		return RUN_ERR;
	r = wk_wait(w, e1, es->timeout_s, err);
	if (r == -2) {
		w->fatal = 1;
		kf_err(err, "%s: the launch block did not finish within %g s", what, es->timeout_s);
		return RUN_TIMEOUT;
	}
	if (r < 0)
		return RUN_ERR;
	w->d.cuEventElapsedTime(&ms, e0, e1);
	v->time_ms = ms;
	es->kernel_ms += ms;
	if (wk_read_slots(w, nslots, es->timeout_s + 10, err) < 0)
		return RUN_ERR;
	r = wk_judge(es, k, 0, 1, what, v);
	return r ? r : wk_degenerate_check(es, k, what, v, err);
}

json_t *wk_trial_json(int idx, unsigned long long seed, const struct run_verdict *v, int ok)
{
	return json_pack("{s:i,s:I,s:f,s:f,s:f,s:I,s:b}", "idx", idx, "seed", (json_int_t)seed,
			 "time_ms", v->time_ms, "max_abs_err", wk_finite_or_big(v->max_abs),
			 "max_rel_err", wk_finite_or_big(v->max_rel), "mismatches",
			 (json_int_t)v->mismatches, "ok", ok);
}

void wk_set_result(json_t *res, const char *status, const char *check, const char *detail)
{
	json_object_set_new(res, "status", json_string(status));
	json_object_set_new(res, "failed_check", json_string(check ? check : ""));
	json_object_set_new(res, "detail", json_string(detail ? detail : ""));
}

/* Maps a non-pass run result to the eval status. 1 when the eval ends. */
int wk_run_status(json_t *res, int r, const struct run_verdict *v, const char *fail_check,
		      struct buf *err)
{
	switch (r) {
	case RUN_OK:
		return 0;
	case 1:
		wk_set_result(res, "incorrect", fail_check ? fail_check : v->check, v->detail.s);
		return 1;
	case RUN_TIMEOUT:
		wk_set_result(res, "timeout", NULL, err->s);
		return 1;
	case RUN_LAUNCH:
		wk_set_result(res, "launch_error", NULL, err->s);
		return 1;
	default:
		wk_set_result(res, "runtime_error", NULL, err->s);
		return 1;
	}
}
