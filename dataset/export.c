/* The data/ JSONL files: the store's tables and the per-problem trajectories. */
#include "ds_int.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "store/store_export.h"
#include "core/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const struct ds_table ds_tables[] = {
	{ "data/problems.jsonl", "problems", "KernelBench problems: spec, PyTorch reference, FLOPs and bytes" },
	{ "data/runs.jsonl", "runs", "searches: strategy, proposer, model, budgets and protocol" },
	{ "data/rounds.jsonl", "rounds", "search rounds per run and problem" },
	{ "data/llm_calls.jsonl", "llm_calls", "every LLM request and response with tokens and latency" },
	{ "data/ideas.jsonl", "ideas", "optimization ideas in natural language, with categories" },
	{ "data/kernels.jsonl", "kernels", "content-addressed candidate files (source with launch block)" },
	{ "data/candidates.jsonl", "candidates", "kernels as the search produced them: idea, parents, status" },
	{ "data/compiles.jsonl", "compiles", "NVRTC compilations: log, registers, shared memory, spills" },
	{ "data/evaluations.jsonl", "evals", "evaluations per GPU and protocol, with per-trial values and speedups" },
	{ "data/verifications.jsonl", "verifications", "verdicts of the stricter re-verification per GPU" },
	{ "data/baselines.jsonl", "baselines", "PyTorch eager and torch.compile times per GPU" },
	{ "data/gpus.jsonl", "gpus", "GPU models with measured ceilings" },
	{ "data/profiles.jsonl", "profiles", "hardware-counter profiles of evaluations: limiter, DRAM, L2, SM, tensor, occupancy, per kernel" },
	{ "data/search_sessions.jsonl", "search_sessions", "kforge search invocations: GPU, wall time, problems and levels, evaluations and candidates made" },
	{ NULL, NULL, NULL },
};

int ds_json_column(const char *table, const char *column)
{
	static const char *const cols[] = {
		"problems.spec", "runs.config", "ideas.parent_ids", "candidates.parent_ids",
		"candidates.params", "evals.protocol_params", "evals.env", "verifications.review_flags",
		"verifications.env", "llm_calls.attempts", "compiles.options", "search_sessions.problems",
		"search_sessions.levels", NULL,
	};
	size_t tl = strlen(table);
	for (int i = 0; cols[i]; i++)
		if (!strncmp(cols[i], table, tl) && cols[i][tl] == '.' && !strcmp(cols[i] + tl + 1, column))
			return 1;
	return 0;
}

void ds_files_add(struct ds_files *fs, const char *path, const char *sha, int64_t size)
{
	if (fs->n == fs->alloc) {
		fs->alloc = fs->alloc ? fs->alloc * 2 : 32;
		fs->v = xrealloc(fs->v, fs->alloc * sizeof(*fs->v));
	}
	fs->v[fs->n].path = xstrdup(path);
	snprintf(fs->v[fs->n].sha, sizeof(fs->v[fs->n].sha), "%s", sha);
	fs->v[fs->n].size = size;
	fs->n++;
}

void ds_files_release(struct ds_files *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->v[i].path);
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}

int jsonl_open(struct jsonl *w, struct ds_stage *st, const char *rel, struct buf *err)
{
	memset(w, 0, sizeof(*w));
	buf_init(&w->line);
	buf_init(&w->rel);
	buf_init(&w->abspath);
	buf_adds(&w->rel, rel);
	path_join(&w->abspath, st->dir, rel);
	w->f = fopen(w->abspath.s, "wbx");
	if (!w->f) {
		kf_err(err, "cannot create %s: %s", w->abspath.s, strerror(errno));
		buf_release(&w->line);
		buf_release(&w->rel);
		buf_release(&w->abspath);
		return -1;
	}
	setvbuf(w->f, NULL, _IOFBF, 1 << 20);
	sha256_init(&w->h);
	return 0;
}

int jsonl_put_text(struct jsonl *w, const char *s, size_t n, struct buf *err)
{
	if (fwrite(s, 1, n, w->f) != n || fputc('\n', w->f) == EOF)
		return kf_err(err, "writing %s: %s", w->abspath.s, strerror(errno));
	sha256_update(&w->h, s, n);
	sha256_update(&w->h, "\n", 1);
	w->bytes += (int64_t)n + 1;
	w->lines++;
	return 0;
}

int jsonl_put(struct jsonl *w, const json_t *v, struct buf *err)
{
	ds_type_row(&w->type, v);
	buf_reset(&w->line);
	json_add_canonical(&w->line, v);
	return jsonl_put_text(w, w->line.s, w->line.len, err);
}

void jsonl_abort(struct jsonl *w)
{
	if (w->f)
		fclose(w->f);
	w->f = NULL;
	sha256_release(&w->h);
	buf_release(&w->line);
	buf_release(&w->rel);
	buf_release(&w->abspath);
	json_decref(w->type);
	w->type = NULL;
}

int jsonl_close(struct jsonl *w, struct ds_stage *st, struct buf *err)
{
	char hex[65];
	int bad = ferror(w->f);

	if (fclose(w->f) != 0 || bad) {
		w->f = NULL;
		kf_err(err, "writing %s failed", w->abspath.s);
		jsonl_abort(w);
		return -1;
	}
	w->f = NULL;
	sha256_final_hex(&w->h, hex);
	ds_files_add(&st->files, w->rel.s, hex, w->bytes);
	json_object_set_new(st->counts, w->rel.s, json_integer(w->lines));
	if (w->type && st->types)
		json_object_set(st->types, w->rel.s, w->type);
	jsonl_abort(w);
	return 0;
}

/* Staged files are temporary: no fsync (it would also force the kernel to
 * write out the big staged store first). The tarball is synced instead. */
int ds_stage_file(struct ds_stage *st, const char *rel, const void *p, size_t n, struct buf *err)
{
	struct buf path = BUF_INIT;
	char hex[65];
	FILE *f;
	int ret = -1;

	path_join(&path, st->dir, rel);
	f = fopen(path.s, "wbx");
	if (!f) {
		kf_err(err, "cannot create %s: %s", path.s, strerror(errno));
		goto out;
	}
	if ((n && fwrite(p, 1, n, f) != n) | (fclose(f) != 0)) {
		kf_err(err, "writing %s failed", path.s);
		goto out;
	}
	sha256_hex(p, n, hex);
	ds_files_add(&st->files, rel, hex, (int64_t)n);
	ret = 0;
out:
	buf_release(&path);
	return ret;
}

struct table_ctx {
	struct jsonl *w;
	const char *table;
	struct buf *err;
	json_t *reals;      /* paths with a real in some row (problems) */
};

/* The trial arrays of evaluations come as JSON text: a placeholder goes
 * through the sorted dump and the text replaces it. A key followed by a
 * string cannot occur inside a dumped string (its quotes are escaped). */
static const char *const spliced[] = { "time_trials_ms", "cupti_trials_ms", NULL };

static int put_spliced(struct table_ctx *c, json_t *row)
{
	json_t *texts[2] = { NULL, NULL };
	struct buf *line = &c->w->line, out = BUF_INIT;
	int ret;

	for (int i = 0; spliced[i]; i++) {
		const char *t;
		texts[i] = json_incref(json_object_get(row, spliced[i]));
		/* for the type: a list of reals, or of nothing */
		t = json_string_value(texts[i]);
		json_object_set_new(row, spliced[i], t && strpbrk(t, "0123456789") ?
				    json_pack("[f]", 0.0) : json_array());
	}
	ds_type_row(&c->w->type, row);
	for (int i = 0; spliced[i]; i++)
		json_object_set_new(row, spliced[i], json_string("\x01"));
	buf_reset(line);
	json_add_canonical(line, row);
	for (const char *p = line->s; *p;) {
		const char *hit = NULL;
		int which = -1;
		for (int i = 0; spliced[i]; i++) {
			char pat[64];
			const char *h;
			snprintf(pat, sizeof(pat), "\"%s\":\"\\u0001\"", spliced[i]);
			h = strstr(p, pat);
			if (h && (!hit || h < hit)) {
				hit = h;
				which = i;
			}
		}
		if (!hit) {
			buf_adds(&out, p);
			break;
		}
		buf_add(&out, p, (size_t)(hit - p));
		buf_addf(&out, "\"%s\":", spliced[which]);
		if (json_is_string(texts[which]))
			buf_add(&out, json_string_value(texts[which]), json_string_length(texts[which]));
		else
			buf_adds(&out, "[]");
		p = hit + strlen(spliced[which]) + 11;   /* "KEY":"\u0001" */
	}
	for (int i = 0; spliced[i]; i++)
		json_decref(texts[i]);
	ret = jsonl_put_text(c->w, out.s, out.len, c->err);
	buf_release(&out);
	return ret;
}

/* JSON-text columns become JSON values (text that does not parse stays). */
static void parse_columns(const char *table, json_t *row)
{
	const char *k;
	json_t *v;

	json_object_foreach(row, k, v) {
		if (json_is_string(v) && ds_json_column(table, k)) {
			json_t *j = json_loadb(json_string_value(v), json_string_length(v),
					       JSON_DECODE_ANY, NULL);
			if (j)
				json_object_set_new_nocheck(row, k, j);
		}
	}
}

static int reals_row(void *p, json_t *row)
{
	struct table_ctx *c = p;
	parse_columns(c->table, row);
	ds_row_shape(c->table, row, NULL);
	ds_reals_collect(row, c->reals);
	return 0;
}

static int table_row(void *p, json_t *row)
{
	struct table_ctx *c = p;

	parse_columns(c->table, row);
	ds_row_shape(c->table, row, c->reals);
	if (!strcmp(c->table, "evals"))
		return put_spliced(c, row) < 0 ? -1 : 0;
	return jsonl_put(c->w, row, c->err) < 0 ? -1 : 0;
}

int ds_write_table(struct ds_stage *st, const char *table, struct buf *err)
{
	for (int i = 0; ds_tables[i].file; i++) {
		struct jsonl w;
		struct table_ctx c = { &w, ds_tables[i].table, err, NULL };
		int r;
		if (strcmp(ds_tables[i].table, table))
			continue;
		/* Problem specs are free-form JSON: a first pass finds where
		 * integers must be written as reals (small: one row a problem). */
		if (!strcmp(table, "problems")) {
			c.reals = json_object();
			if (store_export_rows(st->s, table, reals_row, &c, err) != 0) {
				json_decref(c.reals);
				return -1;
			}
		}
		if (jsonl_open(&w, st, ds_tables[i].file, err) < 0) {
			json_decref(c.reals);
			return -1;
		}
		r = store_export_rows(st->s, ds_tables[i].table, table_row, &c, err);
		json_decref(c.reals);
		if (r != 0) {
			jsonl_abort(&w);
			return -1;
		}
		return jsonl_close(&w, st, err);
	}
	return kf_err(err, "export: no table %s", table);
}

int ds_write_tables(struct ds_stage *st, const char *except, struct buf *err)
{
	for (int i = 0; ds_tables[i].file; i++)
		if ((!except || strcmp(ds_tables[i].table, except)) &&
		    ds_write_table(st, ds_tables[i].table, err) < 0)
			return -1;
	return 0;
}

/* ---- trajectories: one line per (run, problem) ------------------------- */

struct traj_ctx {
	struct jsonl *w;
	struct buf *err;
	json_t *rows;       /* candidates of the current (run, problem) */
};

static json_t *find_cand(json_t *rows, const char *id)
{
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r)
		if (!strcmp(jget_str(r, "candidate_id", ""), id))
			return r;
	return NULL;
}

static json_t *step_of(const json_t *r)
{
	json_t *o = json_object();
	static const char *const keys[] = { "candidate_id", "round", "idea_id", "kernel_hash",
					    "status", "time_mean_ms", "speedup_eager", NULL };
	for (int i = 0; keys[i]; i++) {
		json_t *v = json_object_get(r, keys[i]);
		json_object_set(o, keys[i], v ? v : json_null());
	}
	return o;
}

static int traj_flush(struct traj_ctx *c)
{
	json_t *rows = c->rows, *out, *rounds, *best = NULL, *lineage, *r;
	size_t i, n = json_array_size(rows);
	int ret;

	if (!n)
		return 0;
	out = json_object();
	rounds = json_array();
	r = json_array_get(rows, 0);
	json_object_set(out, "run_id", json_object_get(r, "run_id"));
	json_object_set(out, "problem_id", json_object_get(r, "problem_id"));
	json_object_set(out, "gpu_name", json_object_get(r, "gpu_name"));
	for (i = 0; i < n;) {
		int64_t round = jget_int(json_array_get(rows, i), "round", 0);
		long long cands = 0, correct = 0;
		double rbest = -1;
		json_t *ro = json_object();
		for (; i < n && jget_int((r = json_array_get(rows, i)), "round", 0) == round; i++) {
			double t = jget_num(r, "time_mean_ms", -1);
			cands++;
			if (t > 0) {
				correct++;
				if (rbest < 0 || t < rbest)
					rbest = t;
				if (!best || t < jget_num(best, "time_mean_ms", 0))
					best = r;
			}
		}
		json_object_set_new(ro, "round", json_integer(round));
		json_object_set_new(ro, "candidates", json_integer(cands));
		json_object_set_new(ro, "correct", json_integer(correct));
		json_object_set_new(ro, "round_best_time_ms", rbest > 0 ? json_real(rbest) : json_null());
		json_object_set_new(ro, "best_so_far_time_ms",
				    best ? json_real(jget_num(best, "time_mean_ms", 0)) : json_null());
		json_object_set(ro, "best_so_far_speedup_eager",
				best ? json_object_get(best, "speedup_eager") : json_null());
		json_object_set(ro, "best_so_far_candidate_id",
				best ? json_object_get(best, "candidate_id") : json_null());
		json_array_append_new(rounds, ro);
	}
	json_object_set_new(out, "rounds", rounds);
	json_object_set_new(out, "best", best ? step_of(best) : json_null());
	/* Lineage: the first parent, back to a root; cycles and depth bounded. */
	lineage = json_array();
	for (r = best; r && json_array_size(lineage) < 1000;) {
		json_t *pids = json_loads(jget_str(r, "parent_ids", "[]"), 0, NULL);
		const char *p = json_string_value(json_array_get(pids, 0));
		json_array_insert_new(lineage, 0, step_of(r));
		r = p ? find_cand(rows, p) : NULL;
		json_decref(pids);
	}
	json_object_set_new(out, "lineage", lineage);
	ds_row_shape("trajectories", out, NULL);
	ret = jsonl_put(c->w, out, c->err);
	json_decref(out);
	json_array_clear(rows);
	return ret;
}

static int traj_row(void *p, json_t *row)
{
	struct traj_ctx *c = p;
	json_t *first = json_array_get(c->rows, 0);
	if (first && (strcmp(jget_str(first, "run_id", ""), jget_str(row, "run_id", "")) ||
		      strcmp(jget_str(first, "problem_id", ""), jget_str(row, "problem_id", ""))))
		if (traj_flush(c) < 0)
			return -1;
	json_array_append(c->rows, row);
	return 0;
}

int ds_write_trajectories(struct ds_stage *st, struct buf *err)
{
	struct jsonl w;
	struct traj_ctx c = { &w, err, json_array() };
	int ret = -1;

	if (jsonl_open(&w, st, "data/trajectories.jsonl", err) < 0)
		goto out;
	if (store_export_trajectory(st->s, traj_row, &c, err) != 0 || traj_flush(&c) < 0) {
		jsonl_abort(&w);
		goto out;
	}
	ret = jsonl_close(&w, st, err);
out:
	json_decref(c.rows);
	return ret;
}
