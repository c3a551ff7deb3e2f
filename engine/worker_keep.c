/* The problem loaded in the worker and the reference outputs kept per
 * (seed, distribution): computed once with reference.cu, kept masked,
 * evicted by worth (GreedyDual-Size) when memory or slots run short. */
#include "worker_int.h"
#include "core/json.h"
#include "core/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reference launch block may take this long ($KFORGE_REF_TIMEOUT, s):
 * naive references at KernelBench sizes are slow. */
double wk_ref_timeout_s(void)
{
	const char *e = getenv("KFORGE_REF_TIMEOUT");
	double v = e ? atof(e) : 0;

	return v > 0 && v <= 3600 ? v : 120.0;
}
#define REF_TIMEOUT_S wk_ref_timeout_s()

/* ---- problem and reference ------------------------------------------------- */

void wk_drop_keep(struct worker *w, int k)
{
	for (int o = 0; w->keep[k].out && o < w->keep[k].n_out; o++)
		if (w->keep[k].out[o])
			w->d.cuMemFree(w->keep[k].out[o]);
	free(w->keep[k].out);
	free(w->keep[k].in_sum);
	memset(&w->keep[k], 0, sizeof(w->keep[k]));
}

static void drop_keeps(struct worker *w, int except)
{
	for (int k = 0; k < WK_MAX_KEEP; k++)
		if (k != except && w->keep[k].used)
			wk_drop_keep(w, k);
}

int wk_keep_is_current(const struct worker *w, const struct wk_keep *k)
{
	return k->used && w->have_problem && !strcmp(k->dir, w->prob_dir) &&
	       !strcmp(k->ref_hash, w->ref_hash);
}

/* k still holds (seed, dist): a later ensure_ref may have evicted it. */
int wk_keep_holds(const struct wk_keep *k, unsigned long long seed, int dist)
{
	return k->used && k->seed == seed && k->dist == dist;
}

struct wk_keep *wk_keep_find(struct worker *w, unsigned long long seed, int dist)
{
	for (int i = 0; i < WK_MAX_KEEP; i++)
		if (wk_keep_is_current(w, &w->keep[i]) && w->keep[i].seed == seed &&
		    w->keep[i].dist == dist)
			return &w->keep[i];
	return NULL;
}

/* A keep's worth: the reference time it saves per MiB it holds, aged
 * (GreedyDual-Size): cheap, large outputs (elementwise ops over GBs) go
 * before costly, small ones (convolutions, matmuls), and a problem no
 * longer searched ages out. */
void wk_keep_touch(struct worker *w, struct wk_keep *k)
{
	k->stamp = ++w->stamp;
	k->prio = w->keep_age + (k->ref_ms + 1.0) / ((double)k->bytes / 1048576.0 + 1.0);
}

/* The other problems' keep to evict first, or -1. */
int wk_keep_victim(const struct worker *w, size_t *idle_bytes)
{
	int v = -1;
	*idle_bytes = 0;
	for (int k = 0; k < WK_MAX_KEEP; k++)
		if (w->keep[k].used && !wk_keep_is_current(w, &w->keep[k])) {
			*idle_bytes += w->keep[k].bytes;
			if (v < 0 || w->keep[k].prio < w->keep[v].prio)
				v = k;
		}
	return v;
}

static void evict(struct worker *w, int k)
{
	if (w->keep[k].prio > w->keep_age)
		w->keep_age = w->keep[k].prio;
	wk_drop_keep(w, k);
}

int wk_drop_idle_keep(struct worker *w)
{
	size_t idle;
	int v = wk_keep_victim(w, &idle);
	if (v < 0)
		return 0;
	evict(w, v);
	return 1;
}

int wk_keeps_fit(const struct worker *w, size_t idle, size_t more, size_t free_b, size_t total)
{
	return idle <= w->keep_budget && free_b >= more && free_b - more >= total / WK_KEEP_HEADROOM;
}

/* Other problems' keeps go (wk_keep_victim's order) until they fit the
 * budget and, once `more` bytes are taken, the device keeps its headroom:
 * memory this cache takes must never be what a candidate's launch lacks. */
static void trim_idle_keeps(struct worker *w, size_t more)
{
	for (;;) {
		size_t idle, fr = 0, tot = 0;
		int v = wk_keep_victim(w, &idle);
		if (v < 0)
			return;
		if (w->d.cuMemGetInfo(&fr, &tot) == CUDA_SUCCESS && wk_keeps_fit(w, idle, more, fr, tot))
			return;
		evict(w, v);
	}
}

/* The problem's buffers and reference module go; its kept reference
 * outputs stay (keyed by problem) until evicted. */
static void drop_problem(struct worker *w)
{
	wk_module_unload(w, &w->ref);
	w->ref_hash[0] = '\0';
	for (int t = 0; w->in && t < w->p.n_in; t++) {
		wk_free(w, &w->in[t]);
		wk_free(w, &w->in2[t]);
	}
	for (int o = 0; w->out && o < w->p.n_out; o++)
		wk_free(w, &w->out[o]);
	free(w->in);
	free(w->in2);
	free(w->out);
	w->in = w->in2 = w->out = NULL;
	w->have_in2 = 0;
	w->in_seed = w->in2_seed = ~0ull;
	if (w->have_problem)
		problem_release(&w->p);
	problem_init(&w->p);
	w->have_problem = 0;
	w->prob_dir[0] = '\0';
}

int wk_ensure_problem(struct worker *w, const json_t *req, const struct buf *bin,
		      struct buf *err)
{
	const char *dir = jget_str(req, "problem_dir", ""), *rh = jget_str(req, "ref_hash", "");
	size_t rlen = (size_t)jget_int(req, "ref_cubin_len", 0);

	if (!w->have_problem || strcmp(w->prob_dir, dir)) {
		drop_problem(w);
		w->loaded = 1;
		if (problem_load(&w->p, dir, err) < 0)
			return -1;
		w->have_problem = 1;
		snprintf(w->prob_dir, sizeof(w->prob_dir), "%s", dir);
		w->in = xcalloc((size_t)w->p.n_in + 1, sizeof(*w->in));
		w->in2 = xcalloc((size_t)w->p.n_in + 1, sizeof(*w->in2));
		w->out = xcalloc((size_t)w->p.n_out + 1, sizeof(*w->out));
		for (int t = 0; t < w->p.n_in + w->p.n_out; t++) {
			struct wk_buf *b = t < w->p.n_in ? &w->in[t] : &w->out[t - w->p.n_in];
			if (wk_alloc(w, b, w->p.t[t].bytes, err) < 0)
				return -1;
		}
	}
	if (strcmp(w->ref_hash, rh)) {
		wk_module_unload(w, &w->ref);
		w->ref_hash[0] = '\0';
		if (rlen > bin->len)
			return kf_err(err, "reference cubin missing");
		if (wk_module_load(w, &w->ref, bin->s, rlen, jget_str(req, "ref_plan", ""), err) < 0) {
			struct buf m = BUF_INIT;
			buf_setf(&m, "the reference of %s cannot run: %s", w->p.id, err->s);
			kf_err(err, "%s", m.s);
			buf_release(&m);
			wk_module_unload(w, &w->ref);
			return -1;
		}
		snprintf(w->ref_hash, sizeof(w->ref_hash), "%s", rh);
		trim_idle_keeps(w, 0);
	}
	return 0;
}

/* After a failed candidate: what it may have touched is made again
 * (inputs regenerated; after an out-of-bounds write, references too). */
void wk_distrust(struct worker *w, const char *failed_check)
{
	w->in_seed = w->in2_seed = ~0ull;
	if (!strcmp(failed_check, "guard_overwritten"))
		drop_keeps(w, -1);
}

/* Device bytes a keep takes for output o (at least 1: cuMemAlloc refuses 0). */
size_t wk_keep_out_bytes(const struct worker *w, int o)
{
	return w->out[o].bytes ? w->out[o].bytes : 1;
}

/* The reference outputs for (seed, dist): computed once, kept aside. */
static struct wk_keep *ensure_ref(struct worker *w, unsigned long long seed, int dist,
				  struct buf *err)
{
	struct wk_keep *k = NULL;
	int ki = -1, lru = 0, r;

	if ((k = wk_keep_find(w, seed, dist))) {
		wk_keep_touch(w, k);
		return k;
	}
	{
		size_t bytes = 0;
		for (int o = 0; o < w->p.n_out; o++)
			bytes += wk_keep_out_bytes(w, o);
		trim_idle_keeps(w, bytes);
	}
	for (int i = 0; i < WK_MAX_KEEP && ki < 0; i++)
		if (!w->keep[i].used)
			ki = i;
	if (ki < 0) {
		size_t idle;
		/* No free slot: another problem's, else this one's least recently used. */
		if ((ki = wk_keep_victim(w, &idle)) >= 0) {
			evict(w, ki);
		} else {
			for (int i = 1; i < WK_MAX_KEEP; i++)
				if (w->keep[i].stamp < w->keep[lru].stamp)
					lru = i;
			wk_drop_keep(w, lru);
			ki = lru;
		}
	}
	k = &w->keep[ki];
	memset(k, 0, sizeof(*k));
	k->in_sum = xcalloc((size_t)w->p.n_in + 1, sizeof(*k->in_sum));
	k->out = xcalloc((size_t)w->p.n_out + 1, sizeof(*k->out));
	k->n_out = w->p.n_out;
	w->refs_run++;
	wk_progress(w, REF_TIMEOUT_S + 30);
	if (wk_ensure_inputs(w, seed, dist, err) < 0)
		goto fail;
	/* Checksums of the fresh inputs (slots 0..n_in-1: callers take
	 * their slots only after ensure_ref). */
	w->d.cuMemsetD8Async(wk_slot_ptr(w, 0), 0, (size_t)w->p.n_in * WK_SLOT_U64 * 8 + 8, w->st);
	for (int t = 0; t < w->p.n_in; t++)
		if (wk_checksum(w, &w->in[t], t, err) < 0)
			goto fail;
	if (wk_poison_outputs(w, err) < 0 || wk_fill_scratch(w, &w->ref, err) < 0)
		goto fail;
	r = wk_run_plan(w, &w->ref, w->in, w->ev[0], w->ev[1], err);
	if (r == RUN_OK)
		r = wk_wait(w, w->ev[1], REF_TIMEOUT_S, err);
	if (r == RUN_TIMEOUT) {
		w->fatal = 1;
		kf_err(err, "the reference of %s did not finish within %.0f s", w->p.id, REF_TIMEOUT_S);
	}
	if (r != RUN_OK) {
		struct buf m = BUF_INIT;
		buf_setf(&m, "the reference of %s failed: %s", w->p.id, err->s);
		kf_err(err, "%s", m.s);
		buf_release(&m);
		goto fail;
	}
	{
		float ms = 0;
		w->d.cuEventElapsedTime(&ms, w->ev[0], w->ev[1]);
		k->ref_ms = ms;
	}
	for (int o = 0; o < w->p.n_out; o++) {
		const size_t ob = wk_keep_out_bytes(w, o);
		CUresult cr = w->d.cuMemAlloc(&k->out[o], ob);
		/* Make room: other problems' keeps first, then this one's other
		 * seeds (all are recomputed on demand). */
		while (cr == CUDA_ERROR_OUT_OF_MEMORY && wk_drop_idle_keep(w))
			cr = w->d.cuMemAlloc(&k->out[o], ob);
		if (cr == CUDA_ERROR_OUT_OF_MEMORY) {
			drop_keeps(w, ki);
			cr = w->d.cuMemAlloc(&k->out[o], ob);
		}
		if (cr != CUDA_SUCCESS) {
			k->out[o] = 0;
			wk_cuda_err(w, cr, "keeping the reference outputs", err);
			goto fail;
		}
		k->bytes += ob;
		/* Kept masked, on our stream (the scrub below must not race it). */
		{
			CUdeviceptr dst = k->out[o], src = w->out[o].data;
			unsigned long long nb = w->out[o].bytes;
			void *args[] = { &dst, &src, &nb, &w->mask_key };
			if (wk_launch_h(w, w->f_mask_copy, wk_grid_for(w, nb / 4 + 1), args, err) < 0)
				goto fail;
		}
	}
	/* Which outputs are away from the degenerate constant (worker_sens.c). */
	if (wk_ref_far_launch(w, k, w->p.n_in, err) < 0)
		goto fail;
	/* Scrub: nothing of the reference's result stays where a candidate writes. */
	if (wk_poison_outputs(w, err) < 0)
		goto fail;
	for (int i = 0; i < w->ref.plan.n_scratch; i++)
		w->d.cuMemsetD8Async(w->ref.scratch[i].data, 0xFF, w->ref.scratch[i].bytes, w->st);
	if (wk_read_slots(w, w->p.n_in + (w->p.n_out < 64 ? w->p.n_out : 64), 30, err) < 0)
		goto fail;
	for (int t = 0; t < w->p.n_in; t++)
		k->in_sum[t] = w->hslots[t * WK_SLOT_U64];
	k->ref_far = wk_ref_far_bits(w, w->p.n_in);
	snprintf(k->dir, sizeof(k->dir), "%s", w->prob_dir);
	snprintf(k->ref_hash, sizeof(k->ref_hash), "%s", w->ref_hash);
	k->seed = seed;
	k->dist = dist;
	k->used = 1;
	wk_keep_touch(w, k);
	return k;
fail:
	wk_drop_keep(w, ki);        /* frees what was allocated; the slot is free again */
	return NULL;
}

/* For wk_sample: the reference outputs of (seed, dist): 0 the spec's draw, WK_DIST_ALIVE. */
int wk_ensure_ref_values(struct worker *w, const json_t *req, const struct buf *bin,
			 unsigned long long seed, int dist, const CUdeviceptr **outs, double *ref_ms,
			 struct buf *err)
{
	struct wk_keep *k;

	if (wk_ensure_problem(w, req, bin, err) < 0 || !(k = ensure_ref(w, seed, dist, err)))
		return -1;
	*outs = k->out;
	*ref_ms = k->ref_ms;
	return 0;
}

struct wk_keep *wk_ref_for(struct worker *w, unsigned long long seed, int dist, struct buf *err)
{
	return ensure_ref(w, seed, dist, err);
}
