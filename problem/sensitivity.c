#include "problem/sensitivity.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

int sens_seq_region(const struct problem *p, int *t, long long *stride, long long *block)
{
	json_t *g = json_object_get(json_object_get(p->spec, "attrs"), "graph"), *n;
	size_t i;

	json_array_foreach(g, i, n) {
		const char *op = json_string_value(json_object_get(n, "op"));
		const char *x = json_string_value(json_array_get(json_object_get(n, "in"), 0));
		int k, td;
		long long inner = 1;
		if (!op || strcmp(op, "rnn") || !x)
			continue;
		k = problem_tensor_index(p, x);
		if (k < 0 || k >= p->n_in || p->t[k].ndim != 3 || p->t[k].dist.post != KF_POST_NONE)
			return 0;
		td = json_is_true(json_object_get(n, "batch_first")) ? 1 : 0;
		if (p->t[k].shape[td] < 4)
			return 0;
		for (int d = td + 1; d < 3; d++)
			inner *= p->t[k].shape[d];
		*t = k;
		*stride = p->t[k].shape[td] * inner;
		*block = p->t[k].shape[td] / 4 * inner;
		return 1;
	}
	return 0;
}

int sens_has_alive(const struct problem *p)
{
	for (int t = 0; t < p->n_in; t++)
		if (p->t[t].has_alive)
			return 1;
	return 0;
}

int sens_count(const struct problem *p)
{
	int t;
	long long s, b;

	return p->n_in + sens_seq_region(p, &t, &s, &b);
}

void sens_draw(const struct problem *p, int j, struct inputs_draw *d)
{
	inputs_draw_spec(d);
	d->alive = sens_has_alive(p);
	if (j < p->n_in)
		d->redraw = j;
	else if (!sens_seq_region(p, &d->redraw, &d->stride, &d->block))
		d->redraw = -1;
}

void sens_name(const struct problem *p, const struct inputs_draw *d, char *out, size_t n)
{
	const struct problem_tensor *pt;
	long long inner = 1;

	if (d->redraw < 0 || d->redraw >= p->n_in) {
		snprintf(out, n, "(none)");
		return;
	}
	pt = &p->t[d->redraw];
	if (d->stride <= 0) {
		snprintf(out, n, "%s", pt->name);
		return;
	}
	/* the time dim is the one whose extent times the inner ones is stride */
	for (int k = pt->ndim - 1; k >= 0; k--) {
		if (pt->shape[k] * inner == d->stride) {
			snprintf(out, n, "%s[time steps 0..%lld of %lld]", pt->name, d->block / inner,
				 pt->shape[k]);
			return;
		}
		inner *= pt->shape[k];
	}
	snprintf(out, n, "%s[region]", pt->name);
}
