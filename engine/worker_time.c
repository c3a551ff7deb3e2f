/* Timing in the GPU worker (DESIGN.md): warm-ups and timed trials, the L2
 * flushed before each, CUDA events around each launch block and CUPTI
 * kernel durations. Inputs alternate between two check seeds (a second
 * input set when memory allows, else regenerated), and outputs are
 * verified: all of them when small, every 16th from a random phase and
 * the last otherwise, so caching across launches or skipping work on
 * repeated inputs fails. At most two trials are queued at once, so a hang
 * is seen within the timeout. Two runtime budgets end timing early (both
 * recorded): max_timing_s of kernel time (after 10 trials), and prune_ms,
 * a mean so far over the request's limit (after 3 trials; the search sets
 * it to a multiple of PyTorch eager's time, a kernel it will never keep). */
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

int wk_timing(struct wk_eval_state *es, struct wk_keep *kA, struct wk_keep *kB, json_t *res,
		  struct buf *err)
{
	struct worker *w = es->w;
	int warm = (int)jget_int(es->proto, "warmup", 3), n = (int)jget_int(es->proto, "timed_trials", 100);
	int flush = jget_bool(es->proto, "flush_l2", 1), total, two, verify_all, per, base_g, r = RUN_OK;
	size_t out_bytes = 0;
	int n_cupti = 0, n_stale = 0, n_renamed = 0, phase;
	double *cupti = NULL, spent = 0, max_ms, prune_ms = es->prune_ms, timed_ms = 0;
	unsigned char verd[WK_MAX_EVENTS / 2];   /* trial j's outputs were compared */
	json_t *times = json_array(), *env;
	struct run_verdict v;

	memset(&v, 0, sizeof(v));
	buf_init(&v.detail);
	if (warm < 0)
		warm = 0;
	total = warm + n;
	if (2 * total + 4 > WK_MAX_EVENTS - 1)
		total = (WK_MAX_EVENTS - 5) / 2, n = total - warm;
	per = w->p.n_out;
	base_g = total * per;      /* after the per-trial compare slots: sums A, sums B, guard */
	if (base_g + 2 * w->p.n_in + 2 > WK_MAX_SLOTS)
		return kf_err(err, "too many timed trials for the stats slots");
	for (int o = 0; o < w->p.n_out; o++)
		out_bytes += w->out[o].bytes;
	/* Small outputs: every timed trial verified. Large ones: every 16th
	 * from a phase the kernel cannot know, and the last. */
	verify_all = out_bytes <= (64u << 20);
	phase = (int)((unsigned long long)(now_s() * 1e6) % 16);
	max_ms = jget_num(es->proto, "max_timing_s", 0) * 1000.0;
	memset(verd, 0, sizeof(verd));
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
	w->d.cuMemsetD8Async(w->slots, 0, (size_t)(base_g + 2 * w->p.n_in + 2) * WK_SLOT_U64 * 8, w->st);
	wk_cupti_start(w, &es->cand.plan);
	wk_progress(w, 3 * es->timeout_s + 30);
	for (int j = 0; j < total && r == RUN_OK; j++) {
		int useB = (j & 1) && kB != kA;
		struct wk_keep *k = useB ? kB : kA;
		const struct wk_buf *ins = useB && two ? w->in2 : w->in;
		int ver = verify_all || j % 16 == phase || j == total - 1;
		if (j >= 2) {
			float ms = 0;
			int q = wk_wait(w, w->ev[2 * (j - 2) + 1], es->timeout_s + 1, err);
			if (q == -2) {
				w->fatal = 1;
				kf_err(err, "timed trial %d: the launch block did not finish within %g s", j - 2 - warm, es->timeout_s);
				r = RUN_TIMEOUT;
				break;
			}
			if (q < 0) {
				r = RUN_ERR;
				break;
			}
			/* A time budget ends slow kernels' timing early (recorded). */
			w->d.cuEventElapsedTime(&ms, w->ev[2 * (j - 2)], w->ev[2 * (j - 2) + 1]);
			spent += ms;
			if (j - 2 >= warm)
				timed_ms += ms;
			int done = j - 1 - warm;   /* timed trials finished */
			int spent_out = max_ms > 0 && spent > max_ms && j - warm >= 10;
			int pruned = !spent_out && prune_ms > 0 && done >= 3 && timed_ms > prune_ms * done;
			if (spent_out || pruned) {
				/* Trial j-1 is queued: its outputs are checked now, as the last's always are. */
				int ver_last = verify_all || verd[j - 1];
				struct wk_keep *kl = ((j - 1) & 1) && kB != kA ? kB : kA;
				for (int o = 0; !ver_last && o < w->p.n_out && r == RUN_OK; o++)
					if (wk_compare(w, es, o, kl->out[o], (j - 1) * per + o, err) < 0)
						r = RUN_ERR;
				verd[j - 1] = 1;
				if (pruned)
					json_object_set_new(env, "pruned", json_pack("{s:i,s:f,s:f}", "decided_after",
						done, "mean_ms", timed_ms / done, "limit_ms", prune_ms));
				total = j;
				break;
			}
		}
		if (!two && kB != kA && wk_ensure_inputs(w, k->seed, 0, err) < 0) {
			r = RUN_ERR;
			break;
		}
		verd[j] = (unsigned char)ver;
		/* Only verified trials need poisoned outputs. */
		if (ver && wk_poison_outputs(w, err) < 0) {
			r = RUN_ERR;
			break;
		}
		if (flush)
			w->d.cuMemsetD32Async(w->flush.data, (unsigned)j * 2654435761u, w->flush.bytes / 4, w->st);
		r = wk_run_plan(w, &es->cand, ins, w->ev[2 * j], w->ev[2 * j + 1], err);
		if (r != RUN_OK)
			break;
		for (int o = 0; ver && o < w->p.n_out; o++)
			if (wk_compare(w, es, o, k->out[o], j * per + o, err) < 0) {
				r = RUN_ERR;
				break;
			}
		wk_progress(w, 3 * es->timeout_s + 30);
	}
	if (r == RUN_OK) {
		int q = wk_wait(w, w->ev[2 * (total - 1) + 1], 2 * es->timeout_s + 1, err);
		if (q == -2) {
			w->fatal = 1;
			kf_err(err, "timed trials: the launch block did not finish within %g s", es->timeout_s);
			r = RUN_TIMEOUT;
		} else if (q < 0) {
			r = RUN_ERR;
		}
	}
	{
		double t = now_s();
		cupti = wk_cupti_stop(w, &n_cupti, &n_stale, &n_renamed);
		es->ph[WK_PH_CUPTI] += (now_s() - t) * 1000.0;
	}
	if (r != RUN_OK) {
		free(cupti);
		json_decref(times);
		json_decref(env);
		buf_release(&v.detail);
		return r;
	}
	/* Inputs unchanged, guards intact, after all the timed runs. */
	double t_post = now_s();
	{
		struct wk_keep *kin = wk_keep_find(w, w->in_seed, w->in_dist);
		int sb = base_g + w->p.n_in + 1;
		if (!kin)
			kin = kA;
		if (wk_post_checks(es, kin, w->in, base_g - per, 0, err) < 0)
			r = RUN_ERR;
		for (int t = 0; two && kB != kA && t < w->p.n_in && r == RUN_OK; t++)
			if (wk_checksum(w, &w->in2[t], sb + t, err) < 0)
				r = RUN_ERR;
	}
	json_object_set_new(env, "after", wk_nvml_sample(w));
	json_object_set_new(res, "env", env);
	r = r != RUN_OK ? r : wk_read_slots(w, base_g + 2 * w->p.n_in + 1, es->timeout_s + 10, err);
	es->ph[WK_PH_POST] += (now_s() - t_post) * 1000.0;
	if (r != RUN_OK) {
		free(cupti);
		json_decref(times);
		buf_release(&v.detail);
		return RUN_ERR;
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
	{
		int bad = -1;
		struct run_verdict tv;
		memset(&tv, 0, sizeof(tv));
		buf_init(&tv.detail);
		for (int j = 0; j < total; j++) {
			int ver = verd[j];   /* as launched (an early stop checked its last trial) */
			int useB = (j & 1) && kB != kA;
			float ms = 0;
			json_t *t;
			w->d.cuEventElapsedTime(&ms, w->ev[2 * j], w->ev[2 * j + 1]);
			es->kernel_ms += ms;
			if (j < warm && !ver)
				continue;
			tv.time_ms = ms;
			tv.max_abs = tv.max_rel = 0;
			tv.mismatches = 0;
			int fail = 0;
			if (ver) {
				for (int o = 0; o < w->p.n_out; o++) {
					const unsigned long long *s = w->hslots + (size_t)(j * per + o) * WK_SLOT_U64;
					double ma = wk_bits_d(s[0]), mr = wk_bits_d(s[1]);
					tv.max_abs = ma > tv.max_abs ? ma : tv.max_abs;
					tv.max_rel = mr > tv.max_rel ? mr : tv.max_rel;
					tv.mismatches += (long long)(s[2] + s[4]);
				}
				fail = tv.mismatches > 0;
				if (fail && bad < 0)
					bad = j;
			}
			if (j < warm)
				continue;
			t = ver ? wk_trial_json(j - warm, useB ? kB->seed : kA->seed, &tv, !fail)
				: json_pack("{s:i,s:I,s:f}", "idx", j - warm, "seed",
					    (json_int_t)(useB ? kB->seed : kA->seed), "time_ms", (double)ms);
			if (cupti) {
				double c = 0;
				for (int q = 0; q < es->cand.plan.n_steps; q++)
					c += cupti[j * es->cand.plan.n_steps + q];
				json_object_set_new(t, "cupti_ms", json_real(c));
			}
			json_array_append_new(times, t);
		}
		if (bad >= 0) {
			buf_addf(&v.detail, "timed trial %d (seed %llu): the output differs from the reference (inputs alternate between timed trials; a kernel that caches results or skips work fails here)",
				 bad - warm, (unsigned long long)(((bad & 1) && kB != kA) ? kB->seed : kA->seed));
			snprintf(v.check, sizeof(v.check), "timed_output_mismatch");
			r = 1;
		} else {
			struct wk_keep *kin = wk_keep_find(w, w->in_seed, w->in_dist);
			if (!kin)
				kin = kA;
			r = wk_judge(es, kin, base_g - per, 0, "after the timed trials", &v);
			for (int t = 0; !r && two && kB != kA && t < w->p.n_in; t++)
				if (w->hslots[(size_t)(base_g + w->p.n_in + 1 + t) * WK_SLOT_U64] != kB->in_sum[t]) {
					snprintf(v.check, sizeof(v.check), "inputs_modified");
					buf_addf(&v.detail, "timed trials: input %s was modified by the kernel",
						 w->p.t[t].name);
					r = 1;
				}
		}
		buf_release(&tv.detail);
	}
	free(cupti);
	if (r == 1)
		wk_run_status(res, 1, &v, NULL, err);
	buf_release(&v.detail);
	return r;
}

