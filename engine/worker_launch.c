/* One launch of a module's launch block: the state every candidate launch
 * starts from (shared memory scrubbed, outputs pre-filled, scratch filled,
 * the L2 flushed), then the plan's steps, loops expanded. */
#include "worker_int.h"
#include "core/json.h"

#include <string.h>

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

unsigned long long wk_next_rng(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int wk_launch_candidate(struct wk_eval_state *es, const struct wk_buf *ins, CUevent e0,
			CUevent e1, struct buf *err)
{
	struct worker *w = es->w;
	unsigned long long coin = wk_next_rng(&es->fill_rng);

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
	if (wk_fill_scratch(w, &es->cand, err) < 0 || wk_module_restore_globals(w, &es->cand, err) < 0)
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
int wk_fill_scratch(struct worker *w, struct wk_module *m, struct buf *err)
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
