/* Timing in the GPU worker (DESIGN.md): warm-ups and timed trials, CUDA
 * events around each launch block and CUPTI kernel durations. Every trial
 * is launched as a check trial is (wk_launch_candidate: shared memory
 * scrubbed, outputs pre-filled with the poison or a random value by a
 * secret coin, scratch filled, L2 flushed), so a kernel cannot tell that
 * it is being timed; every trial's outputs are checked (all of a small
 * output, a secret 1/16 sample of 4096-element chunks of a large one,
 * drawn after the launch), so one that skips work or goes wrong on any
 * launch fails. Inputs and guards are checked after the timed trials.
 * Inputs follow a secret schedule (tsched.h): replays of two check sets
 * (one of the problem's distribution, one drawn from the check mix) by a
 * coin per launch, and fresh sets no launch had seen, each first used by a
 * secret timed trial and compared in full; launches on replayed inputs
 * much faster than those on fresh ones fail (timing_depends_on_history).
 * A second input set when memory allows, else regenerated. At most two
 * trials are in flight, so a hang is seen within the timeout. Two runtime budgets
 * end timing early (both recorded): max_timing_s of kernel time (after
 * 10 trials), and prune_ms, a mean so far over the request's limit (after
 * 3 trials; the search sets it to a multiple of PyTorch eager's time, a
 * kernel it will never keep). */
#include "worker_int.h"
#include "tsched.h"
#include "core/json.h"
#include "core/proc.h"
#include "core/xalloc.h"

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

/* The input buffers launch j uses, generated for k when they hold
 * another set (before the launch's preparation: outside its events). Set
 * A lives in w->in; B and the fresh sets in w->in2 when it exists. */
static const struct wk_buf *inputs_for(struct worker *w, int two, int set, const struct wk_keep *k,
				       struct buf *err)
{
	if (!two || set == TSCHED_A)
		return wk_ensure_inputs(w, k->seed, k->dist, err) < 0 ? NULL : w->in;
	if (w->in2_seed != k->seed || w->in2_dist != k->dist) {
		if (wk_gen_inputs(w, w->in2, k->seed, k->dist, err) < 0)
			return NULL;
		w->in2_seed = k->seed;
		w->in2_dist = k->dist;
	}
	return w->in2;
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

struct trial_judge {
	int failed, j_failed;
	struct run_verdict v;
};

/* Reads the slots of trials [j0, j1) (region (j % chunk) * per) and judges
 * each against its own set's reference (kj[j]); the first failure is kept
 * in tj, each launch's time in tms[j]. RUN_OK or RUN_ERR. */
static int judge_trials(struct wk_eval_state *es, struct wk_keep *const *kj, int warm, int j0,
			int j1, int chunk, int per, json_t *times, double *tms,
			struct trial_judge *tj, struct buf *err)
{
	struct worker *w = es->w;
	int nread = (j1 - j0 < chunk ? (j1 - 1) % chunk + 1 : chunk) * per;

	if (j1 <= j0)
		return RUN_OK;
	if (wk_read_slots(w, nread, es->timeout_s + 10, err) < 0)
		return RUN_ERR;
	for (int j = j0; j < j1; j++) {
		struct wk_keep *k = kj[j];
		struct run_verdict v;
		char what[96];
		float ms = 0;
		int bad;

		memset(&v, 0, sizeof(v));
		buf_init(&v.detail);
		snprintf(what, sizeof(what), "%s trial %d (seed %llu)", j < warm ? "warm-up" : "timed",
			 j < warm ? j : j - warm, k->seed);
		/* The extra distributions' tolerance, as their check trials'. */
		es->normwise = k->dist != 0;
		bad = wk_judge_outputs(es, k, (j % chunk) * per, what, &v);
		es->normwise = 0;
		w->d.cuEventElapsedTime(&ms, w->ev[2 * j], w->ev[2 * j + 1]);
		v.time_ms = ms;
		tms[j] = ms;
		es->kernel_ms += ms;
		if (j >= warm)
			json_array_append_new(times, wk_trial_json(j - warm, k->seed, &v, !bad));
		if (bad && !tj->failed) {
			tj->failed = 1;
			tj->j_failed = j;
			snprintf(tj->v.check, sizeof(tj->v.check), "%s", timed_check(v.check));
			buf_reset(&tj->v.detail);
			buf_addf(&tj->v.detail, "%s (every timed trial's outputs are checked: a secret sample of them)",
				 v.detail.s);
		}
		buf_release(&v.detail);
	}
	return RUN_OK;
}

/* After the timed trials: the times of launches on fresh sets (inputs no
 * launch had seen) against those on replayed ones of the same distribution
 * (a kernel's time may depend on its inputs' values, not on their history),
 * and the mean per distribution, into env; 1 when the history rule rejects
 * (tj set). */
static int history_check(struct wk_keep *const *kj, const int *set, int warm, int total,
			 int n_fresh, const int *first, const double *tms, json_t *env,
			 struct trial_judge *tj)
{
	double *rep = xmalloc(sizeof(double) * (size_t)(total + 1)), sum[8] = { 0 }, worst = 0;
	int cnt[8] = { 0 }, bad = 0, nr_all = 0, nn_all = 0;
	json_t *fr = json_array(), *bd = json_object();

	for (int f = 0; f < n_fresh; f++)
		if (first[f] < total)
			json_array_append_new(fr, json_pack("{s:i,s:I,s:i,s:f}", "idx", first[f] - warm,
				"seed", (json_int_t)kj[first[f]]->seed, "dist", kj[first[f]]->dist,
				"time_ms", tms[first[f]]));
	for (int j = warm; j < total; j++) {
		int d = kj[j]->dist & 7;
		nr_all += set[j] < TSCHED_FRESH;
		sum[d] += tms[j];
		cnt[d]++;
	}
	for (int d = 0; d < 8; d++) {
		double novel[TSCHED_MAX_FRESH], ratio = 0;
		int nn = 0, nr = 0;
		if (!cnt[d])
			continue;
		{
			char key[8];
			snprintf(key, sizeof(key), "%d", d);
			json_object_set_new(bd, key, json_pack("{s:i,s:f}", "n", cnt[d], "mean_ms", sum[d] / cnt[d]));
		}
		for (int f = 0; f < n_fresh; f++)
			if (first[f] < total && (kj[first[f]]->dist & 7) == d)
				novel[nn++] = tms[first[f]];
		for (int j = warm; j < total; j++)
			if (set[j] < TSCHED_FRESH && (kj[j]->dist & 7) == d)
				rep[nr++] = tms[j];
		nn_all += nn;
		if (tsched_history(novel, nn, rep, nr, &ratio))
			bad = 1;
		if (ratio > 0 && (worst == 0 || ratio < worst))
			worst = ratio;
	}
	json_object_set_new(env, "timed_sets", json_pack("{s:o,s:i,s:f,s:o}", "fresh", fr, "replayed", nr_all,
		"replay_over_fresh", worst, "by_dist", bd));
	free(rep);
	if (bad && !tj->failed) {
		tj->failed = 1;
		snprintf(tj->v.check, sizeof(tj->v.check), "timing_depends_on_history");
		buf_reset(&tj->v.detail);
		buf_addf(&tj->v.detail, "launches on replayed inputs took %.3gx the time of launches on inputs no launch "
			 "had seen (median of the replays vs the fastest of %d fresh ones, per distribution; "
			 "rejected under %.2g): the kernel does less work on inputs it has seen", worst, nn_all,
			 TSCHED_HISTORY_RATIO);
	}
	return bad;
}

int wk_timing(struct wk_eval_state *es, struct wk_keep *kA, struct wk_keep *kB,
	      struct wk_keep *const *fresh, int n_fresh, json_t *res, struct buf *err)
{
	struct worker *w = es->w;
	int warm = (int)jget_int(es->proto, "warmup", 3), n = (int)jget_int(es->proto, "timed_trials", 100);
	int total, two, r = RUN_OK, per, chunk, judged = 0;
	int n_cupti = 0, n_stale = 0, n_renamed = 0, use_cupti;
	int set[WK_MAX_EVENTS / 2], first[TSCHED_MAX_FRESH];
	struct wk_keep *kj[WK_MAX_EVENTS / 2];
	double tms[WK_MAX_EVENTS / 2];
	long long per_block;
	double *cupti = NULL, spent = 0, max_ms, prune_ms = es->prune_ms, timed_ms = 0;
	json_t *times = json_array(), *env, *t;
	struct trial_judge tj;
	size_t ti;

	memset(&tj, 0, sizeof(tj));
	buf_init(&tj.v.detail);
	if (warm < 0)
		warm = 0;
	if (n < 0)
		n = 0;
	total = warm + n;
	if (2 * total + 4 > WK_MAX_EVENTS - 1)
		total = (WK_MAX_EVENTS - 5) / 2, n = total - warm;
	/* The secret schedule: each launch replays A or B by a coin, and each
	 * fresh set is first (and only) used by a secret timed trial. */
	n_fresh = tsched_build(es->fill_rng ^ 0x7D1CE5EEDull, warm, n, kB != kA, n_fresh, set, first);
	for (int j = 0; j < total; j++)
		kj[j] = set[j] == TSCHED_A ? kA : set[j] == TSCHED_B ? kB : fresh[set[j] - TSCHED_FRESH];
	memset(tms, 0, sizeof(tms));
	/* Each trial's compares go to its own slots; when all trials' do not
	 * fit, they are read and judged a chunk at a time. The last slots are
	 * the checks after timing (inputs of both sets, guards). */
	per = w->p.n_out;
	chunk = (WK_MAX_SLOTS - (w->p.n_out + 2 * w->p.n_in + 2)) / (per ? per : 1);
	if (chunk < 2) {
		json_decref(times);
		return kf_err(err, "too many tensors for the stats slots");
	}
	max_ms = jget_num(es->proto, "max_timing_s", 0) * 1000.0;
	two = (kB != kA || n_fresh > 0) && ensure_in2(w, err);
	if (wk_ensure_inputs(w, kA->seed, kA->dist, err) < 0) {
		json_decref(times);
		return RUN_ERR;
	}
	env = json_object_get(res, "env");   /* may hold the caller's notes */
	if (!json_is_object(env)) {
		env = json_object();
		json_object_set_new(res, "env", env);
	}
	json_object_set_new(env, "before", wk_nvml_sample(w));
	/* CUPTI keeps a record per launch: a looped block of many launches is timed by events only */
	per_block = es->cand.plan.n_launches > 0 ? es->cand.plan.n_launches : es->cand.plan.n_steps;
	use_cupti = (long long)total * per_block <= WK_CUPTI_MAX_RECORDS;
	if (use_cupti)
		wk_cupti_start(w, &es->cand.plan);
	wk_progress(w, 3 * es->timeout_s + 30);
	/* Two trials in flight at most, so a hang is seen within the timeout.
	 * Each trial is launched and checked as a check trial is: the kernel
	 * cannot tell that it is being timed, and every trial's outputs are
	 * compared (with the inputs' checksums and the guards). */
	for (int j = 0; j < total && r == RUN_OK; j++) {
		struct wk_keep *k = kj[j];
		const struct wk_buf *ins;
		int base = (j % chunk) * per;

		if (j >= 2) {
			float ms = 0;
			int q = wk_wait(w, w->ev[2 * (j - 2) + 1], es->timeout_s + 1, err), done;
			int spent_out, pruned;
			if (q == -2) {
				w->fatal = 1;
				kf_err(err, "%s trial %d: the launch block did not finish within %g s",
				       j - 2 < warm ? "warm-up" : "timed", j - 2 < warm ? j - 2 : j - 2 - warm,
				       es->timeout_s);
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
			done = j - 1 - warm;
			spent_out = max_ms > 0 && spent > max_ms && j - warm >= 10;
			pruned = !spent_out && prune_ms > 0 && done >= 3 && timed_ms > prune_ms * done;
			if (spent_out || pruned) {
				if (pruned)
					json_object_set_new(env, "pruned", json_pack("{s:i,s:f,s:f}", "decided_after",
						done, "mean_ms", timed_ms / done, "limit_ms", prune_ms));
				total = j;   /* trial j-1, queued, is checked and kept too */
				break;
			}
		}
		if (j > judged && j % chunk == 0) {
			/* The slot ring wraps: judge the trials that used it. */
			if (judge_trials(es, kj, warm, judged, j, chunk, per, times, tms, &tj, err) < 0) {
				r = RUN_ERR;
				break;
			}
			judged = j;
		}
		if (!(ins = inputs_for(w, two, set[j], k, err))) {
			r = RUN_ERR;
			break;
		}
		w->d.cuMemsetD8Async(wk_slot_ptr(w, base), 0, (size_t)per * WK_SLOT_U64 * 8, w->st);
		r = wk_launch_candidate(es, ins, w->ev[2 * j], w->ev[2 * j + 1], err);
		if (r != RUN_OK)
			break;
		{
			/* Which outputs are compared is drawn after the launch: a
			 * 1/16 sample of 4096-element chunks of a large output (all
			 * of a small one), secret, so skipping any real share of the
			 * work fails; the pre-fill makes skipped elements wrong. A
			 * fresh set's launch is compared in full. */
			unsigned long long sk = es->fill_rng * 0x9E3779B97F4A7C15ull + (unsigned long long)j;
			for (int o = 0; o < w->p.n_out && r == RUN_OK; o++) {
				unsigned mask = w->p.t[w->p.n_in + o].numel > (1ll << 20) &&
						set[j] < TSCHED_FRESH ? 15u : 0u;
				if (wk_compare_sample(w, es, o, k->out[o], base + o, sk, mask, err) < 0)
					r = RUN_ERR;
			}
		}
		wk_progress(w, 3 * es->timeout_s + 30);
	}
	if (r == RUN_OK && total > 0) {
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
		double t0 = now_s();
		cupti = wk_cupti_stop(w, &n_cupti, &n_stale, &n_renamed);
		es->ph[WK_PH_CUPTI] += (now_s() - t0) * 1000.0;
	}
	if (r == RUN_OK && judge_trials(es, kj, warm, judged, total, chunk, per, times, tms, &tj, err) < 0)
		r = RUN_ERR;
	if (r == RUN_OK)
		history_check(kj, set, warm, total, n_fresh, first, tms, env, &tj);
	if (r == RUN_OK && !tj.failed) {
		/* Inputs unchanged and guards intact after all the timed runs:
		 * each buffer against the set it holds now. */
		int base = chunk * per, sb = base + w->p.n_out + w->p.n_in + 1;
		struct wk_keep *kin = wk_keep_find(w, w->in_seed, w->in_dist);
		struct wk_keep *kin2 = two ? wk_keep_find(w, w->in2_seed, w->in2_dist) : NULL;
		double t_post = now_s();
		if (!kin)
			kin = kA;
		w->d.cuMemsetD8Async(wk_slot_ptr(w, base), 0,
				     (size_t)(w->p.n_out + 2 * w->p.n_in + 2) * WK_SLOT_U64 * 8, w->st);
		if (wk_post_checks(es, kin, w->in, base, 0, err) < 0)
			r = RUN_ERR;
		for (int q = 0; kin2 && q < w->p.n_in && r == RUN_OK; q++)
			if (wk_checksum(w, &w->in2[q], sb + q, err) < 0)
				r = RUN_ERR;
		if (r == RUN_OK && wk_read_slots(w, sb + w->p.n_in, es->timeout_s + 10, err) < 0)
			r = RUN_ERR;
		if (r == RUN_OK && wk_judge(es, kin, base, 0, "after the timed trials", &tj.v)) {
			tj.failed = 1;
		} else {
			for (int q = 0; r == RUN_OK && kin2 && q < w->p.n_in; q++)
				if (w->hslots[(size_t)(sb + q) * WK_SLOT_U64] != kin2->in_sum[q]) {
					snprintf(tj.v.check, sizeof(tj.v.check), "inputs_modified");
					buf_addf(&tj.v.detail, "timed trials: input %s was modified by the kernel",
						 w->p.t[q].name);
					tj.failed = 1;
					break;
				}
		}
		es->ph[WK_PH_POST] += (now_s() - t_post) * 1000.0;
	}
	json_object_set_new(env, "after", wk_nvml_sample(w));
	if (r != RUN_OK) {
		free(cupti);
		json_decref(times);
		buf_release(&tj.v.detail);
		return r;
	}
	json_object_set_new(res, "time", times);
	if (!use_cupti) {
		free(cupti);
		cupti = NULL;
		n_cupti = 0;
		json_object_set_new(env, "cupti_note", json_sprintf("CUPTI off: %lld launches per block",
								    per_block));
	}
	if (cupti && n_cupti > total * per_block) {
		/* Extra records can only be older launches: keep the last ones. */
		int extra = n_cupti - (int)(total * per_block);
		memmove(cupti, cupti + extra, sizeof(*cupti) * (size_t)(n_cupti - extra));
		json_object_set_new(env, "cupti_note", json_sprintf("%d extra records dropped", extra));
		n_cupti -= extra;
	}
	if (n_stale)
		json_object_set_new(env, "cupti_stale", json_integer(n_stale));
	if (n_renamed)   /* CUPTI named them after an unloaded module's kernel (kept) */
		json_object_set_new(env, "cupti_renamed", json_integer(n_renamed));
	if (use_cupti && n_cupti != total * per_block) {
		/* Records lost or CUPTI off: events only. */
		free(cupti);
		cupti = NULL;
		json_object_set_new(env, "cupti_note",
				    w->cupti ? json_sprintf("%d kernel records for %lld launches", n_cupti,
							    total * per_block)
					     : json_string("CUPTI off"));
		if (w->cupti)
			json_object_set_new(env, "cupti_diag", wk_cupti_diag());
	}
	json_array_foreach(times, ti, t) {
		int j = (int)jget_int(t, "idx", 0) + warm;
		double c = 0;
		if (!cupti)
			break;
		for (long long q = 0; q < per_block; q++)
			c += cupti[j * per_block + q];
		json_object_set_new(t, "cupti_ms", json_real(c));
	}
	free(cupti);
	r = 0;
	if (tj.failed) {
		wk_run_status(res, 1, &tj.v, NULL, err);
		r = 1;
	}
	buf_release(&tj.v.detail);
	return r;
}
