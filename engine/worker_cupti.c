/* CUPTI activity records of kernel executions (dlopen of libcupti, so
 * kforge runs where it is missing; KFORGE_NO_CUPTI=1 turns it off). The
 * durations of the candidate's kernels, in start order, give a second
 * timing next to the CUDA events, without launch overheads. */
#include "worker_int.h"
#include "core/log.h"

#include <cupti_activity.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUPTI_BUF (8u << 20)
#define MAX_NAMES LAUNCH_MAX_STEPS

struct rec {
	uint64_t start, end;
};

static struct {
	void *lib;
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*now)(uint64_t *);
	pthread_mutex_t mu;
	uint64_t t_start;          /* records that started earlier are stale */
	int stale;
	int on;
	char *names[MAX_NAMES];
	int n_names;
	struct rec *recs;
	int n, alloc;
} C = { .mu = PTHREAD_MUTEX_INITIALIZER };

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

	(void)ctx;
	(void)stream;
	(void)size;
	pthread_mutex_lock(&C.mu);
	while (C.next(buffer, valid, &rec) == CUPTI_SUCCESS) {
		const CUpti_ActivityKernel10 *k;
		int match = 0;
		if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
			continue;
		k = (const CUpti_ActivityKernel10 *)(const void *)rec;
		for (int i = 0; i < C.n_names && !match; i++)
			match = k->name && !strcmp(k->name, C.names[i]);
		if (!match || !C.on)
			continue;
		if (k->start < C.t_start) {
			/* A buffer flushed late: a launch from before the timing. */
			C.stale++;
			continue;
		}
		if (C.n == C.alloc) {
			C.alloc = C.alloc ? 2 * C.alloc : 1024;
			C.recs = realloc(C.recs, (size_t)C.alloc * sizeof(*C.recs));
		}
		C.recs[C.n].start = k->start;
		C.recs[C.n].end = k->end;
		C.n++;
	}
	pthread_mutex_unlock(&C.mu);
	free(buffer);
}

static void *open_lib(void)
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
	C.lib = open_lib();
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

int wk_cupti_start(struct worker *w, const char *const *names, int n)
{
	if (!w->cupti)
		return -1;
	C.flush(1);   /* drop what came before */
	pthread_mutex_lock(&C.mu);
	for (int i = 0; i < C.n_names; i++)
		free(C.names[i]);
	C.n_names = 0;
	for (int i = 0; i < n && i < MAX_NAMES; i++)
		C.names[C.n_names++] = strdup(names[i]);
	C.n = 0;
	C.stale = 0;
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

double *wk_cupti_stop(struct worker *w, int *n, int *stale)
{
	double *d;

	*n = 0;
	*stale = 0;
	if (!w->cupti)
		return NULL;
	C.flush(1);
	pthread_mutex_lock(&C.mu);
	C.on = 0;
	qsort(C.recs, (size_t)C.n, sizeof(*C.recs), cmp_rec);
	d = calloc((size_t)C.n + 1, sizeof(*d));
	for (int i = 0; i < C.n; i++)
		d[i] = (double)(C.recs[i].end - C.recs[i].start) * 1e-6;
	*n = C.n;
	*stale = C.stale;
	C.n = 0;
	pthread_mutex_unlock(&C.mu);
	return d;
}

void wk_cupti_close(struct worker *w)
{
	if (!w->cupti)
		return;
	C.flush(1);
	C.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	pthread_mutex_lock(&C.mu);
	for (int i = 0; i < C.n_names; i++)
		free(C.names[i]);
	C.n_names = 0;
	free(C.recs);
	C.recs = NULL;
	C.n = C.alloc = 0;
	pthread_mutex_unlock(&C.mu);
	w->cupti = NULL;
}
