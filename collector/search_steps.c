/* The steps of one problem's search: round 0 (the reference), a branch
 * round (ideas -> implementations -> evaluations), a revise turn (repair
 * the last kernel, or improve it). Each step first looks in the store for
 * what it already did. */
#include "search_int.h"
#include "collector/proposers.h"
#include "core/json.h"
#include "core/xalloc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int total_ok(struct search *S)
{
	const struct search_budget *T = &S->cfg->total;
	int ok;
	pthread_mutex_lock(&S->lock);
	ok = !((T->llm_calls && S->t_calls >= T->llm_calls) ||
	       (T->tokens && S->t_tokens >= T->tokens) || (T->ideas && S->t_ideas >= T->ideas) ||
	       (T->impls && S->t_impls >= T->impls));
	pthread_mutex_unlock(&S->lock);
	return ok;
}

/* Before a new call or round: SP_STOP, SP_BUDGET (total budgets), 0. */
static int may_go(struct sproblem *P)
{
	if (search_stop_requested(P->S))
		return SP_STOP;
	return total_ok(P->S) ? 0 : SP_BUDGET;
}

static void note_call(struct sproblem *P, const struct proposer_record *rec, int n_ideas, int inserted)
{
	long long t = 0;
	if (!inserted)
		return;
	if (rec->prompt_tokens > 0)
		t += rec->prompt_tokens;
	if (rec->completion_tokens > 0)
		t += rec->completion_tokens;
	pthread_mutex_lock(&P->S->lock);
	P->S->t_ideas += n_ideas;
	pthread_mutex_unlock(&P->S->lock);
	search_note(P, 0, 0, 0, 0, 1, t);
}

/* Counts failed calls in a row: -1 (with err) when the problem should stop. */
static int streak(struct sproblem *P, const struct proposer_record *rec, struct buf *err)
{
	int n;
	pthread_mutex_lock(&P->S->lock);
	n = rec->error.len ? ++*P->fail_streak : (*P->fail_streak = 0);
	if (rec->error.len)
		++*P->holes;
	pthread_mutex_unlock(&P->S->lock);
	if (n >= SEARCH_FAIL_STREAK)
		return kf_err(err, "the proposer failed %d times in a row (last: %s)", n, rec->error.s);
	return 0;
}

static int put_call_tx(struct sproblem *P, const char *id, int round, const char *purpose,
		       const struct proposer_record *rec, int retry, struct buf *err)
{
	int r;
	if (store_begin(&P->st, err) < 0)
		return -1;
	r = sdb_put_call(P, id, round, purpose, rec, retry, err);
	if (r < 0 || store_commit(&P->st, err) < 0) {
		store_rollback(&P->st);
		return -1;
	}
	note_call(P, rec, 0, r);
	return streak(P, rec, err);
}

/* Converts candidate rows into seed kernels (pointers into rows; params parsed into *owned). */
static void to_seeds(const json_t *rows, struct seed_kernel *v, json_t **owned, int *n)
{
	size_t i;
	json_t *c;
	*n = 0;
	json_array_foreach(rows, i, c) {
		if (*n >= SEARCH_SEEDS_MAX)
			break;
		v[*n].kernel_id = jget_str(c, "label", "");
		v[*n].source = jget_str(c, "source", "");
		v[*n].template_id = jget_str(c, "template_id", NULL);
		v[*n].time_ms = jget_num(c, "time_mean_ms", 0);
		v[*n].speedup = jget_num(c, "speedup_eager", 0);
		owned[*n] = NULL;
		if (jget_str(c, "params", NULL))
			owned[*n] = json_loads(jget_str(c, "params", ""), 0, NULL);
		v[*n].params = owned[*n];
		v[*n].profile = NULL;
		(*n)++;
	}
}

/* With --profile-feedback: each seed's profile as text (texts[i] owned,
 * NULL when it has none). */
static int seed_profiles(struct sproblem *P, const json_t *rows, struct seed_kernel *v, int n,
			 char **texts, struct buf *err)
{
	for (int i = 0; i < n; i++)
		texts[i] = NULL;
	for (int i = 0; i < n && P->S->cfg->profile_feedback; i++) {
		json_t *prof = NULL;
		struct buf b = BUF_INIT;
		if (sdb_profile(P, json_array_get(rows, (size_t)i), &prof, err) < 0)
			return -1;
		if (!prof)
			continue;
		proposer_profile_text(prof, &b);
		v[i].profile = texts[i] = buf_detach(&b, NULL);
		json_decref(prof);
	}
	return 0;
}

/* The profile of the best kernel before round (*prof NULL: none), its label in label. */
static int best_profile(struct sproblem *P, int round, json_t **prof, char label[64],
			struct buf *err)
{
	json_t *cands = sdb_candidates(P, err), *good = json_array(), *c;
	size_t i;
	int r = 0;

	*prof = NULL;
	label[0] = 0;
	if (!cands) {
		json_decref(good);
		return -1;
	}
	json_array_foreach(cands, i, c)
		if (jget_int(c, "round", 0) < round && sdb_good(P, c))
			json_array_append(good, c);
	sdb_rank(good);
	if (json_array_size(good)) {
		c = json_array_get(good, 0);
		snprintf(label, 64, "%s", jget_str(c, "label", ""));
		r = sdb_profile(P, c, prof, err);
	}
	json_decref(cands);
	json_decref(good);
	return r;
}

static json_t *ids_of(const json_t *rows, const char *key, int distinct)
{
	json_t *out = json_array(), *c, *x;
	size_t i, j;
	json_array_foreach(rows, i, c) {
		const char *id = jget_str(c, key, NULL);
		int seen = 0;
		if (!id)
			continue;
		if (distinct)
			json_array_foreach(out, j, x)
				if (!strcmp(json_string_value(x), id))
					seen = 1;
		if (!seen)
			json_array_append_new(out, json_string(id));
	}
	return out;
}

int sp_reference(struct sproblem *P, struct buf *err)
{
	int st, r;
	json_t *c, *parents;

	if (!P->prob->reference_src || !*P->prob->reference_src)
		return SP_OK;
	st = sdb_round_state(P, 0, err);
	if (st < 0)
		return -1;
	if (st == 2)
		return SP_OK;
	if (st == 0) {
		r = may_go(P);
		if (r)
			return r;
		if (sdb_round_open(P, 0, err) < 0)
			return -1;
	}
	c = sdb_candidate_at(P, 0, NULL, 0, err);
	if (!c) {
		char part[32];
		snprintf(part, sizeof(part), "ref_%s", P->tag);
		parents = json_array();
		r = sdb_eval_put(P, 0, NULL, part, 0, P->prob->reference_src, NULL, NULL, NULL, parents, NULL, err);
		json_decref(parents);
		if (r < 0)
			return -1;
	}
	json_decref(c);
	return sdb_round_done(P, 0, err) < 0 ? -1 : SP_OK;
}

/* The ideas of a round: stored ones, or a new proposer call. */
static int round_ideas(struct sproblem *P, int round, int k, const json_t *parent_ideas,
		       json_t **out, struct buf *err)
{
	char call_id[64];
	int failed = 0, r, nh = 0;
	struct idea_list list;
	struct proposer_record rec;
	struct idea_outcome *hist = NULL;
	json_t *h = NULL, *x, *prof = NULL;
	struct buf ptext = BUF_INIT;
	char plabel[64];
	size_t i;

	*out = NULL;
	sdb_call_id(P, round, "ideas", "", call_id);
	r = sdb_call_get(P, call_id, &failed, err);
	if (r < 0)
		return -1;
	if (r == 0 || failed) { /* new, or a failed call retried */
		r = may_go(P);
		if (r)
			return r;
		h = sdb_history(P, round, err);
		if (!h)
			return -1;
		hist = xcalloc(json_array_size(h) + 1, sizeof(*hist));
		json_array_foreach(h, i, x) {
			hist[nh].text = jget_str(x, "text", "");
			hist[nh].categories = (unsigned)jget_int(x, "categories", 0);
			hist[nh].catalogue_id = jget_str(x, "catalogue_id", NULL);
			hist[nh].round = (int)jget_int(x, "round", 0);
			hist[nh].kernels = (int)jget_int(x, "kernels", 0);
			hist[nh].correct = (int)jget_int(x, "correct", 0);
			hist[nh].best_speedup = jget_num(x, "best_speedup", 0);
			nh++;
		}
		struct idea_request req = { &P->pp, hist, nh, k, round,
					    sdb_seed(P, round, "ideas", 0) };
		if (best_profile(P, round, &prof, plabel, err) < 0) {
			free(hist);
			json_decref(h);
			return -1;
		}
		if (prof) {
			req.limiter = jget_str(prof, "limiter", NULL);
			req.limiter_kernel = plabel;
			if (P->S->cfg->profile_feedback) {
				proposer_profile_text(prof, &ptext);
				req.profile = ptext.s;
			}
		}
		idea_list_init(&list);
		proposer_record_init(&rec);
		r = P->S->prop->ideas(P->S->prop->self, &req, &list, &rec, err);
		if (r == PROPOSER_RC_BUDGET) {
			buf_reset(err);
			idea_list_release(&list);
			proposer_record_release(&rec);
			free(hist);
			json_decref(h);
			json_decref(prof);
			buf_release(&ptext);
			return SP_BUDGET;
		}
		if (r < 0) {
			if (!rec.error.len)
				buf_adds(&rec.error, err->len ? err->s : "proposer failed");
			buf_reset(err);
			list.n = 0; /* recorded as a failed call; the round goes on without ideas */
		}
		r = sdb_put_ideas(P, call_id, round, &rec, failed, &list, list.n < k ? list.n : k,
				  parent_ideas, err);
		if (r >= 0) {
			note_call(P, &rec, list.n < k ? list.n : k, r);
			r = streak(P, &rec, err);
		}
		idea_list_release(&list);
		proposer_record_release(&rec);
		free(hist);
		json_decref(h);
		json_decref(prof);
		buf_release(&ptext);
		if (r < 0)
			return -1;
	}
	*out = sdb_ideas(P, round, err);
	return *out ? 0 : -1;
}

/* Evaluates and records proposals [0, n) not yet recorded. */
static int put_proposals(struct sproblem *P, int round, const char *idea_id, const char *part,
			 const struct proposal_list *pl, int n, const json_t *parents,
			 const char *call_id, struct buf *err)
{
	for (int j = 0; j < n && j < pl->n; j++) {
		json_t *c = sdb_candidate_at(P, round, idea_id, j, err);
		const struct proposal *p = &pl->v[j];
		if (c) {
			json_decref(c);
			continue;
		}
		if (err->len)
			return -1;
		if (search_stop_requested(P->S))
			return SP_STOP;
		if (sdb_eval_put(P, round, idea_id, part, j, p->source, p->format_error,
				 p->template_id, p->params, parents, call_id, err) < 0)
			return -1;
	}
	return SP_OK;
}

/* Has slot (round, idea, j) for every j < n? */
static int all_done(struct sproblem *P, int round, const char *idea_id, int n, struct buf *err)
{
	for (int j = 0; j < n; j++) {
		json_t *c = sdb_candidate_at(P, round, idea_id, j, err);
		if (!c)
			return err->len ? -1 : 0;
		json_decref(c);
	}
	return 1;
}

static void to_idea(const json_t *row, struct idea *it)
{
	memset(it, 0, sizeof(*it));
	it->text = (char *)jget_str(row, "text", "");
	it->categories = (unsigned)jget_int(row, "categories", 0);
	it->catalogue_id = (char *)jget_str(row, "catalogue_id", NULL);
}

/* Idea idx of the round's ideas: at most mm[idx] implementations (planned by
 * the round). The request names the ideas before it, so that a deterministic
 * proposer can skip their kernels whatever order the threads finish in. */
static int implement(struct sproblem *P, int round, int idx, const json_t *ideas, const int *mm,
		     const json_t *seed_rows, struct buf *err)
{
	char call_id[64];
	const json_t *idea = json_array_get(ideas, (size_t)idx);
	const char *idea_id = jget_str(idea, "id", "");
	int m = mm[idx];
	int failed = 0, r, exists, n_seeds, n_known;
	const char **known_s;
	json_t *known;
	struct seed_kernel seeds[SEARCH_SEEDS_MAX];
	json_t *owned[SEARCH_SEEDS_MAX], *parents;
	char *ptexts[SEARCH_SEEDS_MAX];
	struct proposal_list pl;
	struct proposer_record rec;
	struct idea it, *before_it;
	struct impl_request *before;

	sdb_call_id(P, round, "implement", idea_id, call_id);
	exists = sdb_call_get(P, call_id, &failed, err);
	if (exists < 0)
		return -1;
	if (failed)
		exists = 0; /* retried */
	if (!exists) {
		r = may_go(P);
		if (r)
			return r;
	} else {
		int d = all_done(P, round, idea_id, m, err);
		if (d < 0)
			return -1;
		if (d)
			return SP_OK;
	}
	if (!(known = sdb_kernels_before(P, round, err)))
		return -1;
	n_known = (int)json_array_size(known);
	known_s = xcalloc((size_t)n_known + 1, sizeof(*known_s));
	for (int i = 0; known_s && i < n_known; i++)
		known_s[i] = json_string_value(json_array_get(known, i));
	to_seeds(seed_rows, seeds, owned, &n_seeds);
	to_idea(idea, &it);
	before = xcalloc((size_t)idx + 1, sizeof(*before));
	before_it = xcalloc((size_t)idx + 1, sizeof(*before_it));
	proposal_list_init(&pl);
	proposer_record_init(&rec);
	if (seed_profiles(P, seed_rows, seeds, n_seeds, ptexts, err) < 0) {
		r = -1;
		goto out;
	}
	if (!known_s || !before || !before_it) {
		r = kf_err(err, "out of memory");
		goto out;
	}
	for (int i = 0; i < idx; i++) {
		to_idea(json_array_get(ideas, (size_t)i), &before_it[i]);
		before[i] = (struct impl_request){ &P->pp, &before_it[i], seeds, n_seeds, mm[i], round,
						   sdb_seed(P, round, "implement", i), known_s,
						   n_known, NULL, 0 };
	}
	struct impl_request req = { &P->pp, &it, seeds, n_seeds, m, round,
				    sdb_seed(P, round, "implement", idx), known_s,
				    n_known, before, idx };
	r = P->S->prop->implement(P->S->prop->self, &req, &pl, &rec, err);
	if (r == PROPOSER_RC_BUDGET && !exists) {
		buf_reset(err);
		r = SP_BUDGET;
		goto out;
	}
	if (r < 0 && exists)
		goto out; /* a recorded call must replay */
	if (r < 0) {
		if (!rec.error.len)
			buf_adds(&rec.error, err->len ? err->s : "proposer failed");
		buf_reset(err);
		pl.n = 0;
	}
	if (!exists && put_call_tx(P, call_id, round, "implement", &rec, failed, err) < 0) {
		r = -1;
		goto out;
	}
	parents = ids_of(seed_rows, "id", 0);
	r = put_proposals(P, round, idea_id, idea_id, &pl, m, parents, call_id, err);
	json_decref(parents);
out:
	for (int i = 0; i < n_seeds; i++) {
		json_decref(owned[i]);
		free(ptexts[i]);
	}
	free(known_s);
	free(before);
	free(before_it);
	json_decref(known);
	proposal_list_release(&pl);
	proposer_record_release(&rec);
	return r;
}

/* Opens a round unless done (1); the budget left for it in *b. 10 + SP_BUDGET
 * or 10 + SP_STOP when it may not start. */
static int open_round(struct sproblem *P, int round, struct sbudget *b, struct buf *err)
{
	int r, st = sdb_round_state(P, round, err);
	if (st < 0)
		return -1;
	if (st == 2)
		return 1;
	r = sdb_budget(P, round, b, err);
	if (r < 0)
		return -1;
	if (st == 0) {
		if (!r)
			r = may_go(P);
		if (r)
			return 10 + r;
		if (sdb_round_open(P, round, err) < 0)
			return -1;
	}
	return 0;
}

/* The implementations of a round's ideas run concurrently, each thread
 * on its own store connection. */
#define SEARCH_IDEA_THREADS 16

struct ijobs {
	struct sproblem *P;
	int round;
	const json_t *ideas, *seeds;
	const int *m;
	int n, next, rc;
	pthread_mutex_t lock;
	struct buf err;
	double t_start;            /* the problem's wall clock */
};

static void *ijob_worker(void *arg)
{
	struct ijobs *J = arg;
	struct sproblem Q = *J->P;
	struct buf err = BUF_INIT;
	int r = 0;

	search_thread_started(J->t_start);
	if (store_open(&Q.st, Q.S->db_path, 0, &err) < 0) {
		r = -1;
		goto out;
	}
	for (;;) {
		int i;
		pthread_mutex_lock(&J->lock);
		i = J->rc < 0 || J->rc == SP_STOP ? J->n : J->next++;
		pthread_mutex_unlock(&J->lock);
		if (i >= J->n)
			break;
		r = implement(&Q, J->round, i, J->ideas, J->m, J->seeds, &err);
		if (r) {
			pthread_mutex_lock(&J->lock);
			if (r < 0 && J->rc >= 0)
				buf_add(&J->err, err.s, err.len);
			if (r < 0 || (J->rc >= 0 && r > J->rc))
				J->rc = r;
			pthread_mutex_unlock(&J->lock);
			if (r < 0)
				break;
		}
	}
	store_close(&Q.st);
out:
	if (r < 0 && !J->err.len) {
		pthread_mutex_lock(&J->lock);
		buf_add(&J->err, err.s, err.len);
		J->rc = -1;
		pthread_mutex_unlock(&J->lock);
	}
	buf_release(&err);
	return NULL;
}

static int implement_all(struct sproblem *P, int round, const json_t *ideas, const int *m, int n,
			 const json_t *seeds, struct buf *err)
{
	struct ijobs J = { P, round, ideas, seeds, m, n, 0, 0, PTHREAD_MUTEX_INITIALIZER, BUF_INIT,
			   search_thread_start() };
	pthread_t th[SEARCH_IDEA_THREADS];
	int nth = 0;

	if (n == 1)
		return implement(P, round, 0, ideas, m, seeds, err);
	while (nth < n && nth < SEARCH_IDEA_THREADS && !pthread_create(&th[nth], NULL, ijob_worker, &J))
		nth++;
	if (!nth)
		ijob_worker(&J);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	if (J.rc < 0)
		kf_err(err, "%s", J.err.s);
	buf_release(&J.err);
	pthread_mutex_destroy(&J.lock);
	return J.rc;
}

/* Ideas, then their implementations, within the budget planned at the
 * round's start: the same plan on every resume. */
static int run_ideas(struct sproblem *P, int round, int k, int m, const json_t *seeds,
		     const struct sbudget *b, struct buf *err)
{
	json_t *ideas = NULL, *pideas = ids_of(seeds, "idea_id", 1);
	int r, n = 0, cut = 0, calls, impls, *mm;

	r = round_ideas(P, round, k < b->ideas ? k : b->ideas, pideas, &ideas, err);
	json_decref(pideas);
	if (r)
		return r;
	mm = xcalloc(json_array_size(ideas) + 1, sizeof(*mm));
	calls = b->calls == INT_MAX ? INT_MAX : b->calls - 1; /* the ideas call */
	impls = b->impls;
	for (size_t i = 0; i < json_array_size(ideas); i++) {
		if ((int)i >= calls || impls <= 0) {
			cut = 1;
			break;
		}
		mm[n] = m < impls ? m : impls;
		if (impls != INT_MAX)
			impls -= mm[n];
		n++;
	}
	r = n ? implement_all(P, round, ideas, mm, n, seeds, err) : SP_OK;
	free(mm);
	json_decref(ideas);
	return r == SP_OK && cut ? SP_BUDGET : r;
}

int sp_branch_round(struct sproblem *P, int round, struct buf *err)
{
	const struct search_config *cfg = P->S->cfg;
	json_t *cands, *prev = json_array(), *bank = json_array(), *seeds = json_array(), *c;
	size_t i;
	struct sbudget b;
	int r = open_round(P, round, &b, err);

	if (r == 1)
		r = SP_OK;
	else if (r >= 10)
		r -= 10;
	else if (r == 0) {
		cands = sdb_candidates(P, err);
		if (!cands) {
			r = -1;
			goto out;
		}
		/* Only earlier rounds: a resumed round already holds some of its own. */
		json_array_foreach(cands, i, c)
			if (sdb_good(P, c) && jget_int(c, "round", round) < round)
				json_array_append(jget_int(c, "round", -1) == round - 1 ? prev : bank, c);
		json_decref(cands);
		sdb_rank(prev);
		sdb_rank(bank);
		for (i = 0; i < json_array_size(prev) && (int)i < cfg->top_k; i++)
			json_array_append(seeds, json_array_get(prev, i));
		for (i = 0; i < json_array_size(bank) && (int)i < cfg->bank; i++)
			json_array_append(seeds, json_array_get(bank, i));
		int holes = *P->holes;
		r = run_ideas(P, round, cfg->k, cfg->m, seeds, &b, err);
		if ((r == SP_OK || r == SP_BUDGET) && *P->holes == holes)
			if (sdb_round_done(P, round, err) < 0)
				r = -1;
	}
out:
	json_decref(prev);
	json_decref(bank);
	json_decref(seeds);
	return r;
}

static int repair(struct sproblem *P, int turn, const json_t *base, struct buf *err)
{
	char call_id[64], part[32];
	const char *idea_id = jget_str(base, "idea_id", NULL);
	int failed = 0, r, exists, n;
	struct seed_kernel seed[1];
	json_t *owned[1], *one = json_array(), *parents = NULL;
	struct proposal_list pl;
	struct proposer_record rec;
	struct buf failure = BUF_INIT;

	json_t *slot = sdb_candidate_at(P, turn, idea_id, 0, err);
	if (slot || err->len) {
		json_decref(slot);
		json_decref(one);
		return slot ? SP_OK : -1;
	}
	sdb_call_id(P, turn, "repair", "", call_id);
	exists = sdb_call_get(P, call_id, &failed, err);
	if (exists < 0) {
		json_decref(one);
		return -1;
	}
	if (failed)
		exists = 0; /* retried */
	if (!exists) {
		r = may_go(P);
		if (r) {
			json_decref(one);
			return r;
		}
	}
	json_array_append(one, (json_t *)base);
	to_seeds(one, seed, owned, &n);
	buf_adds(&failure, jget_str(base, "detail", ""));
	struct repair_request req = { &P->pp, seed, jget_str(base, "status", ""), failure.s, turn,
				      sdb_seed(P, turn, "repair", 0) };
	proposal_list_init(&pl);
	proposer_record_init(&rec);
	r = P->S->prop->repair(P->S->prop->self, &req, proposal_list_add(&pl), &rec, err);
	if (r == PROPOSER_RC_BUDGET && !exists) {
		buf_reset(err);
		r = SP_BUDGET;
		goto out;
	}
	if (r < 0 && exists)
		goto out;
	if (r < 0) {
		if (!rec.error.len)
			buf_adds(&rec.error, err->len ? err->s : "proposer failed");
		buf_reset(err);
		pl.n = 0;
	}
	if (!exists && put_call_tx(P, call_id, turn, "repair", &rec, failed, err) < 0) {
		r = -1;
		goto out;
	}
	parents = ids_of(one, "id", 0);
	snprintf(part, sizeof(part), "fix_%s", P->tag);
	r = put_proposals(P, turn, idea_id, idea_id ? idea_id : part, &pl, 1, parents, call_id, err);
out:
	json_decref(owned[0]);
	json_decref(one);
	json_decref(parents);
	proposal_list_release(&pl);
	proposer_record_release(&rec);
	buf_release(&failure);
	return r;
}

int sp_revise_turn(struct sproblem *P, int turn, struct buf *err)
{
	json_t *cands = NULL, *base = NULL, *best = json_array(), *seeds = json_array(), *c;
	size_t i;
	struct sbudget b;
	int holes, r = open_round(P, turn, &b, err);

	if (r == 1) {
		r = SP_OK;
		goto out;
	}
	if (r >= 10) {
		r -= 10;
		goto out;
	}
	if (r < 0)
		goto out;
	cands = sdb_candidates(P, err);
	if (!cands) {
		r = -1;
		goto out;
	}
	json_array_foreach(cands, i, c) {
		if (jget_int(c, "round", 0) >= turn)
			continue;
		base = c;
		if (sdb_good(P, c))
			json_array_append(best, c);
	}
	sdb_rank(best);
	holes = *P->holes;
	if (base && !sdb_good(P, base)) {
		r = repair(P, turn, base, err);
	} else {
		if (base)
			json_array_append(seeds, base);
		if (json_array_size(best) && json_array_get(best, 0) != base)
			json_array_append(seeds, json_array_get(best, 0));
		r = run_ideas(P, turn, 1, 1, seeds, &b, err);
	}
	/* A turn with a failed call stays open: the next one would build on nothing. */
	if (*P->holes != holes)
		r = r < 0 ? r : kf_err(err, "a proposer call failed; run kforge search again to retry it");
	else if (r == SP_OK || r == SP_BUDGET)
		if (sdb_round_done(P, turn, err) < 0)
			r = -1;
out:
	json_decref(cands);
	json_decref(best);
	json_decref(seeds);
	return r;
}
