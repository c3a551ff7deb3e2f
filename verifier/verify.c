#include "verify.h"
#include "core/json.h"
#include "core/log.h"
#include "core/sha256.h"
#include "store/store_eval.h"
#include "store/store_verify.h"
#include "core/version.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

void verify_report_init(struct verify_report *r)
{
	memset(r, 0, sizeof(*r));
}

void verify_report_release(struct verify_report *r)
{
	for (int i = 0; i < r->n; i++) {
		json_decref(r->items[i].flags);
		json_decref(r->items[i].no_influence);
	}
	free(r->items);
	memset(r, 0, sizeof(*r));
}

static struct verify_item *report_add(struct verify_report *r)
{
	if (r->n == r->alloc) {
		r->alloc = r->alloc ? 2 * r->alloc : 16;
		r->items = xrealloc(r->items, (size_t)r->alloc * sizeof(*r->items));
	}
	memset(&r->items[r->n], 0, sizeof(r->items[0]));
	return &r->items[r->n++];
}

static int wanted(const struct verify_config *cfg, const char *pid)
{
	if (!cfg->problems)
		return 1;
	for (int i = 0; cfg->problems[i]; i++)
		if (!strcmp(cfg->problems[i], pid))
			return 1;
	return 0;
}

json_t *verify_select(struct store *s, const struct verify_config *cfg, const char *gpu_name,
		      struct buf *err)
{
	json_t *all = store_verify_candidates(s, gpu_name,
					      cfg->collect_protocol ? cfg->collect_protocol : "collect-%",
					      cfg->top_k, cfg->per_category, err);
	json_t *out;
	size_t i;
	json_t *r;

	if (!all)
		return NULL;
	out = json_array();
	json_array_foreach(all, i, r)
		if (wanted(cfg, jget_str(r, "problem_id", "")))
			json_array_append(out, r);
	json_decref(all);
	return out;
}

/* Review flags: results too good to trust without a look. A flagged kernel
 * is no verified result (store/store_verify.h KF_FLAGGED_VERDICT): left out
 * of best kernels, fast_p and geomeans until verified again without one.
 * The floor is the speed of light where the GPU's peaks are known (the
 * memory's clock and bus width, the precision path's compute peak:
 * engine_sol_floor_ms): a time under it is physically impossible. A
 * measured copy is no floor: on an H200 (copy 3951 GB/s) an honest matrix-
 * vector product read its 8 GiB at 4605 GB/s. Without the peaks, the
 * measured roofline with a margin. */
static json_t *review_flags(const struct eval_outcome *o)
{
	json_t *f = json_array();
	double floor = o->sol_ms > 0 ? o->sol_ms * VERIFY_SOL_MARGIN : o->roofline_ms * VERIFY_ROOFLINE_MARGIN;

	if (floor > 0 && o->time_mean_ms > 0 && o->time_mean_ms < floor)
		json_array_append_new(f, json_string("faster_than_roofline_floor"));
	return f;
}

/* Notes: worth a look, no verdict (a fused kernel can beat eager 10x). */
static json_t *review_notes(const struct eval_outcome *o)
{
	json_t *n = json_array();
	if (o->speedup_eager > VERIFY_REVIEW_SPEEDUP)
		json_array_append_new(n, json_string("speedup_over_10x_eager"));
	return n;
}

/* The eval's env.sensitivity.no_influence (docs/engine.md), as names. */
static json_t *no_influence(struct store *s, const char *eval_id)
{
	struct buf err = BUF_INIT;
	json_t *env = store_eval_env(s, eval_id, &err), *a = json_array(), *x;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(env, "sensitivity"), "no_influence"), i, x)
		json_array_append_new(a, json_string(jget_str(x, "tensor", "?")));
	json_decref(env);
	buf_release(&err);
	return a;
}

static int record(struct store *s, const struct eval_outcome *o, const char *problem_id,
		  const char *verdict, const char *failed_check, json_t *flags, json_t *san,
		  struct buf *err)
{
	char id[65], now[32];
	struct buf key = BUF_INIT;
	json_t *env, *row;
	int ret;

	buf_addf(&key, "%s|%s", o->eval_id, VERIFY_PROTOCOL);
	sha256_hex(key.s, key.len, id);
	buf_release(&key);
	store_now(now);
	env = store_eval_env(s, o->eval_id, err);
	if (!env)
		env = json_object();
	json_object_set_new(env, "gpu_name", json_string(o->gpu_name));
	{
		/* The GPU as the engine saw it: memory, SMs, driver, CUDA version. */
		json_t *g = NULL;
		struct buf qerr = BUF_INIT;
		if (store_gpu_details(s, o->gpu_name, &g, &qerr) == 0 && g)
			json_object_update(env, g);
		else if (qerr.len)
			log_warn("verify: the GPU's details are left out of the record: %s", qerr.s);
		json_decref(g);
		buf_release(&qerr);
		json_object_set_new(env, "protocol", json_string(VERIFY_PROTOCOL));
		json_object_set_new(env, "review_notes", review_notes(o));
		json_object_set_new(env, "kforge_version", json_string(kforge_version()));
	}
	row = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s?,s:O,s:O?,s:o,s:s,s:s}", "id", id,
			"eval_id", o->eval_id, "kernel_hash", o->kernel_hash, "problem_id", problem_id,
			"gpu_name", o->gpu_name, "protocol", VERIFY_PROTOCOL, "verdict", verdict,
			"failed_check", failed_check && *failed_check ? failed_check : NULL,
			"review_flags", flags, "sanitizer", san, "env", env, "kforge_version",
			kforge_version(), "created_at", now);
	if (store_begin(s, err) < 0) {
		json_decref(row);
		return -1;
	}
	ret = store_put_verification(s, row, err);
	json_decref(row);
	if (ret < 0) {
		store_rollback(s);
		return -1;
	}
	return store_commit(s, err);
}

/* The sanitizer result an earlier verification of this evaluation
 * recorded, when the tools ran (not "skipped"); NULL otherwise. */
static json_t *earlier_sanitizer(struct store *s, const struct eval_outcome *o)
{
	char id[65];
	struct buf key = BUF_INIT, qerr = BUF_INIT, text = BUF_INIT;
	json_t *san = NULL;

	buf_addf(&key, "%s|%s", o->eval_id, VERIFY_PROTOCOL);
	sha256_hex(key.s, key.len, id);
	if (store_verification_sanitizer(s, id, &text, &qerr) == 1)
		san = json_loads(text.s, 0, NULL);
	else if (qerr.len)
		log_warn("verify: an earlier sanitizer result could not be read: %s", qerr.s);
	{
		int ran = 0;
		for (int t = 0; san && t < 2; t++)
			ran += strcmp(jget_str(json_object_get(san, t ? "racecheck" : "memcheck"),
					       "status", "skipped"), "skipped") != 0;
		if (!ran) {
			json_decref(san);
			san = NULL;
		}
	}
	buf_release(&key);
	buf_release(&qerr);
	buf_release(&text);
	return san;
}

/* One problem's evaluated kernels, held until its sanitizer run. */
struct pending {
	struct eval_outcome o;
	const char *src;
};

/* Sanitizes the problem's best correct kernel (the selection is ordered by
 * time), with the engine's GPU memory released first so the sanitized
 * child has the GPU to itself, then reports and records every kernel. */
static int flush_problem(const struct verify_config *cfg, const struct verify_backend *be,
			 struct store *s, const char *pid, struct pending *pd, int n,
			 struct verify_report *rep, struct buf *err)
{
	json_t *san = NULL;
	int best = -1;

	for (int i = 0; i < n && best < 0; i++)
		if (!strcmp(pd[i].o.status, "correct"))
			best = i;
	if (best >= 0 && cfg->sanitizer && be->sanitize) {
		if (be->release)
			be->release(be->ctx);
		san = json_object();
		if (be->sanitize(be->ctx, pid, pd[best].src, san, err) < 0) {
			json_decref(san);
			return -1;
		}
	} else if (best >= 0 && (san = earlier_sanitizer(s, &pd[best].o)) != NULL) {
		/* Kept: a pass without the sanitizer does not erase an earlier result. */
	} else if (best >= 0) {
		/* The record says why there is no sanitizer result. */
		san = json_object();
		for (int t = 0; t < 2; t++)
			json_object_set_new(san, t ? "racecheck" : "memcheck",
					    json_pack("{s:s,s:s}", "status", "skipped", "detail",
						      be->sanitize ? "not run (--no-sanitizer)" :
						      "this verifier has no sanitizer"));
	}
	for (int i = 0; i < n; i++) {
		const struct eval_outcome *o = &pd[i].o;
		struct verify_item *it;
		const char *verdict;
		char failed[64] = "";

		if (strcmp(o->status, "correct")) {
			snprintf(failed, sizeof(failed), "%s", o->failed_check[0] ? o->failed_check : o->status);
		} else if (i == best && san) {
			for (int t = 0; t < 2; t++) {
				const char *tool = t ? "racecheck" : "memcheck";
				json_t *res = json_object_get(san, tool);
				if (!strcmp(jget_str(res, "status", "skipped"), "errors")) {
					snprintf(failed, sizeof(failed), "sanitizer_%s", tool);
					break;
				}
			}
		}
		verdict = failed[0] ? "failed" : "verified";
		it = report_add(rep);
		snprintf(it->problem_id, sizeof(it->problem_id), "%s", pid);
		snprintf(it->kernel_hash, sizeof(it->kernel_hash), "%s", o->kernel_hash);
		snprintf(it->verdict, sizeof(it->verdict), "%s", verdict);
		snprintf(it->failed_check, sizeof(it->failed_check), "%s", failed);
		it->speedup_eager = o->speedup_eager;
		it->flags = review_flags(o);
		it->no_influence = no_influence(s, o->eval_id);
		if (failed[0])
			rep->failed++;
		else
			rep->verified++;
		if (!failed[0] && json_array_size(it->flags))
			rep->flagged++;
		log_info("verify %s %.12s: %s%s%s", pid, o->kernel_hash, verdict, failed[0] ? " (" : "",
			 failed[0] ? failed : "");
		if (record(s, o, pid, verdict, failed, it->flags, i == best ? san : NULL, err) < 0) {
			json_decref(san);
			return -1;
		}
	}
	json_decref(san);
	return 0;
}

int verify_run(const struct verify_config *cfg, const struct verify_backend *be,
	       struct verify_report *rep, struct buf *err)
{
	struct store s;
	json_t *sel = NULL;
	const char *gpu = be->gpu_name(be->ctx);
	char cur[128] = "";
	struct pending *pd = NULL;
	int np = 0;
	size_t i;
	json_t *r;
	int ret = -1;

	if (store_open(&s, cfg->db_path, 0, err) < 0)
		return -1;
	sel = verify_select(&s, cfg, gpu, err);
	if (!sel)
		goto out;
	log_info("verify: %zu kernel(s) to verify on %s under %s", json_array_size(sel), gpu,
		 VERIFY_PROTOCOL);
	pd = calloc(json_array_size(sel) + 1, sizeof(*pd));
	if (!pd) {
		kf_err(err, "out of memory");
		goto out;
	}
	json_array_foreach(sel, i, r) {
		const char *pid = jget_str(r, "problem_id", "");

		if (np && strcmp(cur, pid)) {
			if (flush_problem(cfg, be, &s, cur, pd, np, rep, err) < 0)
				goto out;
			while (np)
				eval_outcome_release(&pd[--np].o);
		}
		snprintf(cur, sizeof(cur), "%s", pid);
		eval_outcome_init(&pd[np].o);
		pd[np].src = jget_str(r, "source", "");
		if (be->prefetch && i + 1 < json_array_size(sel))
			be->prefetch(be->ctx, jget_str(json_array_get(sel, i + 1), "source", ""));
		if (be->eval(be->ctx, pid, pd[np].src, &pd[np].o, err) < 0) {
			eval_outcome_release(&pd[np].o);
			goto out;
		}
		np++;
	}
	if (np && flush_problem(cfg, be, &s, cur, pd, np, rep, err) < 0)
		goto out;
	ret = 0;
out:
	while (np)
		eval_outcome_release(&pd[--np].o);
	free(pd);
	json_decref(sel);
	store_close(&s);
	return ret;
}
