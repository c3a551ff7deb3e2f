/* The timed phase's secret schedule and the history rule (tsched.h). */
#include "tsched.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

static unsigned long long mix(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int tsched_build(unsigned long long key, int warm, int n_timed, int have_b, int n_fresh,
		 int *set, int *first)
{
	int total, within, slots[TSCHED_FRESH_WITHIN];

	if (warm < 0)
		warm = 0;
	if (n_timed < 0)
		n_timed = 0;
	total = warm + n_timed;
	for (int j = 0; j < total; j++)
		set[j] = have_b && (mix(&key) & 1) ? TSCHED_B : TSCHED_A;
	within = n_timed < TSCHED_FRESH_WITHIN ? n_timed : TSCHED_FRESH_WITHIN;
	if (n_fresh > TSCHED_MAX_FRESH)
		n_fresh = TSCHED_MAX_FRESH;
	if (n_fresh > within)
		n_fresh = within;
	if (n_fresh < 0)
		n_fresh = 0;
	/* Distinct positions: a partial Fisher-Yates shuffle of the slots. */
	for (int i = 0; i < within; i++)
		slots[i] = i;
	for (int f = 0; f < n_fresh; f++) {
		int k = f + (int)(mix(&key) % (unsigned long long)(within - f)), t = slots[f];
		slots[f] = slots[k];
		slots[k] = t;
		first[f] = warm + slots[f];
		set[first[f]] = TSCHED_FRESH + f;
	}
	return n_fresh;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int tsched_history(const double *novel, int n_novel, const double *replay, int n_replay,
		   double *ratio)
{
	double *r, med, lo;

	*ratio = 0;
	if (n_novel < 1 || n_replay < 3)
		return 0;
	r = xmalloc(sizeof(*r) * (size_t)n_replay);
	memcpy(r, replay, sizeof(*r) * (size_t)n_replay);
	qsort(r, (size_t)n_replay, sizeof(*r), cmp_d);
	med = n_replay % 2 ? r[n_replay / 2] : 0.5 * (r[n_replay / 2 - 1] + r[n_replay / 2]);
	free(r);
	lo = novel[0];
	for (int i = 1; i < n_novel; i++)
		if (novel[i] < lo)
			lo = novel[i];
	if (!(lo > 0))
		return 0;
	*ratio = med / lo;
	return *ratio < TSCHED_HISTORY_RATIO && lo - med > TSCHED_HISTORY_MIN_MS;
}
