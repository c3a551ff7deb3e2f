/* The built-in proposer: plays the LLM's game with the catalogue and the
 * templates. Ideas for a round: applicable to the problem's family,
 * realized by a template that supports the problem, not tried yet,
 * ranked by how earlier ideas of the same categories did (then by a
 * seeded hash). When fewer untried ideas apply than a round asks for, the
 * rest of the round revisits the tried ideas that did best, as a person
 * re-tunes what worked. Implementations: the idea's parameter choices
 * applied to the best seed kernel of the same template (or the template
 * defaults). Round 1 starts from the template's best-known plan for the
 * problem (kernels/plans.c): its idea comes first, and that idea's first
 * point is the plan's parameters on the template's defaults. */
#include "collector/builtin.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collector/catalogue.h"
#include "collector/proposers.h"
#include "core/json.h"
#include "engine/candidate.h"
#include "core/xalloc.h"

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

static uint64_t hash_str(uint64_t seed, const char *s)
{
	uint64_t h = 1469598103934665603ULL ^ mix(seed);

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return mix(h);
}

static void set_record(struct proposer_record *rec, json_t *request, json_t *response)
{
	char *a = json_dumps(request, JSON_SORT_KEYS | JSON_COMPACT);
	char *b = json_dumps(response, JSON_SORT_KEYS | JSON_COMPACT);

	buf_reset(&rec->model);
	buf_adds(&rec->model, "builtin");
	buf_reset(&rec->request);
	buf_adds(&rec->request, a ? a : "{}");
	buf_reset(&rec->response);
	buf_adds(&rec->response, b ? b : "{}");
	rec->prompt_tokens = rec->completion_tokens = rec->reasoning_tokens = -1;
	rec->http_status = 0;
	free(a);
	free(b);
	json_decref(request);
	json_decref(response);
}

#define TARGETED_BONUS 1.0

static long combos(const json_t *choices);

struct scored {
	const struct catalogue_idea *c;
	double score;
	uint64_t tie;
	int first;                 /* what the best kernel's limiter asks for */
	int plan;                  /* the template's best-known plan (round 1) */
};

static int scored_cmp(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;

	if (x->plan != y->plan)
		return x->plan ? -1 : 1;
	if (x->first != y->first)
		return x->first ? -1 : 1;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->tie < y->tie ? -1 : x->tie > y->tie;
}

/* A tried idea, summed over the rounds that chose it; s.score is its best
 * speedup vs eager (0: none, or no baseline). */
struct tried {
	struct scored s;
	int kernels, correct, times;
};

static int tried_cmp(const void *a, const void *b)
{
	return scored_cmp(&((const struct tried *)a)->s, &((const struct tried *)b)->s);
}

/* Up to want revisits of the tried ideas that gave correct kernels, best
 * first; the count. An idea is revisited while it has parameter points not
 * measured, and once in any case: its points then apply to the current
 * best kernel of its template, which later ideas may have changed (ideas
 * stack). Seeds' exact twins are skipped at implementation. */
static int add_revisits(const struct idea_request *req, int want, struct idea_list *out,
			json_t *chosen)
{
	struct tried *t = calloc((size_t)req->n_history + 1, sizeof(*t));
	int nt = 0, got = 0;

	if (!t)
		return -1;
	for (int h = 0; h < req->n_history; h++) {
		const struct idea_outcome *o = &req->history[h];
		const struct catalogue_idea *c = o->catalogue_id ? catalogue_find(o->catalogue_id) : NULL;
		int q = 0;
		if (!c || !c->template_id)
			continue;
		while (q < nt && t[q].s.c != c)
			q++;
		if (q == nt) {
			t[nt].s.c = c;
			t[nt].s.tie = hash_str(req->seed ^ 0x5245564953ULL, c->id);
			nt++;
		}
		t[q].times++;
		t[q].kernels += o->kernels;
		t[q].correct += o->correct;
		if (o->best_speedup > t[q].s.score)
			t[q].s.score = o->best_speedup;
	}
	qsort(t, (size_t)nt, sizeof(*t), tried_cmp);
	for (int q = 0; q < nt && got < want; q++) {
		const struct catalogue_idea *c = t[q].s.c;
		double best = t[q].s.score;
		json_t *ch = json_loads(c->params ? c->params : "{}", 0, NULL);
		long points = ch ? combos(ch) : 1;
		struct buf text = BUF_INIT, why = BUF_INIT;
		struct idea *it;
		json_decref(ch);
		if (t[q].correct <= 0 || (points <= t[q].kernels && t[q].times > 1))
			continue;
		if (best > 0)
			buf_addf(&why, "it gave %.2fx eager, the best of the tried ideas left to tune",
				 best);
		else
			buf_adds(&why, "it gave correct kernels (no eager baseline to rank by)");
		buf_addf(&text, "Revisit %s: %s; apply its parameter points (%ld, %d kernels so "
			 "far) to the fastest kernel of its template, which later ideas may have "
			 "improved. %s", c->id, why.s, points, t[q].kernels, c->text);
		it = idea_list_add(out);
		it->text = buf_detach(&text, NULL);
		it->categories = c->categories;
		it->category_method = xstrdup("catalogue");
		it->catalogue_id = xstrdup(c->id);
		json_array_append_new(chosen, json_pack("{s:s,s:s,s:f,s:s+,s:b}", "id", c->id,
			"template", c->template_id, "best_speedup", best, "why",
			"revisit: ", why.s, "revisit", 1));
		buf_release(&why);
		got++;
	}
	free(t);
	return got;
}

/* The best-known plan of the problem when round r starts from it (round 1,
 * the first after the reference): 1 with *bp, else 0. */
static int round_plan(const struct proposer_problem *pp, int r, struct builtin_plan *bp)
{
	memset(bp, 0, sizeof(*bp));
	return r <= 1 && builtin_best_plan(pp->spec, pp->arch && *pp->arch ? pp->arch : NULL, bp);
}

#define PLAN_WHY "the template's best-known plan: "
#define PLAN_TEXT "Start from the template's best-known plan for this problem (%s %s). "

/* The ideas a profile's limiter asks for first (docs/search.md): memory-
 * bound, fewer or better bytes (memory, async); compute-bound, cheaper or
 * narrower math (compute, precision); latency-bound, more parallel work
 * and shorter dependent chains (parallelism, control); launch-bound,
 * fewer launches (ideas that fuse, in one kernel). What they are, for the
 * record, in *what. */
static int limiter_wants(const char *lim, const struct catalogue_idea *c, const char **what)
{
	static const char *const fuse[] = { "fuse", "fusion", "one kernel", "single kernel",
					    "one launch", NULL };
	unsigned cats = 0;

	if (!lim)
		return 0;
	if (!strcmp(lim, "memory"))
		cats = CAT_MEMORY | CAT_ASYNC, *what = "memory and async ideas first";
	else if (!strcmp(lim, "compute"))
		cats = CAT_COMPUTE | CAT_PRECISION, *what = "compute and precision ideas first";
	else if (!strcmp(lim, "latency"))
		cats = CAT_PARALLELISM | CAT_CONTROL, *what = "parallelism and control-flow ideas first";
	else if (!strcmp(lim, "launch")) {
		*what = "ideas that fuse launches first";
		for (int i = 0; fuse[i]; i++)
			if (strcasestr(c->text, fuse[i]) || strcasestr(c->id, fuse[i]))
				return 1;
		return 0;
	} else
		return 0;
	return (c->categories & cats) != 0;
}

static int b_ideas(void *self, const struct idea_request *req, struct idea_list *out,
		   struct proposer_record *rec, struct buf *err)
{
	const json_t *spec = req->problem->spec;
	unsigned fam = family_of_problem(spec);
	double helped[CAT_COUNT] = { 0 };
	struct scored *v;
	json_t *rq, *rs, *hist, *chosen;
	const char *lim_what = NULL;
	struct buf lim_why = BUF_INIT;
	struct builtin_plan bp;
	int n = 0, i, have_plan = round_plan(req->problem, req->round, &bp), planned = 0;

	(void)self;
	v = calloc((size_t)catalogue_count, sizeof(*v));
	if (!v)
		return kf_err(err, "out of memory");
	/* What helped so far, per category: speedup over 1 counts for, a
	 * failed or slower idea against. */
	hist = json_array();
	for (i = 0; i < req->n_history; i++) {
		const struct idea_outcome *h = &req->history[i];
		double w = h->correct == 0 ? -0.5 : h->best_speedup >= 1.0 ? h->best_speedup : -0.25;
		for (int b = 0; b < CAT_COUNT; b++)
			if (h->categories & (1u << b))
				helped[b] += w;
		json_array_append_new(hist, json_pack("{s:s?,s:i,s:i,s:i,s:f}", "idea",
			h->catalogue_id, "round", h->round, "kernels", h->kernels, "correct",
			h->correct, "best_speedup", h->best_speedup));
	}
	for (i = 0; i < catalogue_count; i++) {
		const struct catalogue_idea *c = &catalogue[i];
		int tried = 0;
		if (!c->template_id || !(c->families & fam) ||
		    !builtin_tmpl_supports(c->template_id, spec) || builtin_requires(c->requires, spec) != 1)
			continue;
		for (int h = 0; h < req->n_history; h++)
			if (req->history[h].catalogue_id &&
			    !strcmp(req->history[h].catalogue_id, c->id))
				tried = 1;
		if (tried)
			continue;
		v[n].c = c;
		/* An idea written for this shape (split-K for a 256x256 output
		 * with K = 524288) goes before generic ones, as a person would
		 * try it first; evidence from earlier rounds can still outweigh. */
		if (c->requires)
			v[n].score += TARGETED_BONUS;
		for (int b = 0; b < CAT_COUNT; b++)
			if (c->categories & (1u << b))
				v[n].score += helped[b];
		v[n].tie = hash_str(req->seed, c->id);
		v[n].first = limiter_wants(req->limiter, c, &lim_what);
		v[n].plan = have_plan && !strcmp(c->id, bp.idea) && !strcmp(c->template_id, bp.template_id);
		planned |= v[n].plan;
		n++;
	}
	qsort(v, (size_t)n, sizeof(*v), scored_cmp);
	chosen = json_array();
	if (lim_what)
		buf_addf(&lim_why, "limiter %s (profile of %s): %s", req->limiter,
			 req->limiter_kernel ? req->limiter_kernel : "the best kernel", lim_what);
	for (i = 0; i < n && i < req->k; i++) {
		struct idea *it = idea_list_add(out);
		const char *why = v[i].c->requires ? "written for this problem's shape" :
			v[i].score > 0 ? "its categories helped in earlier rounds" :
			v[i].score < 0 ? "untried; its categories have not helped yet" :
			"untried; no evidence yet for its categories";
		struct buf w = BUF_INIT;
		if (v[i].plan) {
			struct buf t = BUF_INIT;
			buf_addf(&t, PLAN_TEXT "%s", bp.template_id, bp.params, v[i].c->text);
			it->text = buf_detach(&t, NULL);
			buf_addf(&w, PLAN_WHY "%s", bp.evidence);
		} else {
			it->text = xstrdup(v[i].c->text);
			buf_addf(&w, "%s%s%s", v[i].first ? lim_why.s : "", v[i].first ? "; " : "", why);
		}
		it->categories = v[i].c->categories;
		it->category_method = xstrdup("catalogue");
		it->catalogue_id = xstrdup(v[i].c->id);
		json_t *ch = json_pack("{s:s,s:s,s:f,s:s}", "id", v[i].c->id, "template",
				       v[i].c->template_id, "category_score", v[i].score, "why", w.s);
		buf_release(&w);
		if (v[i].plan)
			json_object_set_new(ch, "plan", json_true());
		json_array_append_new(chosen, ch);
	}
	int revisits = i < req->k ? add_revisits(req, req->k - i, out, chosen) : 0;
	if (revisits < 0) {
		json_decref(chosen);
		json_decref(hist);
		buf_release(&lim_why);
		free(v);
		return kf_err(err, "out of memory");
	}
	rq = json_pack("{s:s,s:s,s:i,s:i,s:I,s:o}", "problem", req->problem->id, "family",
		       fam ? family_name(__builtin_ctz(fam)) : "unknown", "round", req->round,
		       "k", req->k, "seed", (json_int_t)req->seed, "history", hist);
	/* Only with a profile: the records of runs without one stay as they were. */
	if (lim_what)
		json_object_set_new(rq, "limiter", json_pack("{s:s,s:s?}", "limiter", req->limiter,
							     "kernel", req->limiter_kernel));
	rs = json_pack("{s:o,s:i,s:i,s:s?}", "ideas", chosen, "applicable_untried", n, "revisits",
		       revisits, "note", n + revisits == 0 ?
		       "no untried idea has a template for this problem, and no tried one has "
		       "parameter points left to measure" : NULL);
	if (lim_what)
		json_object_set_new(rs, "why", json_string(lim_why.s));
	/* Only when round 1 leads with it: other records stay as they were. */
	if (planned && req->k > 0)
		json_object_set_new(rs, "plan", json_pack("{s:s,s:s,s:o*,s:s}", "idea", bp.idea,
			"template", bp.template_id, "params", json_loads(bp.params, 0, NULL),
			"evidence", bp.evidence));
	set_record(rec, rq, rs);
	buf_release(&lim_why);
	free(v);
	return 0;
}

/* The i-th combination of the idea's parameter arrays (mixed radix). */
static json_t *combo(const json_t *choices, long idx)
{
	json_t *o = json_object();
	const char *k;
	json_t *arr;

	json_object_foreach((json_t *)choices, k, arr) {
		size_t n = json_array_size(arr);
		if (!n)
			continue;
		json_object_set(o, k, json_array_get(arr, (size_t)(idx % (long)n)));
		idx /= (long)n;
	}
	return o;
}

static long combos(const json_t *choices)
{
	const char *k;
	json_t *arr;
	long n = 1;

	json_object_foreach((json_t *)choices, k, arr)
		if (json_array_size(arr) && n < 100000)
			n *= (long)json_array_size(arr);
	return n;
}

/* Whether a kernel of this hash is known: 1 from an earlier round, 2 made in
 * this round (hashes); 0 new. */
static int known_kernel(const struct impl_request *req, const json_t *hashes, const char *h)
{
	size_t i;
	json_t *v;

	for (int k = 0; k < req->n_known; k++)
		if (!strcmp(req->known[k], h))
			return 1;
	json_array_foreach(hashes, i, v)
		if (!strcmp(json_string_value(v), h))
			return 2;
	return 0;
}

/* Whether a seed of this template has exactly these parameters. */
static int same_as_seed(const struct impl_request *req, const char *template_id, const json_t *p)
{
	for (int i = 0; i < req->n_seeds; i++)
		if (req->seeds[i].template_id && !strcmp(req->seeds[i].template_id, template_id) &&
		    req->seeds[i].params && json_equal((json_t *)req->seeds[i].params, (json_t *)p))
			return 1;
	return 0;
}

struct pick {
	const struct catalogue_idea *c;
	const struct seed_kernel *base;
	long total;
	int repeats;               /* points whose kernel an earlier round has */
	int round_repeats;         /* points whose kernel this round has made */
	int plan;                  /* the best-known plan's point: 1 made, -1 a kernel that
				    * exists already, 0 not this idea's round */
	struct builtin_plan bp;
	json_t *made;              /* [{template, params}] of the proposals */
};

/* Point p (taken over) of pk's idea, on base: 1 a proposal (only its hash when
 * out is NULL), 0 skipped as a seed's own point or a kernel that exists. */
static int take_point(const struct impl_request *req, json_t *hashes, struct proposal_list *out,
		      struct pick *pk, json_t *p, const char *on)
{
	const struct catalogue_idea *c = pk->c;
	struct proposal *pr;
	struct buf src = BUF_INIT, e = BUF_INIT, note = BUF_INIT;

	if (same_as_seed(req, c->template_id, p)) {
		/* That kernel exists already: a slot for a new point instead. */
		json_decref(p);
		return 0;
	}
	int bad = builtin_tmpl_render(c->template_id, req->problem->spec, p, &src, &e);
	if (!bad) {
		/* Points that render the same text as a kernel the problem has, or as one
		 * an earlier idea of the round makes: a slot for another point instead
		 * (evaluated once anyway, the slot would be lost). */
		char h[65];
		candidate_hash(src.s, src.len, h);
		int k = known_kernel(req, hashes, h);
		if (k) {
			*(k == 1 ? &pk->repeats : &pk->round_repeats) += 1;
			json_decref(p);
			buf_release(&src);
			buf_release(&e);
			return 0;
		}
		json_array_append_new(hashes, json_string(h));
	}
	if (!out) {
		json_decref(p);
		buf_release(&src);
		buf_release(&e);
		return 1;
	}
	pr = proposal_list_add(out);
	pr->template_id = xstrdup(c->template_id);
	pr->params = p;
	if (bad)
		pr->format_error = xstrdup(e.s);
	else
		pr->source = buf_detach(&src, NULL);
	buf_addf(&note, "%s on %s", c->id, on);
	pr->note = buf_detach(&note, NULL);
	json_array_append_new(pk->made, json_pack("{s:s,s:O}", "template", c->template_id,
						  "params", p));
	buf_release(&src);
	buf_release(&e);
	return 1;
}

/* One idea's choice of points: in round 1, the idea of the template's
 * best-known plan takes the plan's parameters on the template's defaults
 * first; then the first of a seeded shuffle of its parameter combinations,
 * built on the fastest seed of its template, leaving out the seeds' own
 * points and kernels in req->known or in hashes (to which it adds its own),
 * up to m. out NULL: only the hashes (an earlier idea of the round, replayed). */
static int pick(const struct impl_request *req, json_t *hashes, struct proposal_list *out,
		struct pick *pk, struct buf *err)
{
	const struct catalogue_idea *c = req->idea->catalogue_id ?
		catalogue_find(req->idea->catalogue_id) : NULL;
	const struct seed_kernel *base = NULL;
	json_t *choices;
	long total, i, *order;
	int got = 0;

	memset(pk, 0, sizeof(*pk));
	if (!c || !c->template_id)
		return kf_err(err, "builtin: idea has no template");
	/* Build on the fastest seed made by the same template. */
	for (i = 0; i < req->n_seeds; i++)
		if (req->seeds[i].template_id && !strcmp(req->seeds[i].template_id, c->template_id) &&
		    (!base || (req->seeds[i].time_ms > 0 && req->seeds[i].time_ms < base->time_ms)))
			base = &req->seeds[i];
	choices = json_loads(c->params ? c->params : "{}", 0, NULL);
	total = combos(choices);
	order = calloc((size_t)total, sizeof(*order));
	if (!order) {
		json_decref(choices);
		return kf_err(err, "out of memory");
	}
	pk->c = c;
	pk->base = base;
	pk->total = total;
	pk->made = json_array();
	if (req->m > 0 && round_plan(req->problem, req->round, &pk->bp) &&
	    !strcmp(pk->bp.idea, c->id) && !strcmp(pk->bp.template_id, c->template_id)) {
		json_t *pp = json_loads(pk->bp.params, 0, NULL);
		json_t *p = builtin_tmpl_params(c->template_id, pp);
		json_decref(pp);
		pk->plan = p && take_point(req, hashes, out, pk, p, "template defaults: the "
					   "template's best-known plan") ? 1 : -1;
		got += pk->plan == 1;
	}
	for (i = 0; i < total; i++)
		order[i] = i;
	/* Seeded shuffle: different rounds try different corners first. */
	for (i = total - 1; i > 0; i--) {
		long j = (long)(mix(req->seed ^ (uint64_t)i) % (uint64_t)(i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < total && got < req->m; i++) {
		json_t *p = builtin_tmpl_params(c->template_id, base ? base->params : NULL);
		json_t *ch = combo(choices, order[i]);
		json_object_update(p, ch);
		json_decref(ch);
		got += take_point(req, hashes, out, pk, p, base ? base->kernel_id : "template defaults");
	}
	free(order);
	json_decref(choices);
	return 0;
}

static int b_implement(void *self, const struct impl_request *req, struct proposal_list *out,
		       struct proposer_record *rec, struct buf *err)
{
	json_t *hashes = json_array(), *before = json_array();
	struct pick pk;

	(void)self;
	/* The round's earlier ideas first, in the round's order: what they make is
	 * known here whichever thread runs first. */
	for (int i = 0; i < req->n_before; i++) {
		const char *id = req->before[i].idea->catalogue_id;
		json_array_append_new(before, id ? json_string(id) : json_null());
		if (pick(&req->before[i], hashes, NULL, &pk, err) < 0) {
			buf_reset(err);   /* an idea without a template makes nothing */
			continue;
		}
		json_decref(pk.made);
	}
	if (pick(req, hashes, out, &pk, err) < 0) {
		json_decref(hashes);
		json_decref(before);
		return -1;
	}
	set_record(rec, json_pack("{s:s,s:s,s:i,s:i,s:s?,s:o}", "problem", req->problem->id, "idea",
				  pk.c->id, "round", req->round, "m", req->m, "base_kernel",
				  pk.base ? pk.base->kernel_id : NULL, "round_ideas_before", before),
		   json_pack("{s:o,s:I,s:i,s:i,s:o*}", "implementations", pk.made, "combinations",
			     (json_int_t)pk.total, "skipped_known", pk.repeats,
			     "skipped_round", pk.round_repeats, "plan", !pk.plan ? NULL :
			     json_pack("{s:o*,s:s,s:b,s:s}", "params", json_loads(pk.bp.params, 0, NULL),
				       "evidence", pk.bp.evidence, "made", pk.plan == 1, "why",
				       pk.plan == 1 ? "the template's best-known plan, the first "
				       "implementation" : "the template's best-known plan: its kernel "
				       "exists already, skipped")));
	json_decref(hashes);
	return 0;
}

static int b_repair(void *self, const struct repair_request *req, struct proposal *out,
		    struct proposer_record *rec, struct buf *err)
{
	const struct seed_kernel *k = req->kernel;
	struct buf src = BUF_INIT, e = BUF_INIT;

	(void)self;
	(void)err;
	/* No model to reason about the failure: fall back to the template's
	 * defaults, the configuration most likely to be right. */
	if (k && k->template_id && builtin_tmpl_supports(k->template_id, req->problem->spec)) {
		out->template_id = xstrdup(k->template_id);
		out->params = builtin_tmpl_params(k->template_id, NULL);
		if (builtin_tmpl_render(k->template_id, req->problem->spec, out->params, &src, &e))
			out->format_error = xstrdup(e.s);
		else
			out->source = buf_detach(&src, NULL);
		out->note = xstrdup("repair: template defaults");
	} else {
		out->format_error = xstrdup("the built-in proposer cannot repair a kernel that no "
					   "template made");
	}
	set_record(rec, json_pack("{s:s,s:s?,s:s?,s:i}", "problem", req->problem->id, "kernel",
				  k ? k->kernel_id : NULL, "status", req->status, "turn", req->turn),
		   json_pack("{s:s}", "action", out->source ? "template defaults" : "none"));
	buf_release(&src);
	buf_release(&e);
	return 0;
}

int proposer_builtin_open(struct proposer *p, const struct proposer_options *o, struct buf *err)
{
	(void)o;
	return builtin_proposer_open(p, err);
}

int builtin_proposer_open(struct proposer *p, struct buf *err)
{
	(void)err;
	memset(p, 0, sizeof(*p));
	p->name = "builtin";
	p->ideas = b_ideas;
	p->implement = b_implement;
	p->repair = b_repair;
	return 0;
}
