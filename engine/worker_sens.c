/* Draws and checks where every input, parameter and step matters
 * (docs/engine.md, "Sensitivity trials", "The alive draw", "Degenerate
 * outputs"):
 *
 * - the alive draw (dist WK_DIST_ALIVE): a recurrent model's parameters
 *   from the spec's "alive" distributions, so that an input at step 0
 *   reaches the last output (with PyTorch's initialisation the state fades
 *   and a kernel that computes only the last steps passes);
 * - sensitivity trials (WK_DIST_SENS | j << 1 | alive): inputs identical
 *   to a base draw except one tensor, or the first quarter of a recurrent
 *   model's time steps, redrawn with another seed. Where the reference's
 *   outputs differ beyond the tolerance, the kernel runs on the redrawn
 *   set and must match its reference; one whose output stayed that of the
 *   base draw is `insensitive_to_input`. Where they do not, the tensor is
 *   listed under no_influence (env.sensitivity);
 * - the degenerate-output rule: a kernel whose output is exactly the
 *   degenerate constant (spec "degenerate_value", default 0) on a draw
 *   where the reference's is not fails (`degenerate_output`).
 * The input values of every draw are problem/inputs.c's (inputs_bits), so
 * the CPU oracle computes the same references. */
#include "worker_int.h"
#include "problem/inputs.h"
#include "core/json.h"
#include "core/proc.h"
#include "problem/sensitivity.h"
#include "core/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dist as a draw: 1 and *d for the alive and sensitivity dists, else 0. */
static int draw_of(const struct worker *w, int dist, struct inputs_draw *d)
{
	if (dist == WK_DIST_ALIVE) {
		inputs_draw_spec(d);
		d->alive = 1;
		return 1;
	}
	if (dist >= WK_DIST_SENS) {
		int j = (dist - WK_DIST_SENS) >> 1;
		sens_draw(&w->p, j, d);
		d->alive = dist & 1;
		return 1;
	}
	return 0;
}

int wk_draw_desc(const struct worker *w, int t, int dist, struct kf_gen_desc *g)
{
	struct inputs_draw d;

	if (!draw_of(w, dist, &d))
		return 0;
	inputs_desc_draw(&w->p, t, g->seed, &d, g);
	return 1;
}

int wk_draw_post(struct worker *w, struct wk_buf *set, int t, unsigned long long seed, int dist,
		 struct buf *err)
{
	const struct problem_tensor *pt = &w->p.t[t];
	size_t es = kf_dtype_size(pt->dtype);
	struct inputs_draw d;
	CUresult r = CUDA_SUCCESS;

	if (!draw_of(w, dist, &d))
		return 0;
	if (d.redraw == t && d.stride > 0) {
		/* Block k of the region: a tensor of its own, seed + k (inputs.c). */
		struct kf_gen_desc g;
		inputs_desc_draw(&w->p, t, seed, &d, &g);
		for (long long k = 0; k * d.stride < pt->numel; k++) {
			CUdeviceptr dst = set[t].data + (CUdeviceptr)(k * d.stride) * es;
			long long n = d.block;
			unsigned long long sk = INPUTS_REDRAW_SEED(seed) + (unsigned long long)k;
			void *args[] = { &dst, &n, &sk, &g.t, &g.kind, &g.dtype, &g.post, &g.a, &g.b,
					 &g.rows, &g.cols };
			if (wk_launch_h(w, w->f_fill, wk_grid_for(w, (unsigned long long)n), args, err) < 0)
				return -1;
		}
	}
	for (int k = 0; d.alive && pt->has_alive && k < pt->n_set && r == CUDA_SUCCESS; k++) {
		unsigned long long bits = kf_encode(pt->set_v[k], (int)pt->dtype);
		CUdeviceptr p = set[t].data + (CUdeviceptr)pt->set_lo[k] * es;
		size_t n = (size_t)(pt->set_hi[k] - pt->set_lo[k]);
		r = es == 4 ? w->d.cuMemsetD32Async(p, (unsigned)bits, n, w->st)
			    : w->d.cuMemsetD16Async(p, (unsigned short)bits, n, w->st);
	}
	return r == CUDA_SUCCESS ? 0 : wk_cuda_err(w, r, "the alive draw's set ranges", err);
}

/* ---- the degenerate-output rule ------------------------------------------- */

static double degenerate_value(const struct worker *w)
{
	return jget_num(w->p.spec, "degenerate_value", 0.0);
}

static int count_far(struct worker *w, CUdeviceptr p, int o, double eps, int masked, int slot,
		     struct buf *err)
{
	const struct problem_tensor *t = &w->p.t[w->p.n_in + o];
	long long n = t->numel;
	int dt = (int)t->dtype;
	double c = degenerate_value(w);
	CUdeviceptr sp = wk_slot_ptr(w, slot);
	void *args[] = { &p, &n, &dt, &c, &eps, &w->mask_key, &masked, &sp };

	return wk_launch_h(w, w->f_count_far, wk_grid_for(w, (unsigned long long)n), args, err);
}

/* A reference is "not the constant" when some element is more than
 * 1e-3 atol away: double rounding of an output that is exactly the
 * constant (23: a mean of normalised values) stays far below. */
int wk_ref_far_launch(struct worker *w, struct wk_keep *k, int slot0, struct buf *err)
{
	int n = w->p.n_out < 64 ? w->p.n_out : 64;

	w->d.cuMemsetD8Async(wk_slot_ptr(w, slot0), 0, (size_t)n * WK_SLOT_U64 * 8, w->st);
	for (int o = 0; o < n; o++)
		if (count_far(w, k->out[o], o, 1e-3 * w->p.atol, 1, slot0 + o, err) < 0)
			return -1;
	return 0;
}

unsigned long long wk_ref_far_bits(struct worker *w, int slot0)
{
	unsigned long long b = 0;
	int n = w->p.n_out < 64 ? w->p.n_out : 64;

	for (int o = 0; o < n; o++)
		if (w->hslots[(size_t)(slot0 + o) * WK_SLOT_U64])
			b |= 1ull << o;
	return b;
}

int wk_degenerate_check(struct wk_eval_state *es, struct wk_keep *k, const char *what,
			struct run_verdict *v, struct buf *err)
{
	struct worker *w = es->w;
	int n = w->p.n_out < 64 ? w->p.n_out : 64;
	double c = degenerate_value(w), eps = 1e-3 * w->p.atol;

	if (!k->ref_far)
		return 0;
	w->d.cuMemsetD8Async(w->slots, 0, (size_t)n * WK_SLOT_U64 * 8, w->st);
	for (int o = 0; o < n; o++) {
		const struct problem_tensor *t = &w->p.t[w->p.n_in + o];
		CUdeviceptr out = w->out[o].data, ref = k->out[o], sp = wk_slot_ptr(w, o);
		long long nel = t->numel;
		int dt = (int)t->dtype;
		void *args[] = { &out, &ref, &nel, &dt, &c, &eps, &w->mask_key, &sp };
		if (((k->ref_far >> o) & 1) &&
		    wk_launch_h(w, w->f_constlike, wk_grid_for(w, (unsigned long long)nel), args, err) < 0)
			return RUN_ERR;
	}
	if (wk_read_slots(w, n, es->timeout_s + 10, err) < 0)
		return RUN_ERR;
	for (int o = 0; o < n; o++) {
		unsigned long long far = w->hslots[(size_t)o * WK_SLOT_U64];
		unsigned long long like = w->hslots[(size_t)o * WK_SLOT_U64 + 1];
		/* An honest kernel's error is far below the reference's distance
		 * from the constant almost everywhere; one that writes the
		 * constant (all but a few elements) is not. */
		if (far && like && like * 100 >= far) {
			snprintf(v->check, sizeof(v->check), "degenerate_output");
			buf_addf(&v->detail, "%s: output %s is %s: %llu of the %llu elements whose reference "
				 "is more than %g from %g are at least as close to %g as to the reference",
				 what, w->p.t[w->p.n_in + o].name, like == far ? "the constant" :
				 "mostly the constant", like, far, eps, c, c);
			return 1;
		}
	}
	return 0;
}

int wk_after_timing(struct wk_eval_state *es, json_t *res, unsigned long long seed,
		    struct run_verdict *v, struct buf *err)
{
	struct worker *w = es->w;
	struct wk_keep *k;
	int r;

	if (!(k = wk_ref_for(w, seed, 0, err)) || wk_ensure_inputs(w, seed, 0, err) < 0)
		return -1;
	buf_reset(&v->detail);
	v->check[0] = '\0';
	r = wk_checked_run(es, k, w->in, "check run after the timed trials", w->ev[0], w->ev[1], v,
			   err);
	return wk_run_status(res, r, v, NULL, err);
}

/* ---- sensitivity trials ---------------------------------------------------- */

/* Slots [0, n_out): output o of ref b against kept ref a (unmasked into the
 * output buffers, which are poisoned again after). Elements beyond the
 * tolerance in *mis, the largest difference in *maxd. */
static int ref_diff(struct wk_eval_state *es, struct wk_keep *a, struct wk_keep *b,
		    long long *mis, double *maxd, struct buf *err)
{
	struct worker *w = es->w;

	*mis = 0;
	*maxd = 0;
	w->d.cuMemsetD8Async(w->slots, 0, (size_t)w->p.n_out * WK_SLOT_U64 * 8, w->st);
	for (int o = 0; o < w->p.n_out; o++) {
		CUdeviceptr dst = w->out[o].data, src = a->out[o];
		unsigned long long nb = w->out[o].bytes;
		void *args[] = { &dst, &src, &nb, &w->mask_key };
		if (wk_launch_h(w, w->f_mask_copy, wk_grid_for(w, nb / 4 + 1), args, err) < 0 ||
		    wk_compare(w, es, o, b->out[o], o, err) < 0)
			return -1;
	}
	if (wk_poison_outputs(w, err) < 0 || wk_read_slots(w, w->p.n_out, es->timeout_s + 10, err) < 0)
		return -1;
	for (int o = 0; o < w->p.n_out; o++) {
		const unsigned long long *s = w->hslots + (size_t)o * WK_SLOT_U64;
		double d = wk_bits_d(s[0]);
		/* judged as the kernel will be (wk_judge_outputs' normwise rule) */
		if (!(es->normwise && !s[3] && d <= es->atol + es->rtol * wk_bits_d(s[6])))
			*mis += (long long)s[2];
		if (d > *maxd)
			*maxd = d;
	}
	return 0;
}

/* 1 when the kernel's outputs (still in place) match kept reference a. */
static int follows(struct wk_eval_state *es, struct wk_keep *a, struct buf *err)
{
	struct worker *w = es->w;

	w->d.cuMemsetD8Async(w->slots, 0, (size_t)w->p.n_out * WK_SLOT_U64 * 8, w->st);
	for (int o = 0; o < w->p.n_out; o++)
		if (wk_compare(w, es, o, a->out[o], o, err) < 0)
			return -1;
	if (wk_read_slots(w, w->p.n_out, es->timeout_s + 10, err) < 0)
		return -1;
	for (int o = 0; o < w->p.n_out; o++)
		if (w->hslots[(size_t)o * WK_SLOT_U64 + 2] || w->hslots[(size_t)o * WK_SLOT_U64 + 3])
			return 0;
	return 1;
}

/* Wall time after which no more trials start (the regions' always run). */
#define WK_SENS_BUDGET_S 60.0

static unsigned long long mix64(unsigned long long z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* One checked run of the kernel on the inputs of (seed, dist) against k. */
static int run_on(struct wk_eval_state *es, struct wk_keep *k, unsigned long long seed, int dist,
		  const char *what, struct run_verdict *v, json_t *checks, struct buf *err)
{
	struct worker *w = es->w;
	int r;

	if (wk_ensure_inputs(w, seed, dist, err) < 0)
		return RUN_ERR;
	buf_reset(&v->detail);
	v->check[0] = '\0';
	r = wk_checked_run(es, k, w->in, what, w->ev[0], w->ev[1], v, err);
	if (r == RUN_OK || r == 1)
		json_array_append_new(checks, wk_trial_json((int)json_array_size(checks), seed, v,
							    r == RUN_OK));
	return r;
}

/* Trials redraw one tensor or region of a base draw (seed0 + 5000: one
 * reference per base), the spec's and, for recurrent models, the alive
 * one too (an early step reaches a full sequence's output on the spec's
 * draw, the last state only on the alive one). Where the references
 * differ beyond the tolerance the kernel runs on the base inputs, then at
 * once on the redrawn ones: a kernel that keeps its last output for inputs
 * it deems the same (a fingerprint of some inputs only) returns the base
 * output there and is named `insensitive_to_input`. */
int wk_sens_trials(struct wk_eval_state *es, json_t *res, unsigned long long seed0,
		   struct buf *err)
{
	struct worker *w = es->w;
	int nj = sens_count(&w->p), nb = sens_has_alive(&w->p) ? 2 : 1, n = nj * nb;
	int cap = (int)jget_int(es->proto, "sensitivity", 0), ended = 0, ran = 0, nf = 0;
	int *ord = xcalloc((size_t)n + 1, sizeof(int));
	json_t *checks = json_object_get(res, "check"), *infl = json_array(), *none = json_array();
	json_t *skipped = json_array(), *wrong = json_array(), *sj;
	unsigned long long rng = mix64(seed0 ^ es->fill_rng ^ 0x5E45);
	unsigned long long seed = seed0 + 5000;
	double t0 = now_s(), kms = es->kernel_ms;
	struct run_verdict v;

	memset(&v, 0, sizeof(v));
	buf_init(&v.detail);
	if (cap > n)
		cap = n;
	/* Trial k redraws j = k % nj on base k / nj (1: alive). In a secret
	 * order (a sample when over the cap), the time-step regions (j = n_in,
	 * when there is one) first. */
	for (int k = 0; k < n; k++)
		if (nj > w->p.n_in && k % nj == w->p.n_in)
			ord[nf++] = k;
	for (int k = 0, q = nf; k < n; k++)
		if (!(nj > w->p.n_in && k % nj == w->p.n_in))
			ord[q++] = k;
	for (int i = n - 1; i > nf; i--) {
		int q = nf + (int)((rng = mix64(rng + (unsigned long long)i)) %
				   (unsigned long long)(i - nf + 1));
		int tmp = ord[i];
		ord[i] = ord[q];
		ord[q] = tmp;
	}
	for (int i = 0; i < cap && !ended; i++) {
		int j = ord[i] % nj, alive = ord[i] / nj, base = alive ? WK_DIST_ALIVE : 0;
		int sd = WK_DIST_SENS | (j << 1) | alive, r;
		struct wk_keep *ka, *kb;
		struct inputs_draw d;
		char name[200], what[360];
		long long mis;
		double maxd;

		if (i >= nf && now_s() - t0 > WK_SENS_BUDGET_S) {
			cap = i;      /* slow references (level 3's largest in double): fewer trials */
			break;
		}
		sens_draw(&w->p, j, &d);
		sens_name(&w->p, &d, name, sizeof(name) - 10);
		if (alive)
			strcat(name, " (alive)");
		wk_progress(w, 2 * es->timeout_s + 2 * 150);
		if (!(ka = wk_ref_for(w, seed, base, err)) || !(kb = wk_ref_for(w, seed, sd, err)) ||
		    !(ka = wk_ref_for(w, seed, base, err)))
			goto fail;
		if (!kb->used || kb->seed != seed || kb->dist != sd) {
			json_array_append_new(skipped, json_string(name));   /* evicted: no room */
			continue;
		}
		es->normwise = alive;   /* judged as the alive draw's check trials */
		r = ref_diff(es, ka, kb, &mis, &maxd, err);
		es->normwise = 0;
		if (r < 0)
			goto fail;
		if (!mis) {
			json_array_append_new(none, json_pack("{s:s,s:f}", "tensor", name, "max_diff",
							      wk_finite_or_big(maxd)));
			continue;
		}
		json_array_append_new(infl, json_pack("{s:s,s:I,s:f}", "tensor", name, "elements",
						      (json_int_t)mis, "max_diff", wk_finite_or_big(maxd)));
		/* the spec says this tensor cannot influence the output: it did */
		if (d.stride == 0 && json_object_get(json_object_get(w->p.spec, "no_influence"),
						     w->p.t[j].name))
			json_array_append_new(wrong, json_string(name));
		es->normwise = alive;
		snprintf(what, sizeof(what), "sensitivity trial (seed %llu, %s draw, before %s is redrawn)",
			 seed, alive ? "alive" : "spec", name);
		r = run_on(es, ka, seed, base, what, &v, checks, err);
		if (r == RUN_OK) {
			snprintf(what, sizeof(what), "sensitivity trial (seed %llu, %s draw, %s redrawn)", seed,
				 alive ? "alive" : "spec", name);
			r = run_on(es, kb, seed, sd, what, &v, checks, err);
			if (r == 1 && !strcmp(v.check, "output_mismatch")) {
				int f = follows(es, ka, err);
				if (f < 0)
					r = RUN_ERR;
				if (f > 0) {
					snprintf(v.check, sizeof(v.check), "insensitive_to_input");
					buf_reset(&v.detail);
					buf_addf(&v.detail, "%s: the kernel's output stayed that of the inputs "
						 "before; the reference's changed in %lld elements (max %.3g) "
						 "beyond the tolerance", what, mis, wk_finite_or_big(maxd));
				}
			}
		}
		es->normwise = 0;
		ran++;
		ended = wk_run_status(res, r, &v, NULL, err);
	}
	sj = json_pack("{s:s,s:i,s:i,s:i,s:o,s:o,s:o,s:o,s:f,s:f}", "draws",
		       nb > 1 ? "spec, alive" : "spec", "trials", n, "sampled", cap, "pairs_run", ran,
		       "influence", infl, "no_influence", none, "skipped", skipped,
		       "claims_contradicted", wrong, "ms", (now_s() - t0) * 1000.0, "kernel_ms",
		       es->kernel_ms - kms);
	/* into env at the end of wk_eval (timing writes env afresh) */
	json_object_set_new(res, "sensitivity", sj);
	free(ord);
	buf_release(&v.detail);
	return ended;
fail:
	json_decref(infl);
	json_decref(none);
	json_decref(skipped);
	json_decref(wrong);
	free(ord);
	buf_release(&v.detail);
	return -1;
}
