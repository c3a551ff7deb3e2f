#include "collector/shard.h"

#include <stdlib.h>
#include <string.h>

struct ord {
	const struct shard_item *it;
	int idx;
};

static int ord_cmp(const void *a, const void *b)
{
	const struct ord *x = a, *y = b;
	int c;

	if (x->it->cost > y->it->cost)
		return -1;
	if (x->it->cost < y->it->cost)
		return 1;
	c = strcmp(x->it->id, y->it->id);
	return c ? c : x->idx - y->idx;
}

int shard_assign(const struct shard_item *items, int n, int n_shards, int *assign,
		 double *load, struct buf *err)
{
	struct ord *o;
	double *ld;
	int *cnt, i, s;

	if (n < 0 || n_shards < 1 || n_shards > 100000)
		return kf_err(err, "shards: need 1..100000 shards (got %d)", n_shards);
	for (i = 0; i < n; i++)
		if (!items[i].id || !(items[i].cost >= 0))
			return kf_err(err, "shards: item %d has no id or a bad cost", i);
	o = calloc(n ? (size_t)n : 1, sizeof(*o));
	ld = calloc((size_t)n_shards, sizeof(*ld));
	cnt = calloc((size_t)n_shards, sizeof(*cnt));
	if (!o || !ld || !cnt) {
		free(o);
		free(ld);
		free(cnt);
		return kf_err(err, "shards: out of memory");
	}
	for (i = 0; i < n; i++) {
		o[i].it = &items[i];
		o[i].idx = i;
	}
	qsort(o, (size_t)n, sizeof(*o), ord_cmp);
	for (i = 0; i < n; i++) {
		int best = 0;
		for (s = 1; s < n_shards; s++)
			/* equal loads (zero-cost items): fewer items wins, so no
			 * shard is left empty while another holds two */
			if (ld[s] < ld[best] || (ld[s] == ld[best] && cnt[s] < cnt[best]))
				best = s;
		assign[o[i].idx] = best;
		ld[best] += o[i].it->cost;
		cnt[best]++;
	}
	if (load)
		memcpy(load, ld, (size_t)n_shards * sizeof(*ld));
	free(o);
	free(ld);
	free(cnt);
	return 0;
}

double shard_problem_cost(const struct problem *p)
{
	/* H100 SXM ceilings: 3000 GB/s, 50 TFLOP/s fp32 (with TF32 paths). */
	const double per_candidate_s = 0.3, launches = 5 + 3 + 100 + 2;
	double ms = problem_roofline_ms(p, 3000.0, 50000.0);

	if (!(ms >= 0))
		ms = 0;
	return per_candidate_s + launches * ms / 1000.0;
}
