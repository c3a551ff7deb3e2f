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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* A reference launch block may take this long ($KFORGE_REF_TIMEOUT, s):
 * naive references at KernelBench sizes are slow. */
static double ref_timeout_s(void)
{
	const char *e = getenv("KFORGE_REF_TIMEOUT");
	double v = e ? atof(e) : 0;

	return v > 0 && v <= 3600 ? v : 120.0;
}
#define REF_TIMEOUT_S ref_timeout_s()

static int dtype_is_float(enum kf_dtype t)
{
	return t == KF_F32 || t == KF_F16 || t == KF_BF16;
}

static unsigned char poison_byte(enum kf_dtype t)
{
	return dtype_is_float(t) ? 0xFF : 0x5A;
}

static unsigned long long poison_bits(enum kf_dtype t)
{
	unsigned long long b = poison_byte(t);
	size_t n = kf_dtype_size(t);
	unsigned long long v = 0;

	for (size_t i = 0; i < n; i++)
		v |= b << (8 * i);
	return v;
}

unsigned wk_grid_for(struct worker *w, unsigned long long n)
{
	unsigned long long g = (n + 255) / 256, cap = 132 * 16;
	long long sm = jget_int(w->info, "sm_count", 132);

	if (sm > 0)
		cap = (unsigned long long)sm * 16;
	if (g > cap)
		g = cap;
	return g ? (unsigned)g : 1;
}

CUdeviceptr wk_slot_ptr(struct worker *w, int s)
{
	return w->slots + (CUdeviceptr)s * WK_SLOT_U64 * 8;
}

/* Reads slots [0, n) into w->hslots (synchronous through an event). */
int wk_read_slots(struct worker *w, int n, double timeout, struct buf *err)
{
	CUevent e = w->ev[WK_MAX_EVENTS - 1];
	CUresult r;
	int k;

	if (n <= 0)
		return 0;
	r = w->d.cuMemcpyDtoHAsync(w->hslots, w->slots, (size_t)n * WK_SLOT_U64 * 8, w->st);
	if (r != CUDA_SUCCESS)
		return wk_cuda_err(w, r, "reading results", err);
	w->d.cuEventRecord(e, w->st);
	k = wk_wait(w, e, timeout, err);
	if (k == -2) {
		w->fatal = 1;
		return kf_err(err, "timed out waiting for the GPU");
	}
	return k;
}

/* ---- inputs, outputs, guards ----------------------------------------------- */

/* What "edges" means for this problem: values where the operator is most
 * easily got wrong. 1: large negatives (softmax-like: without the max
 * subtracted, exp underflows to 0/0); 2: values near zero (norms: the
 * variance is far below eps, so a misplaced eps shows); 0: none. */
static int edges_kind(const struct worker *w)
{
	const char *op = json_string_value(json_object_get(json_object_get(w->p.spec, "attrs"), "op"));
	static const char *const neg[] = { "softmax", "log_softmax", "cross_entropy", NULL };
	static const char *const zero[] = { "batchnorm", "instancenorm", "groupnorm", "rmsnorm",
					    "layernorm", "frobenius", "l1norm", "l2norm", NULL };

	for (int i = 0; op && neg[i]; i++)
		if (!strcmp(op, neg[i]))
			return 1;
	for (int i = 0; op && zero[i]; i++)
		if (!strcmp(op, zero[i]))
			return 2;
	return 0;
}

/* The bound r of "uniform_wide" U[-r, r): 100, except for operators that fp32
 * cannot compute to 1e-4 at that magnitude whatever the kernel (verify-v1 drew
 * U[-100, 100) for all): a prefix product leaves fp32's range within a few
 * dozen elements (U[-2, 2) keeps hundreds in range); attention's scores reach
 * ~1e4, where fp32 rounding moves the softmax by 0.3 (U[-4, 4): scores ~10). */
static double wide_bound(const struct worker *w)
{
	const char *op = json_string_value(json_object_get(json_object_get(w->p.spec, "attrs"), "op"));

	if (w->p.wide_bound > 0)   /* the spec's, measured (tools/torch_crosscheck.py --draw wide) */
		return w->p.wide_bound;
	if (op && !strcmp(op, "cumprod"))
		return 2;
	if (op && !strcmp(op, "sdpa"))
		return 4;
	return 100;
}

static void dist_override(const struct worker *w, int t, int dist, struct kf_gen_desc *g)
{
	const struct problem_tensor *pt = &w->p.t[t];

	if (wk_draw_desc(w, t, dist, g))   /* alive, sensitivity: worker_sens.c */
		return;
	/* A parameter PyTorch initialises to a constant (norm weight 1, bias
	 * 0) is drawn around it on the extra draws: a kernel that assumes the
	 * constant fails there. */
	if (dist && pt->role == KF_ROLE_PARAM && dtype_is_float(pt->dtype) && g->kind == KF_DK_CONSTANT) {
		double c = g->a;
		g->kind = KF_DK_UNIFORM;
		g->a = c - 1.0;
		g->b = c + 1.0;
		return;
	}
	if (!dist || pt->role != KF_ROLE_INPUT || !dtype_is_float(pt->dtype) ||
	    (g->kind != KF_DK_UNIFORM && g->kind != KF_DK_NORMAL) || g->post != KF_PO_NONE)
		return;
	if (dist == 3) {           /* "edges" */
		int k = edges_kind(w);
		g->kind = KF_DK_UNIFORM;
		g->a = k == 1 ? -1000 : -1e-4;
		g->b = k == 1 ? -900 : 1e-4;
		return;
	}
	if (dist == 1) {           /* "normal": N(0, 1) */
		g->kind = KF_DK_NORMAL;
		g->a = 0;
		g->b = 1;
	} else if (dist == 2) {    /* "uniform_large" (verify-v1): U[-100, 100) */
		g->kind = KF_DK_UNIFORM;
		g->a = -100;
		g->b = 100;
	} else if (dist == 4) {    /* "uniform_wide" (verify-v2): U[-r, r) */
		g->kind = KF_DK_UNIFORM;
		g->a = -wide_bound(w);
		g->b = wide_bound(w);
	}
}

int wk_gen_inputs(struct worker *w, struct wk_buf *set, unsigned long long seed, int dist,
		      struct buf *err)
{
	for (int t = 0; t < w->p.n_in; t++) {
		struct kf_gen_desc g;
		long long numel = w->p.t[t].numel;
		CUdeviceptr dst = set[t].data;
		inputs_desc(&w->p, t, seed, &g);
		dist_override(w, t, dist, &g);
		void *args[] = { &dst, &numel, &g.seed, &g.t, &g.kind, &g.dtype, &g.post, &g.a, &g.b,
				 &g.rows, &g.cols };
		if (g.post == KF_PO_SOFTMAX_LASTDIM || g.post == KF_PO_SCALED_SOFTMAX) {
			long long nrows = g.cols > 0 ? numel / g.cols : 1;
			unsigned grid = nrows > 65535 ? 65535 : (unsigned)(nrows ? nrows : 1);
			args[1] = &nrows;
			if (wk_launch_h(w, w->f_fill_softmax, grid, args, err) < 0)
				return -1;
		} else {
			unsigned long long gr = ((unsigned long long)numel + 255) / 256;
			if (gr > 65535ull * 8)
				gr = 65535ull * 8;
			if (wk_launch_h(w, w->f_fill, (unsigned)(gr ? gr : 1), args, err) < 0)
				return -1;
		}
		if (dist >= WK_DIST_ALIVE && wk_draw_post(w, set, t, seed, dist, err) < 0)
			return -1;
	}
	return 0;
}

int wk_checksum(struct worker *w, const struct wk_buf *b, int slot, struct buf *err)
{
	CUdeviceptr p = b->data, out = wk_slot_ptr(w, slot);
	unsigned long long bytes = b->bytes;
	void *args[] = { &p, &bytes, &out };

	return wk_launch_h(w, w->f_checksum, wk_grid_for(w, bytes / 8 + 1), args, err);
}

static int count_guard(struct worker *w, const struct wk_buf *b, int slot, struct buf *err)
{
	CUdeviceptr p1 = b->base, p2 = b->data + b->bytes, out = wk_slot_ptr(w, slot);
	unsigned long long n1 = WK_GUARD, n2 = b->total - WK_GUARD - b->bytes;
	unsigned pat = WK_GUARD_BYTE;
	void *a1[] = { &p1, &n1, &pat, &out };
	void *a2[] = { &p2, &n2, &pat, &out };

	if (!b->base)
		return 0;
	if (wk_launch_h(w, w->f_count_ne, wk_grid_for(w, n1), a1, err) < 0)
		return -1;
	return wk_launch_h(w, w->f_count_ne, wk_grid_for(w, n2), a2, err);
}

int wk_poison_outputs(struct worker *w, struct buf *err)
{
	for (int o = 0; o < w->p.n_out; o++) {
		const struct problem_tensor *t = &w->p.t[w->p.n_in + o];
		CUresult r = w->d.cuMemsetD8Async(w->out[o].data, poison_byte(t->dtype), w->out[o].bytes,
						  w->st);
		if (r != CUDA_SUCCESS)
			return wk_cuda_err(w, r, "poisoning outputs", err);
	}
	return 0;
}

int wk_compare_sample(struct worker *w, struct wk_eval_state *es, int o, CUdeviceptr ref, int slot,
		      unsigned long long sample_key, unsigned sample_mask, struct buf *err)
{
	const struct problem_tensor *t = &w->p.t[w->p.n_in + o];
	CUdeviceptr out = w->out[o].data, sp = wk_slot_ptr(w, slot);
	long long n = t->numel;
	int dt = (int)t->dtype;
	unsigned long long pb = poison_bits(t->dtype);
	void *args[] = { &out, &ref, &n, &dt, &es->atol, &es->rtol, &pb, &sp, &w->mask_key,
			 &sample_key, &sample_mask };

	return wk_launch_h(w, w->f_compare, wk_grid_for(w, (unsigned long long)n), args, err);
}

int wk_compare(struct worker *w, struct wk_eval_state *es, int o, CUdeviceptr ref, int slot,
	       struct buf *err)
{
	return wk_compare_sample(w, es, o, ref, slot, 0, 0, err);
}

static unsigned long long host_mix(unsigned long long z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* As kf_h_mask32 in harness.cuh. */
void wk_unmask(const struct worker *w, unsigned char *p, size_t off, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned long long b = (unsigned long long)(off + i);
		unsigned m = (unsigned)host_mix(w->mask_key ^ ((b >> 2) * 0xD1B54A32D192ED03ull));
		p[i] ^= (unsigned char)(m >> (8 * (b & 3)));
	}
}

static int fill_scratch(struct worker *w, struct wk_module *m, struct buf *err);

/* Shared memory filled on every SM: what the last launch left there is gone. */
static int scrub_smem(struct worker *w, struct buf *err)
{
	long long sm = jget_int(w->info, "sm_count", 132);
	unsigned pat = (unsigned)w->mask_key ^ 0x5CA1AB1Eu;
	void *args[] = { &pat };
	CUresult r;

	if (w->scrub_smem <= 0)
		return 0;
	r = w->d.cuLaunchKernel(w->f_scrub, (unsigned)(2 * (sm > 0 ? sm : 132)), 1, 1, 1024, 1, 1,
				(unsigned)w->scrub_smem, w->st, args, NULL);
	return r == CUDA_SUCCESS ? 0 : wk_cuda_err(w, r, "scrubbing shared memory", err);
}

/* Output o filled with one random finite value (a memset: as cheap as
 * the poison), so a kernel that leaves an element unwritten is wrong
 * there whatever it expected to find. */
static int fill_random(struct worker *w, int o, unsigned long long r, struct buf *err)
{
	const struct problem_tensor *t = &w->p.t[w->p.n_in + o];
	CUdeviceptr dst = w->out[o].data;
	size_t es = kf_dtype_size(t->dtype), n = w->out[o].bytes;
	unsigned bits;
	CUresult cr;

	switch (t->dtype) {
	case KF_F32:   /* sign, exponent 2^-8..2^7, mantissa: all random */
		bits = (unsigned)(r & 0x807fffffu) | ((unsigned)(119 + (r >> 32) % 16) << 23);
		break;
	case KF_F16:
		bits = (unsigned)(r & 0x83ffu) | ((unsigned)(7 + (r >> 32) % 16) << 10);
		bits |= bits << 16;
		break;
	case KF_BF16:
		bits = (unsigned)(r & 0x807fu) | ((unsigned)(119 + (r >> 32) % 16) << 7);
		bits |= bits << 16;
		break;
	case KF_BOOL:
		bits = (r & 1) ? 0x01010101u : 0;
		break;
	default:       /* integers: a random word (both halves of an int64) */
		bits = (unsigned)r;
		break;
	}
	if (es == 2 || es == 1 || n % 4)
		cr = es == 2 ? w->d.cuMemsetD16Async(dst, (unsigned short)bits, n / 2, w->st)
			     : w->d.cuMemsetD8Async(dst, (unsigned char)bits, n, w->st);
	else
		cr = w->d.cuMemsetD32Async(dst, bits, n / 4, w->st);
	return cr == CUDA_SUCCESS ? 0 : wk_cuda_err(w, cr, "filling outputs", err);
}

static unsigned long long next_rng(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
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
	return next_rng(&s) | (1ull << 62);   /* never a check seed */
}

int wk_launch_candidate(struct wk_eval_state *es, const struct wk_buf *ins, CUevent e0,
			CUevent e1, struct buf *err)
{
	struct worker *w = es->w;
	unsigned long long coin = next_rng(&es->fill_rng);

	if (scrub_smem(w, err) < 0)
		return RUN_ERR;
	/* The first launch: the poison, whose count labels unwritten output. */
	if (es->n_launches == 0 || (coin & 1)) {
		if (wk_poison_outputs(w, err) < 0)
			return RUN_ERR;
	} else {
		for (int o = 0; o < w->p.n_out; o++)
			if (fill_random(w, o, coin >> 1, err) < 0)
				return RUN_ERR;
	}
	if (fill_scratch(w, &es->cand, err) < 0 || wk_module_restore_globals(w, &es->cand, err) < 0)
		return RUN_ERR;
	if (jget_bool(es->proto, "flush_l2", 1))
		w->d.cuMemsetD32Async(w->flush.data, (unsigned)es->n_launches * 2654435761u,
				      w->flush.bytes / 4, w->st);
	es->n_launches++;
	return wk_run_plan(w, &es->cand, ins, e0, e1, err);
}

/* ---- plans ----------------------------------------------------------------- */

union argval {
	CUdeviceptr p;
	int i32;
	long long i64;
	float f;
	double d;
};

/* Scratch as declared: zeroed, or 0xFF bytes. */
static int fill_scratch(struct worker *w, struct wk_module *m, struct buf *err)
{
	for (int i = 0; i < m->plan.n_scratch; i++) {
		CUresult r = w->d.cuMemsetD8Async(m->scratch[i].data, m->plan.scratch[i].zeroed ? 0 : 0xFF,
						  m->scratch[i].bytes, w->st);
		if (r != CUDA_SUCCESS)
			return wk_cuda_err(w, r, "filling scratch", err);
	}
	return 0;
}

struct run_ctx {
	struct worker *w;
	struct wk_module *m;
	const struct wk_buf *ins;
	struct buf *err;
};

/* One launch of the block (loop variables applied). */
static int run_launch(void *ctx, int s, const long long *vars)
{
	struct run_ctx *rc = ctx;
	struct worker *w = rc->w;
	struct wk_module *m = rc->m;
	const struct launch_step *st = &m->plan.steps[s];
	union argval v[LAUNCH_MAX_ARGS];
	void *params[LAUNCH_MAX_ARGS];
	struct launch_call c;
	CUresult r;

	if (launch_step_eval(st, vars, &c, rc->err) < 0)
		return RUN_LAUNCH;
	for (int a = 0; a < st->n_args && a < LAUNCH_MAX_ARGS; a++) {
		const struct launch_arg *la = &st->args[a];
		const struct wk_buf *b;
		size_t es;
		switch (la->kind) {
		case LARG_TENSOR:
		case LARG_SCRATCH:
			if (la->kind == LARG_TENSOR) {
				if (la->index >= w->p.n_in + w->p.n_out)
					return kf_err(rc->err, "line %d: no tensor %d", st->line, la->index),
					       RUN_LAUNCH;
				b = la->index < w->p.n_in ? &rc->ins[la->index]
							  : &w->out[la->index - w->p.n_in];
				es = kf_dtype_size(w->p.t[la->index].dtype);
			} else {
				b = &m->scratch[la->index];
				es = m->plan.scratch[la->index].elem_size;
			}
			/* `x + OFFSET`: checked at plan build; again here, the plan came over a pipe */
			if (c.ival[a] < 0 || (size_t)c.ival[a] * es >= (b->bytes ? b->bytes : 1))
				return kf_err(rc->err, "line %d: element offset %lld out of range", st->line,
					      c.ival[a]), RUN_LAUNCH;
			v[a].p = b->data + (CUdeviceptr)((size_t)c.ival[a] * es);
			break;
		case LARG_INT:
			if (la->size == 4)
				v[a].i32 = (int)c.ival[a];
			else
				v[a].i64 = c.ival[a];
			break;
		case LARG_FLOAT:
			if (la->is_double)
				v[a].d = c.fval[a];
			else
				v[a].f = (float)c.fval[a];
			break;
		}
		params[a] = &v[a];
	}
	r = w->d.cuLaunchKernel(m->fn[s], c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
				c.block[2], c.smem, w->st, params, NULL);
	if (r != CUDA_SUCCESS) {
		struct buf what = BUF_INIT, d = BUF_INIT;
		launch_vars_desc(&m->plan, s, vars, &d);
		buf_setf(&what, "line %d: launching %s<<<(%u,%u,%u), (%u,%u,%u), %u>>>%s%s%s", st->line,
			 st->kernel, c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1],
			 c.block[2], c.smem, d.len ? " (at " : "", d.s, d.len ? ")" : "");
		wk_cuda_err(w, r, what.s, rc->err);
		buf_release(&what);
		buf_release(&d);
		return RUN_LAUNCH;
	}
	return 0;
}

/* Records e0, launches every step (loops expanded), records e1. */
int wk_run_plan(struct worker *w, struct wk_module *m, const struct wk_buf *ins, CUevent e0,
		CUevent e1, struct buf *err)
{
	struct run_ctx rc = { w, m, ins, err };
	int r;

	w->d.cuEventRecord(e0, w->st);
	r = launch_plan_walk(&m->plan, run_launch, &rc, err);
	if (r != 0)
		return RUN_LAUNCH;
	w->d.cuEventRecord(e1, w->st);
	return RUN_OK;
}

/* ---- problem and reference ------------------------------------------------- */

static void drop_keep(struct worker *w, int k)
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
			drop_keep(w, k);
}

static int keep_is_current(const struct worker *w, const struct wk_keep *k)
{
	return k->used && w->have_problem && !strcmp(k->dir, w->prob_dir) &&
	       !strcmp(k->ref_hash, w->ref_hash);
}

/* k still holds (seed, dist): a later ensure_ref may have evicted it. */
static int keep_holds(const struct wk_keep *k, unsigned long long seed, int dist)
{
	return k->used && k->seed == seed && k->dist == dist;
}

struct wk_keep *wk_keep_find(struct worker *w, unsigned long long seed, int dist)
{
	for (int i = 0; i < WK_MAX_KEEP; i++)
		if (keep_is_current(w, &w->keep[i]) && w->keep[i].seed == seed &&
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
		if (w->keep[k].used && !keep_is_current(w, &w->keep[k])) {
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
	drop_keep(w, k);
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

static int ensure_problem(struct worker *w, const json_t *req, const struct buf *bin,
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
		w->in = calloc((size_t)w->p.n_in + 1, sizeof(*w->in));
		w->in2 = calloc((size_t)w->p.n_in + 1, sizeof(*w->in2));
		w->out = calloc((size_t)w->p.n_out + 1, sizeof(*w->out));
		if (!w->in || !w->in2 || !w->out)
			abort();
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

static void refill_guard(struct worker *w, const struct wk_buf *b)
{
	if (!b->base)
		return;
	w->d.cuMemsetD8Async(b->base, WK_GUARD_BYTE, WK_GUARD, w->st);
	w->d.cuMemsetD8Async(b->data + b->bytes, WK_GUARD_BYTE, b->total - WK_GUARD - b->bytes, w->st);
}

/* Before each candidate: canaries restored (an earlier candidate may have
 * written over them). */
static void refill_guards(struct worker *w)
{
	for (int t = 0; t < w->p.n_in; t++) {
		refill_guard(w, &w->in[t]);
		refill_guard(w, &w->in2[t]);
	}
	for (int o = 0; o < w->p.n_out; o++)
		refill_guard(w, &w->out[o]);
}

/* After a failed candidate: what it may have touched is made again
 * (inputs regenerated; after an out-of-bounds write, references too). */
static void distrust(struct worker *w, const char *failed_check)
{
	w->in_seed = w->in2_seed = ~0ull;
	if (!strcmp(failed_check, "guard_overwritten"))
		drop_keeps(w, -1);
}

int wk_ensure_inputs(struct worker *w, unsigned long long seed, int dist, struct buf *err)
{
	if (w->in_seed == seed && w->in_dist == dist)
		return 0;
	if (wk_gen_inputs(w, w->in, seed, dist, err) < 0)
		return -1;
	w->in_seed = seed;
	w->in_dist = dist;
	return 0;
}

/* Device bytes a keep takes for output o (at least 1: cuMemAlloc refuses 0). */
static size_t keep_out_bytes(const struct worker *w, int o)
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
			bytes += keep_out_bytes(w, o);
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
			drop_keep(w, lru);
			ki = lru;
		}
	}
	k = &w->keep[ki];
	memset(k, 0, sizeof(*k));
	k->in_sum = calloc((size_t)w->p.n_in + 1, sizeof(*k->in_sum));
	k->out = calloc((size_t)w->p.n_out + 1, sizeof(*k->out));
	if (!k->in_sum || !k->out)
		abort();
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
	if (wk_poison_outputs(w, err) < 0 || fill_scratch(w, &w->ref, err) < 0)
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
		const size_t ob = keep_out_bytes(w, o);
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
	drop_keep(w, ki);        /* frees what was allocated; the slot is free again */
	return NULL;
}

/* For wk_sample: the reference outputs of (seed, dist): 0 the spec's draw, WK_DIST_ALIVE. */
int wk_ensure_ref_values(struct worker *w, const json_t *req, const struct buf *bin,
			 unsigned long long seed, int dist, const CUdeviceptr **outs, double *ref_ms,
			 struct buf *err)
{
	struct wk_keep *k;

	if (ensure_problem(w, req, bin, err) < 0 || !(k = ensure_ref(w, seed, dist, err)))
		return -1;
	*outs = k->out;
	*ref_ms = k->ref_ms;
	return 0;
}

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
		if (count_guard(w, &ins[t], g, err) < 0)
			return -1;
	for (int o = 0; o < w->p.n_out; o++)
		if (count_guard(w, &w->out[o], g, err) < 0)
			return -1;
	for (int i = 0; i < es->cand.plan.n_scratch; i++)
		if (count_guard(w, &es->cand.scratch[i], g, err) < 0)
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

/* One check run on w->in (which holds k's inputs). RUN_* or 1 on a failed check. */
static int check_run(struct wk_eval_state *es, struct wk_keep *k, const char *what,
		     struct run_verdict *v, struct buf *err)
{
	return wk_checked_run(es, k, es->w->in, what, es->w->ev[0], es->w->ev[1], v, err);
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

struct wk_keep *wk_ref_for(struct worker *w, unsigned long long seed, int dist, struct buf *err)
{
	return ensure_ref(w, seed, dist, err);
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
	if (ensure_problem(w, req, bin, err) < 0)
		goto fail;
	refill_guards(w);
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
		if (d && (!dist || (dist == 3 && !edges_kind(w)) ||
			  (dist == WK_DIST_ALIVE && !sens_has_alive(&w->p))))
			continue;
		es.normwise = d > 0;
		for (int i = 0; i < n && !ended; i++) {
			unsigned long long seed = seed0 + (unsigned long long)(d ? 1000 * d + i : ord[i]);
			struct wk_keep *k;
			char what[128], range[48] = "";
			if (dist == 4)
				snprintf(range, sizeof(range), " U[%g, %g)", -wide_bound(w), wide_bound(w));
			snprintf(what, sizeof(what), "check trial %d (seed %llu%s%s%s)", ntrials, seed,
				 d ? ", " : "", d ? json_string_value(json_array_get(dists, (size_t)d - 1)) : "",
				 range);
			wk_progress(w, es.timeout_s + REF_TIMEOUT_S + 30);
			t_ph = now_s();
			k = ensure_ref(w, seed, dist, err);
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
			if (!(ka = ensure_ref(w, sa, 0, err)) || wk_ensure_inputs(w, sa, 0, err) < 0)
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
				want = no ? others[next_rng(&tkey) % (unsigned long long)no] : 0;
				for (int i = 0; i < nck; i++)
					n_of += chk_dist[i] == want;
				pick = n_of ? (int)(next_rng(&tkey) % (unsigned long long)n_of) : 0;
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
				fdist[f] = tmix && (next_rng(&tkey) & 1) ? db : 0;
				if (wk_keep_find(w, fseed[f], fdist[f]))
					continue;   /* kept from an earlier evaluation here */
				/* A fresh set keeps its outputs until timing ends, leaving
				 * an eighth of the device free: other problems' kept
				 * references go first, then this one's least recently
				 * used other than A's and B's (recomputed when needed:
				 * large outputs are cheap references). */
				for (int o = 0; o < w->p.n_out; o++)
					need += keep_out_bytes(w, o);
				for (;;) {
					int lru = -1;
					if (w->d.cuMemGetInfo(&fr, &tot) != CUDA_SUCCESS)
						break;
					if (fr >= need + tot / WK_KEEP_HEADROOM)
						break;
					if (wk_drop_idle_keep(w))
						continue;
					for (int i = 0; i < WK_MAX_KEEP; i++) {
						int mine = keep_holds(&w->keep[i], sa, 0) || keep_holds(&w->keep[i], sb, db);
						for (int g = 0; g < f; g++)
							mine |= keep_holds(&w->keep[i], fseed[g], fdist[g]);
						if (keep_is_current(w, &w->keep[i]) && !mine &&
						    (lru < 0 || w->keep[i].stamp < w->keep[lru].stamp))
							lru = i;
					}
					if (lru < 0)
						break;
					drop_keep(w, lru);
				}
				if (fr < need + tot / WK_KEEP_HEADROOM) {
					fseed[f] = ~0ull;
					continue;
				}
				if (!ensure_ref(w, fseed[f], fdist[f], &ferr)) {
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
			if (!(kb = ensure_ref(w, sb, db, err)) || !(ka = ensure_ref(w, sa, 0, err)))
				goto fail;
			PH(WK_PH_REFS);
			if (!keep_holds(kb, sb, db))
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
	if (!ended)
		wk_set_result(res, "correct", NULL, "");
	if (!ended && timed > 0 && jget_bool(req, "profile", 0))
		wk_profile(&es, res);   /* worker_prof.c: apart from the timing */
	else if (!w->fatal)
		distrust(w, jget_str(res, "failed_check", ""));
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
		distrust(w, "");
	}
	buf_release(&v.detail);
	json_decref(res);
	return -1;
}
#undef PH
