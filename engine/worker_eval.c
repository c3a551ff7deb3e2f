/* One evaluation in the GPU worker (DESIGN.md, the evaluation protocol):
 *
 * 1. Reference outputs per (seed, distribution) are computed once with the
 *    problem's reference.cu, kept aside masked (XOR with a secret key, so a
 *    kernel that reads memory it was not given finds noise), and the output
 *    memory scrubbed.
 * 2. Check trials, each with its own seed (secret unless the protocol
 *    names them): the candidate launched by wk_launch_candidate (module
 *    variables restored, shared memory scrubbed, outputs poisoned, scratch
 *    filled, L2 flushed) with a wall timeout, then the whole output compared on
 *    the GPU, the inputs' checksums compared, the guard canaries counted.
 * 3. Repeat runs on identical inputs must pass again (races).
 * 4. Timing (worker_time.c): warm-ups + timed trials launched the same way,
 *    every one's outputs compared, inputs alternating between two seeds.
 * Every launch starts from the same state, so nothing tells a checked
 * launch from a timed one. A hang past the timeout or a sticky CUDA error
 * ends the worker after its reply (w->fatal). */
#include "worker_int.h"
#include "tsched.h"
#include "problem/inputs.h"
#include "core/json.h"
#include "core/proc.h"
#include "problem/sensitivity.h"
#include "core/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* One check run on w->in (which holds k's inputs). RUN_* or 1 on a failed check. */
static int check_run(struct wk_eval_state *es, struct wk_keep *k, const char *what,
		     struct run_verdict *v, struct buf *err)
{
	return wk_checked_run(es, k, es->w->in, what, es->w->ev[0], es->w->ev[1], v, err);
}

#define WK_MAX_CHECKS 64

/* Check trials start with the seeds already in the input buffers, so a
 * search's next candidate regenerates fewer inputs. */
static void check_order(const struct worker *w, unsigned long long seed0, int nchk, int *ord)
{
	unsigned long long end = seed0 + (unsigned long long)nchk;
	int a = -1, b = -1, n = 0;

	if (w->in_seed != ~0ull && w->in_dist == 0 && w->in_seed >= seed0 && w->in_seed < end)
		a = (int)(w->in_seed - seed0);
	if (w->have_in2 && w->in2_seed != ~0ull && w->in2_dist == 0 && w->in2_seed >= seed0 &&
	    w->in2_seed < end && w->in2_seed != w->in_seed)
		b = (int)(w->in2_seed - seed0);
	if (a >= 0)
		ord[n++] = a;
	if (b >= 0)
		ord[n++] = b;
	for (int i = 0; i < nchk; i++)
		if (i != a && i != b)
			ord[n++] = i;
}

static void swap_inputs(struct worker *w)
{
	struct wk_buf *t = w->in;
	unsigned long long s = w->in_seed;
	int d = w->in_dist;

	w->in = w->in2;
	w->in2 = t;
	w->in_seed = w->in2_seed;
	w->in_dist = w->in2_dist;
	w->in2_seed = s;
	w->in2_dist = d;
}

/* ---- the evaluation -------------------------------------------------------- */

static int dist_id(const char *name)
{
	if (!strcmp(name, "normal"))
		return 1;
	if (!strcmp(name, "uniform_large"))
		return 2;
	if (!strcmp(name, "edges"))
		return 3;
	if (!strcmp(name, "uniform_wide"))
		return 4;
	if (!strcmp(name, "alive"))
		return WK_DIST_ALIVE;
	return 0;
}

/* Fresh set f's seed: secret to this worker process (mask_key, from
 * getrandom) and the same for every evaluation of the problem here, so its
 * reference is computed once and kept. It is still new to each kernel:
 * nothing a kernel writes outlives its evaluation (the module is unloaded,
 * its variables restored, outputs and scratch refilled), and the timed
 * trial that first uses it stays secret per evaluation. */
static unsigned long long fresh_seed(const struct worker *w, int f)
{
	unsigned long long h = 0xcbf29ce484222325ull, s;

	for (const char *c = w->p.id ? w->p.id : ""; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
	s = w->mask_key ^ h ^ (0x7F4A7C15ull * (unsigned long long)(f + 1));
	return wk_next_rng(&s) | (1ull << 62);   /* never a check seed */
}

int wk_eval(struct worker *w, const json_t *req, const struct buf *bin, json_t **resp,
	    struct buf *err)
{
	struct wk_eval_state es;
	json_t *res = json_object(), *checks = json_array(), *dists;
	size_t rlen = (size_t)jget_int(req, "ref_cubin_len", 0);
	size_t clen = (size_t)jget_int(req, "cubin_len", 0);
	unsigned long long seed0;
	int nchk, nextra, rep, timed, ended = 0, r, ntrials = 0;
	double t_ph = 0;
/* Adds the wall time since t_ph to phase i and restarts the clock. */
#define PH(i) (es.ph[(i)] += (now_s() - t_ph) * 1000.0, t_ph = now_s())
	struct run_verdict v;
	int ord[WK_MAX_CHECKS];
	/* The check sets that ran, for the timed phase's draw from the mix. */
	unsigned long long chk_seed[WK_MAX_CHECKS];
	int chk_dist[WK_MAX_CHECKS], nck = 0, run_dists[8], n_run_dists = 0;

	memset(&es, 0, sizeof(es));
	memset(&v, 0, sizeof(v));
	buf_init(&v.detail);
	launch_plan_init(&es.cand.plan);
	es.w = w;
	es.proto = json_object_get(req, "protocol");
	es.prune_ms = jget_num(req, "prune_ms", 0);
	if (!(es.prune_ms > 0 && es.prune_ms < 1e9))
		es.prune_ms = 0;
	*resp = NULL;
	w->refs_run = w->loaded = 0;
	wk_progress(w, 60);
	t_ph = now_s();
	if (wk_ensure_problem(w, req, bin, err) < 0)
		goto fail;
	wk_refill_guards(w);
	PH(WK_PH_SETUP);
	es.atol = jget_num(es.proto, "atol", 0) > 0 ? jget_num(es.proto, "atol", 0) : w->p.atol;
	es.rtol = jget_num(es.proto, "rtol", 0) > 0 ? jget_num(es.proto, "rtol", 0) : w->p.rtol;
	es.timeout_s = jget_num(es.proto, "timeout_s", 10);
	if (es.timeout_s <= 0)
		es.timeout_s = 10;
	/* Secret seeds: the engine draws them and sends them beside the
	 * protocol (which says only "secret"); public ones are in it. */
	seed0 = (unsigned long long)jget_int(req, "seed0", jget_int(es.proto, "seed0", 1000));
	nextra = (int)jget_int(es.proto, "extra_trials", 2);
	if (nextra < 1 || nextra > 8)
		nextra = 2;
	nchk = (int)jget_int(es.proto, "check_trials", 5);
	rep = (int)jget_int(es.proto, "repeat_agree", 2);
	timed = (int)jget_int(es.proto, "timed_trials", 100);
	if (nchk < 1)
		nchk = 1;
	if (nchk > WK_MAX_CHECKS)
		nchk = WK_MAX_CHECKS;
	check_order(w, seed0, nchk, ord);
	json_object_set_new(res, "check", checks);
	if (rlen + clen > bin->len) {
		kf_err(err, "candidate cubin missing from the request");
		goto fail;
	}
	t_ph = now_s();
	r = wk_module_load(w, &es.cand, bin->s + rlen, clen, jget_str(req, "plan", ""), err);
	if (getrandom(&es.fill_rng, sizeof(es.fill_rng), 0) != (ssize_t)sizeof(es.fill_rng))
		es.fill_rng = (unsigned long long)(now_s() * 1e9) ^ w->mask_key;
	PH(WK_PH_LOAD);
	if (r < 0) {
		if (w->fatal)
			wk_set_result(res, "runtime_error", NULL, err->s);
		else
			wk_set_result(res, "launch_error", NULL, err->s);
		ended = 1;
	}
	/* Check trials: any extra distributions, then the spec's. */
	dists = json_object_get(es.proto, "dists");
	/* The extra distributions first: the last check trial is then one of
	 * the spec's, whose inputs the repeat runs use again at once. */
	for (int dd = 0; !ended && dd <= (int)json_array_size(dists); dd++) {
		int d = (dd + 1) % ((int)json_array_size(dists) + 1);
		int dist = d ? dist_id(json_string_value(json_array_get(dists, (size_t)d - 1)) ?
					       json_string_value(json_array_get(dists, (size_t)d - 1)) : "")
			     : 0;
		int n = d ? nextra : nchk;
		if (d && (!dist || (dist == 3 && !wk_edges_kind(w)) ||
			  (dist == WK_DIST_ALIVE && !sens_has_alive(&w->p))))
			continue;
		es.normwise = d > 0;
		for (int i = 0; i < n && !ended; i++) {
			unsigned long long seed = seed0 + (unsigned long long)(d ? 1000 * d + i : ord[i]);
			struct wk_keep *k;
			char what[128], range[48] = "";
			if (dist == 4)
				snprintf(range, sizeof(range), " U[%g, %g)", -wk_wide_bound(w), wk_wide_bound(w));
			snprintf(what, sizeof(what), "check trial %d (seed %llu%s%s%s)", ntrials, seed,
				 d ? ", " : "", d ? json_string_value(json_array_get(dists, (size_t)d - 1)) : "",
				 range);
			wk_progress(w, es.timeout_s + wk_ref_timeout_s() + 30);
			t_ph = now_s();
			k = wk_ref_for(w, seed, dist, err);
			PH(WK_PH_REFS);
			if (!k)
				goto fail;
			if ((w->in_seed != seed || w->in_dist != dist) && w->have_in2 &&
			    w->in2_seed == seed && w->in2_dist == dist)
				swap_inputs(w);
			if (wk_ensure_inputs(w, seed, dist, err) < 0)
				goto fail;
			PH(WK_PH_INPUTS);
			if (nck < WK_MAX_CHECKS) {
				chk_seed[nck] = seed;
				chk_dist[nck++] = dist;
			}
			if (i == 0 && n_run_dists < 8)
				run_dists[n_run_dists++] = dist;
			buf_reset(&v.detail);
			v.check[0] = '\0';
			r = check_run(&es, k, what, &v, err);
			PH(WK_PH_CHECKS);
			if (r == RUN_OK || r == 1)
				json_array_append_new(checks, wk_trial_json(ntrials, seed, &v, r == RUN_OK));
			if (v.max_abs > jget_num(res, "max_abs_err", 0))
				json_object_set_new(res, "max_abs_err", json_real(wk_finite_or_big(v.max_abs)));
			if (v.max_rel > jget_num(res, "max_rel_err", 0))
				json_object_set_new(res, "max_rel_err", json_real(wk_finite_or_big(v.max_rel)));
			if (r == 1)
				json_object_set_new(res, "mismatches", json_integer(v.mismatches));
			ntrials++;
			ended = wk_run_status(res, r, &v, NULL, err);
		}
	}
	es.normwise = 0;
	/* Sensitivity trials (worker_sens.c), where the protocol asks. */
	if (!ended && jget_int(es.proto, "sensitivity", 0) > 0) {
		t_ph = now_s();
		r = wk_sens_trials(&es, res, seed0, err);
		PH(WK_PH_CHECKS);
		if (r < 0)
			goto fail;
		ended = r;
	}
	/* Identical inputs again (those of the last check trial, still in
	 * place): a racy kernel fails here. */
	{
		unsigned long long sa = seed0 + (unsigned long long)ord[nchk - 1];
		unsigned long long sb = nchk >= 2 ? seed0 + (unsigned long long)ord[nchk - 2] : sa;
		struct wk_keep *ka, *kb;
		/* The second input set may already hold another checked seed. */
		if (nchk >= 2 && w->have_in2 && w->in2_dist == 0 && w->in2_seed != sa &&
		    w->in2_seed >= seed0 && w->in2_seed < seed0 + (unsigned long long)nchk)
			sb = w->in2_seed;
		for (int i = 1; !ended && i < rep; i++) {
			char what[80];
			snprintf(what, sizeof(what), "repeat run %d on the inputs of check trial %d", i, nchk - 1);
			t_ph = now_s();
			if (!(ka = wk_ref_for(w, sa, 0, err)) || wk_ensure_inputs(w, sa, 0, err) < 0)
				goto fail;
			PH(WK_PH_INPUTS);
			buf_reset(&v.detail);
			r = check_run(&es, ka, what, &v, err);
			PH(WK_PH_CHECKS);
			ended = wk_run_status(res, r, &v, "nondeterministic", err);
		}
		/* Timing: A, the last check trial's inputs; B, a check set of
		 * another distribution the checks drew (timed_mix; else the one
		 * before A); and the fresh sets, of secret seeds and of A's or
		 * B's distribution, their references computed here, before any
		 * launch is timed. */
		if (!ended && timed > 0) {
			struct wk_keep *fk[TSCHED_MAX_FRESH];
			unsigned long long fseed[TSCHED_MAX_FRESH], tkey = 0;
			int fdist[TSCHED_MAX_FRESH], nf = (int)jget_int(es.proto, "fresh_sets", 0), nfk = 0;
			int tmix = jget_bool(es.proto, "timed_mix", 0), db = 0;

			if (getrandom(&tkey, sizeof(tkey), 0) != (ssize_t)sizeof(tkey))
				tkey = es.fill_rng ^ 0x51DEB00Bull;
			if (nf < 0)
				nf = 0;
			if (nf > TSCHED_MAX_FRESH)
				nf = TSCHED_MAX_FRESH;
			if (tmix && n_run_dists > 1) {
				/* B: a check set of another distribution than A's (a
				 * secret one of those the checks drew): each timed launch
				 * is on the problem's own or another, by a secret coin. */
				int others[8], no = 0, want, n_of = 0, pick;
				for (int i = 0; i < n_run_dists; i++)
					if (run_dists[i])
						others[no++] = run_dists[i];
				want = no ? others[wk_next_rng(&tkey) % (unsigned long long)no] : 0;
				for (int i = 0; i < nck; i++)
					n_of += chk_dist[i] == want;
				pick = n_of ? (int)(wk_next_rng(&tkey) % (unsigned long long)n_of) : 0;
				for (int i = 0; i < nck; i++)
					if (chk_dist[i] == want && pick-- == 0) {
						sb = chk_seed[i];
						db = chk_dist[i];
						break;
					}
			}
			t_ph = now_s();
			for (int f = 0; f < nf; f++) {
				struct buf ferr = BUF_INIT;
				size_t fr = 0, tot = 0, need = 0;
				fseed[f] = fresh_seed(w, f);
				/* The distribution of A or B, secretly: a fresh launch is
				 * compared with replays of its own distribution. */
				fdist[f] = tmix && (wk_next_rng(&tkey) & 1) ? db : 0;
				if (wk_keep_find(w, fseed[f], fdist[f]))
					continue;   /* kept from an earlier evaluation here */
				/* A fresh set keeps its outputs until timing ends, leaving
				 * an eighth of the device free: other problems' kept
				 * references go first, then this one's least recently
				 * used other than A's and B's (recomputed when needed:
				 * large outputs are cheap references). */
				for (int o = 0; o < w->p.n_out; o++)
					need += wk_keep_out_bytes(w, o);
				for (;;) {
					int lru = -1;
					if (w->d.cuMemGetInfo(&fr, &tot) != CUDA_SUCCESS)
						break;
					if (fr >= need + tot / WK_KEEP_HEADROOM)
						break;
					if (wk_drop_idle_keep(w))
						continue;
					for (int i = 0; i < WK_MAX_KEEP; i++) {
						int mine = wk_keep_holds(&w->keep[i], sa, 0) || wk_keep_holds(&w->keep[i], sb, db);
						for (int g = 0; g < f; g++)
							mine |= wk_keep_holds(&w->keep[i], fseed[g], fdist[g]);
						if (wk_keep_is_current(w, &w->keep[i]) && !mine &&
						    (lru < 0 || w->keep[i].stamp < w->keep[lru].stamp))
							lru = i;
					}
					if (lru < 0)
						break;
					wk_drop_keep(w, lru);
				}
				if (fr < need + tot / WK_KEEP_HEADROOM) {
					fseed[f] = ~0ull;
					continue;
				}
				if (!wk_ref_for(w, fseed[f], fdist[f], &ferr)) {
					/* Out of memory for it: timed without it (recorded). */
					if (w->fatal) {
						kf_err(err, "%s", ferr.s);
						buf_release(&ferr);
						goto fail;
					}
					fseed[f] = ~0ull;
				}
				buf_release(&ferr);
			}
			if (!(kb = wk_ref_for(w, sb, db, err)) || !(ka = wk_ref_for(w, sa, 0, err)))
				goto fail;
			PH(WK_PH_REFS);
			if (!wk_keep_holds(kb, sb, db))
				kb = ka;     /* memory pressure evicted it: one set */
			for (int f = 0; f < nf; f++) {
				struct wk_keep *k = fseed[f] != ~0ull ? wk_keep_find(w, fseed[f], fdist[f]) : NULL;
				if (k && k != ka && k != kb)
					fk[nfk++] = k;
			}
			if (nfk < nf) {
				json_t *env = json_object_get(res, "env");
				if (!json_is_object(env)) {
					env = json_object();
					json_object_set_new(res, "env", env);
				}
				json_object_set_new(env, "fresh_note", json_sprintf("%d of %d fresh sets (no memory for the others)",
										    nfk, nf));
			}
			r = wk_timing(&es, ka, kb, fk, nfk, res, err);
			PH(WK_PH_TIMING);
			/* The fresh sets' references stay kept (fresh_seed). */
			ended = r == 1 ? 1 : wk_run_status(res, r, &v, NULL, err);
		}
		/* Then one more checked run (worker_sens.c: the degenerate rule). */
		if (!ended && timed > 0 && (r = wk_after_timing(&es, res, sa, &v, err)) != 0) {
			if (r < 0)
				goto fail;
			ended = 1;
		}
	}
	if (!ended) {
		wk_set_result(res, "correct", NULL, "");
		if (timed > 0 && jget_bool(req, "profile", 0))
			wk_profile(&es, res);   /* worker_prof.c: apart from the timing */
	} else if (!w->fatal)
		wk_distrust(w, jget_str(res, "failed_check", ""));
	{
		/* How many reference runs this evaluation paid for (0: all kept). */
		json_t *env = json_object_get(res, "env");
		if (!json_is_object(env)) {
			env = json_object();
			json_object_set_new(res, "env", env);
		}
		json_object_set_new(env, "refs_run", json_integer(w->refs_run));
		/* Module variables restored before every launch block (cost: one
		 * copy each per launch, inside the launch's preparation). */
		if (es.cand.n_glob || es.cand.glob_missing) {
			size_t gb = 0;
			for (int i = 0; i < es.cand.n_glob; i++)
				gb += es.cand.gsize[i];
			json_object_set_new(env, "globals_restored", json_pack("{s:i,s:I,s:i}", "n", es.cand.n_glob,
				"bytes", (json_int_t)gb, "not_found", es.cand.glob_missing));
		}
		if (json_object_get(res, "sensitivity")) {   /* worker_sens.c's summary */
			json_object_set(env, "sensitivity", json_object_get(res, "sensitivity"));
			json_object_del(res, "sensitivity");
		}
		json_object_set_new(env, "problem_loaded", json_boolean(w->loaded));
	}
	json_object_set_new(res, "wall_ms", json_real((now_s() - w->t_req) * 1000.0));
	json_object_set_new(res, "kernel_ms", json_real(es.kernel_ms));
	{
		static const char *const ph_names[WK_PH_COUNT] = { "setup", "module_load", "refs",
			"inputs", "checks", "timing", "cupti", "post_checks" };
		json_t *ph = json_object();
		for (int i = 0; i < WK_PH_COUNT; i++)
			json_object_set_new(ph, ph_names[i], json_real(es.ph[i]));
		json_object_set_new(res, "phases_ms", ph);
	}
	if (!json_object_get(res, "mismatches"))
		json_object_set_new(res, "mismatches", json_integer(0));
	if (!w->fatal)
		wk_module_unload(w, &es.cand);
	buf_release(&v.detail);
	*resp = res;
	return 0;
fail:
	if (!w->fatal) {
		wk_module_unload(w, &es.cand);
		wk_distrust(w, "");
	}
	buf_release(&v.detail);
	json_decref(res);
	return -1;
}
#undef PH
