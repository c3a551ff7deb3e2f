/* Timing in the GPU worker (DESIGN.md): warm-ups and timed trials, CUDA
 * events around each launch block and CUPTI kernel durations. Every trial
 * is launched as a check trial is (wk_launch_candidate: module reloaded,
 * shared memory scrubbed, outputs poisoned, scratch filled, L2 flushed),
 * one at a time, and every trial's outputs are compared: a kernel cannot
 * tell that it is being timed, and one that skips work on some launches
 * fails. Inputs alternate between two check seeds (a second input set
 * when memory allows, else regenerated). Two runtime budgets end timing
 * early (both recorded): max_timing_s of kernel time (after 10 trials),
 * and prune_ms, a mean so far over the request's limit (after 3 trials;
 * the search sets it to a multiple of PyTorch eager's time, a kernel it
 * will never keep). */
#include "worker_int.h"
#include "core/json.h"
#include "core/proc.h"

#include <stdlib.h>
#include <string.h>

static int ensure_in2(struct worker *w, struct buf *err)
{
	struct buf e2 = BUF_INIT;

	if (w->have_in2)
		return 1;
	for (int t = 0; t < w->p.n_in; t++)
		if (wk_alloc(w, &w->in2[t], w->p.t[t].bytes, &e2) < 0) {
			for (int q = 0; q < t; q++)
				wk_free(w, &w->in2[q]);
			buf_release(&e2);
			return 0;  /* no room: regenerate inputs between trials instead */
		}
	(void)err;
	buf_release(&e2);
	w->have_in2 = 1;
	w->in2_seed = ~0ull;
	return 1;
}

/* An output check failed during timing: timed_output_mismatch (the
 * guard and input checks keep their own names). */
static const char *timed_check(const char *check)
{
	if (!strcmp(check, "output_mismatch") || !strcmp(check, "partial_write") ||
	    !strcmp(check, "output_not_written") || !strcmp(check, "nan"))
		return "timed_output_mismatch";
	return check;
}

int wk_timing(struct wk_eval_state *es, struct wk_keep *kA, struct wk_keep *kB, json_t *res,
	      struct buf *err)
{
	struct worker *w = es->w;
	int warm = (int)jget_int(es->proto, "warmup", 3), n = (int)jget_int(es->proto, "timed_trials", 100);
	int total, two, r = RUN_OK, failed = 0;
	int n_cupti = 0, n_stale = 0, n_renamed = 0;
	double *cupti = NULL, spent = 0, max_ms, prune_ms = es->prune_ms, timed_ms = 0;
	json_t *times = json_array(), *env, *t;
	struct run_verdict v;
	size_t ti;

	memset(&v, 0, sizeof(v));
	buf_init(&v.detail);
	if (warm < 0)
		warm = 0;
	total = warm + n;
	if (2 * total + 4 > WK_MAX_EVENTS - 1)
		total = (WK_MAX_EVENTS - 5) / 2, n = total - warm;
	max_ms = jget_num(es->proto, "max_timing_s", 0) * 1000.0;
	two = kB != kA && ensure_in2(w, err);
	if (wk_ensure_inputs(w, kA->seed, 0, err) < 0)
		return RUN_ERR;
	if (kB != kA && two && (w->in2_seed != kB->seed || w->in2_dist != 0)) {
		if (wk_gen_inputs(w, w->in2, kB->seed, 0, err) < 0)
			return RUN_ERR;
		w->in2_seed = kB->seed;
		w->in2_dist = 0;
	}
	env = json_object();
	json_object_set_new(env, "before", wk_nvml_sample(w));
	wk_cupti_start(w, &es->cand.plan);
	wk_progress(w, 3 * es->timeout_s + 30);
	for (int j = 0; j < total; j++) {
		int useB = (j & 1) && kB != kA;
		struct wk_keep *k = useB ? kB : kA;
		const struct wk_buf *ins = useB && two ? w->in2 : w->in;
		char what[96];
		int done, spent_out, pruned;

		if (!two && kB != kA && wk_ensure_inputs(w, k->seed, 0, err) < 0) {
			r = RUN_ERR;
			break;
		}
		snprintf(what, sizeof(what), "%s trial %d (seed %llu)", j < warm ? "warm-up" : "timed",
			 j < warm ? j : j - warm, k->seed);
		buf_reset(&v.detail);
		v.check[0] = '\0';
		/* Launched and checked as a check trial is: the kernel cannot tell
		 * that it is being timed, and every trial's outputs are compared. */
		r = wk_checked_run(es, k, ins, what, w->ev[2 * j], w->ev[2 * j + 1], &v, err);
		if (r == 1) {
			if (j >= warm)
				json_array_append_new(times, wk_trial_json(j - warm, k->seed, &v, 0));
			snprintf(v.check, sizeof(v.check), "%s", timed_check(v.check));
			failed = 1;
			r = RUN_OK;
			total = j + 1;
			break;
		}
		if (r != RUN_OK)
			break;
		if (j >= warm)
			json_array_append_new(times, wk_trial_json(j - warm, k->seed, &v, 1));
		/* A time budget ends slow kernels' timing early (recorded). */
		spent += v.time_ms;
		if (j >= warm)
			timed_ms += v.time_ms;
		done = j + 1 - warm;   /* timed trials finished */
		spent_out = max_ms > 0 && spent > max_ms && done >= 10;
		pruned = !spent_out && prune_ms > 0 && done >= 3 && timed_ms > prune_ms * done;
		if (spent_out || pruned) {
			if (pruned)
				json_object_set_new(env, "pruned", json_pack("{s:i,s:f,s:f}", "decided_after",
					done, "mean_ms", timed_ms / done, "limit_ms", prune_ms));
			total = j + 1;
			break;
		}
		wk_progress(w, 3 * es->timeout_s + 30);
	}
	{
		double t0 = now_s();
		cupti = wk_cupti_stop(w, &n_cupti, &n_stale, &n_renamed);
		es->ph[WK_PH_CUPTI] += (now_s() - t0) * 1000.0;
	}
	json_object_set_new(env, "after", wk_nvml_sample(w));
	json_object_set_new(res, "env", env);
	if (r != RUN_OK) {
		free(cupti);
		json_decref(times);
		buf_release(&v.detail);
		return r;
	}
	json_object_set_new(res, "time", times);
	if (n_cupti > total * es->cand.plan.n_steps) {
		/* Extra records can only be older launches: keep the last ones. */
		int extra = n_cupti - total * es->cand.plan.n_steps;
		memmove(cupti, cupti + extra, sizeof(*cupti) * (size_t)(n_cupti - extra));
		json_object_set_new(env, "cupti_note", json_sprintf("%d extra records dropped", extra));
		n_cupti -= extra;
	}
	if (n_stale)
		json_object_set_new(env, "cupti_stale", json_integer(n_stale));
	if (n_renamed)   /* CUPTI named them after an unloaded module's kernel (kept) */
		json_object_set_new(env, "cupti_renamed", json_integer(n_renamed));
	if (n_cupti != total * es->cand.plan.n_steps) {
		/* Records lost or CUPTI off: events only. */
		free(cupti);
		cupti = NULL;
		json_object_set_new(env, "cupti_note",
				    w->cupti ? json_sprintf("%d kernel records for %d launches", n_cupti,
							    total * es->cand.plan.n_steps)
					     : json_string("CUPTI off"));
		if (w->cupti)
			json_object_set_new(env, "cupti_diag", wk_cupti_diag());
	}
	json_array_foreach(times, ti, t) {
		int j = (int)jget_int(t, "idx", 0) + warm;
		double c = 0;
		if (!cupti)
			break;
		for (int q = 0; q < es->cand.plan.n_steps; q++)
			c += cupti[j * es->cand.plan.n_steps + q];
		json_object_set_new(t, "cupti_ms", json_real(c));
	}
	free(cupti);
	r = 0;
	if (failed) {
		wk_run_status(res, 1, &v, NULL, err);
		r = 1;
	}
	buf_release(&v.detail);
	return r;
}
