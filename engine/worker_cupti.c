/* CUPTI activity records of kernel executions (dlopen of libcupti, so
 * kforge runs where it is missing; KFORGE_NO_CUPTI=1 turns it off). The
 * durations of the candidate's kernels, in start order, give a second
 * timing next to the CUDA events, without launch overheads.
 *
 * A record is the candidate's by its launch configuration, not its name:
 * after a module is unloaded and another loaded, CUPTI can report a kernel
 * under the name of an earlier module's (seen on the H100: a quarter of a
 * search's evaluations had every record named after a kernel of an earlier
 * candidate or reference). The harness's own kernels are named kf_* (a
 * prefix candidates may not use) from a module that stays loaded. */
#include "worker_int.h"
#include "core/log.h"
#include "core/xalloc.h"

#include <cupti_activity.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUPTI_BUF (8u << 20)
#define MAX_UNMATCHED 4

struct rec {
	uint64_t start, end;
};

struct cfg {
	const char *name;          /* the step's kernel (owned by the plan) */
	int grid[3], block[3], smem;
	int dyn;                   /* in a loop with a varying configuration: matched by name */
};

static struct {
	void *lib;
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*now)(uint64_t *);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	pthread_mutex_t mu;
	uint64_t t_start;          /* records that started earlier are stale */
	int stale;
	int on;
	struct cfg *steps;         /* LAUNCH_MAX_STEPS */
	int n_steps;
	struct rec *recs;
	int n, alloc;
	/* What came instead, for the env when records are missing. */
	int seen;                  /* non-harness kernel records in the window */
	int renamed;               /* counted records CUPTI named after another kernel */
	long long dropped_n;       /* records CUPTI dropped, since open */
	char *unmatched[MAX_UNMATCHED];   /* "name grid block smem" of records matching no step */
	int n_unmatched;
} C = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void clear_unmatched(void)
{
	for (int i = 0; i < C.n_unmatched; i++)
		free(C.unmatched[i]);
	C.n_unmatched = 0;
}

/* The step whose launch configuration the record has, or -1. */
static int step_of(const CUpti_ActivityKernel10 *k)
{
	for (int i = 0; i < C.n_steps; i++) {
		const struct cfg *c = &C.steps[i];
		if (c->dyn) {
			if (k->name && !strcmp(k->name, c->name))
				return i;
			continue;
		}
		if (k->gridX == c->grid[0] && k->gridY == c->grid[1] && k->gridZ == c->grid[2] &&
		    k->blockX == c->block[0] && k->blockY == c->block[1] && k->blockZ == c->block[2] &&
		    k->dynamicSharedMemory == c->smem)
			return i;
	}
	return -1;
}

static int named_step(const char *name)
{
	for (int i = 0; name && i < C.n_steps; i++)
		if (!strcmp(name, C.steps[i].name))
			return 1;
	return 0;
}

static void note_unmatched(const CUpti_ActivityKernel10 *k)
{
	char t[160];

	if (C.n_unmatched == MAX_UNMATCHED)
		return;
	snprintf(t, sizeof(t), "%.64s grid %d,%d,%d block %d,%d,%d smem %d", k->name ? k->name : "?",
		 k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ, k->dynamicSharedMemory);
	for (int i = 0; i < C.n_unmatched; i++)
		if (!strcmp(C.unmatched[i], t))
			return;
	C.unmatched[C.n_unmatched++] = xstrdup(t);
}

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, CUPTI_BUF);
	*size = *buffer ? CUPTI_BUF : 0;
	*max_records = 0;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				   size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t drop = 0;

	(void)size;
	pthread_mutex_lock(&C.mu);
	if (C.dropped && C.dropped(ctx, stream, &drop) == CUPTI_SUCCESS)
		C.dropped_n += (long long)drop;
	while (C.next(buffer, valid, &rec) == CUPTI_SUCCESS) {
		const CUpti_ActivityKernel10 *k;
		int s;
		if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
			continue;
		k = (const CUpti_ActivityKernel10 *)(const void *)rec;
		if (!C.on || (k->name && !strncmp(k->name, "kf_", 3)))
			continue;
		C.seen++;
		if ((s = step_of(k)) < 0) {
			note_unmatched(k);
			continue;
		}
		if (k->start < C.t_start) {
			/* A buffer flushed late: a launch from before the timing. */
			C.stale++;
			continue;
		}
		C.renamed += !named_step(k->name);
		if (C.n == C.alloc) {
			int na = C.alloc ? 2 * C.alloc : 1024;
			struct rec *nr = realloc(C.recs, (size_t)na * sizeof(*C.recs));
			if (!nr)
				continue;   /* the record is lost: the count says so (cupti_note) */
			C.recs = nr;
			C.alloc = na;
		}
		C.recs[C.n].start = k->start;
		C.recs[C.n].end = k->end;
		C.n++;
	}
	pthread_mutex_unlock(&C.mu);
	free(buffer);
}

void *wk_cupti_dlopen(void)
{
	const char *home = getenv("CUDA_HOME");
	const char *dirs[] = { home, "/usr/local/cuda",
#ifdef KF_CUDA_HOME
			       KF_CUDA_HOME,
#endif
			       NULL };
	const char *sub[] = { "lib64/libcupti.so", "extras/CUPTI/lib64/libcupti.so",
			      "lib64/libcupti.so.13", "extras/CUPTI/lib64/libcupti.so.13" };
	char p[1024];
	void *h;

	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		if (!dirs[d] || !*dirs[d])
			continue;
		for (size_t s = 0; s < sizeof(sub) / sizeof(sub[0]); s++) {
			snprintf(p, sizeof(p), "%s/%s", dirs[d], sub[s]);
			if ((h = dlopen(p, RTLD_NOW | RTLD_LOCAL)))
				return h;
		}
	}
	return dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
}

int wk_cupti_open(struct worker *w)
{
	C.lib = wk_cupti_dlopen();
	if (!C.lib) {
		log_info("CUPTI not found: event timing only");
		return -1;
	}
	*(void **)&C.enable = dlsym(C.lib, "cuptiActivityEnable");
	*(void **)&C.disable = dlsym(C.lib, "cuptiActivityDisable");
	*(void **)&C.reg = dlsym(C.lib, "cuptiActivityRegisterCallbacks");
	*(void **)&C.flush = dlsym(C.lib, "cuptiActivityFlushAll");
	*(void **)&C.next = dlsym(C.lib, "cuptiActivityGetNextRecord");
	*(void **)&C.now = dlsym(C.lib, "cuptiGetTimestamp");
	*(void **)&C.dropped = dlsym(C.lib, "cuptiActivityGetNumDroppedRecords");
	if (!C.enable || !C.disable || !C.reg || !C.flush || !C.next ||
	    C.reg(buf_requested, buf_completed) != CUPTI_SUCCESS ||
	    C.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
		log_warn("CUPTI unusable: event timing only");
		dlclose(C.lib);
		C.lib = NULL;
		return -1;
	}
	w->cupti = C.lib;
	return 0;
}

int wk_cupti_start(struct worker *w, const struct launch_plan *plan)
{
	if (!w->cupti)
		return -1;
	C.flush(1);   /* drop what came before */
	pthread_mutex_lock(&C.mu);
	C.n_steps = 0;
	if (!C.steps)
		C.steps = xcalloc(LAUNCH_MAX_STEPS, sizeof(*C.steps));
	for (int i = 0; i < plan->n_steps && i < LAUNCH_MAX_STEPS; i++) {
		const struct launch_step *st = &plan->steps[i];
		struct cfg *c = &C.steps[C.n_steps++];
		c->name = st->kernel;
		c->dyn = st->dyn;
		for (int d = 0; d < 3; d++) {
			c->grid[d] = (int)st->grid[d];
			c->block[d] = (int)st->block[d];
		}
		c->smem = (int)st->smem;
	}
	C.n = 0;
	C.stale = 0;
	C.seen = 0;
	C.renamed = 0;
	clear_unmatched();
	C.t_start = 0;
	if (C.now)
		C.now(&C.t_start);
	C.on = 1;
	pthread_mutex_unlock(&C.mu);
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

double *wk_cupti_stop(struct worker *w, int *n, int *stale, int *renamed)
{
	double *d;

	*n = 0;
	*stale = 0;
	*renamed = 0;
	if (!w->cupti)
		return NULL;
	C.flush(1);
	pthread_mutex_lock(&C.mu);
	C.on = 0;
	C.n_steps = 0;   /* the names belong to the plan */
	qsort(C.recs, (size_t)C.n, sizeof(*C.recs), cmp_rec);
	d = xcalloc((size_t)C.n + 1, sizeof(*d));
	for (int i = 0; i < C.n; i++)
		d[i] = (double)(C.recs[i].end - C.recs[i].start) * 1e-6;
	*n = C.n;
	*stale = C.stale;
	*renamed = C.renamed;
	C.n = 0;
	pthread_mutex_unlock(&C.mu);
	return d;
}

json_t *wk_cupti_diag(void)
{
	json_t *u = json_array(), *o;

	pthread_mutex_lock(&C.mu);
	for (int i = 0; i < C.n_unmatched; i++)
		json_array_append_new(u, json_string(C.unmatched[i]));
	o = json_pack("{s:i,s:i,s:o,s:I}", "seen", C.seen, "renamed", C.renamed, "unmatched", u,
		      "dropped", (json_int_t)C.dropped_n);
	pthread_mutex_unlock(&C.mu);
	return o;
}

void wk_cupti_pause(struct worker *w, int pause)
{
	if (!w->cupti)
		return;
	if (pause) {
		C.flush(1);
		C.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	} else {
		C.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	}
}

void wk_cupti_close(struct worker *w)
{
	if (!w->cupti)
		return;
	C.flush(1);
	C.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	pthread_mutex_lock(&C.mu);
	C.n_steps = 0;
	free(C.steps);
	C.steps = NULL;
	clear_unmatched();
	free(C.recs);
	C.recs = NULL;
	C.n = C.alloc = 0;
	pthread_mutex_unlock(&C.mu);
	w->cupti = NULL;
}
