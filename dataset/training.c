/* Training exports: sft.jsonl (chat messages for correct kernels) and
 * pairs.jsonl (preference pairs in TRL's conversational format). */
#include "ds_int.h"
#include "core/json.h"
#include "store/store_export.h"
#include "store/store_problems.h"
#include "core/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define PAIR_MIN_RATIO 1.05   /* a faster/slower pair needs a 5% gap */

static const char system_prompt[] =
	"You are an expert CUDA engineer. You write a CUDA kernel that replaces a PyTorch operator. "
	"Reply with one ```cuda block holding the whole candidate file: extern \"C\" __global__ "
	"kernels, then a /*@launch ... @*/ block with the launches in CUDA syntax over the "
	"problem's named sizes, inputs and outputs.";

static json_t *msg(const char *role, const char *content)
{
	return json_pack("{s:s, s:s}", "role", role, "content", content);
}

/* The prompt synthesized from the problem (kernels the built-in proposer
 * wrote have no LLM request). Built once per problem; callers get a new
 * reference to the shared array and must not modify it. */
static json_t *problem_prompt(struct ds_stage *st, const char *pid)
{
	json_t *p = json_object_get(st->problems, pid), *m;

	if ((m = json_object_get(p, "_prompt")) != NULL)
		return json_incref(m);
	m = json_array();
	struct buf u = BUF_INIT;
	json_t *spec = json_loads(jget_str(p, "spec", "{}"), 0, NULL);

	buf_addf(&u, "Write a fast CUDA kernel for KernelBench problem %s (%s).\n\n", pid,
		 jget_str(p, "name", pid));
	buf_addf(&u, "The PyTorch reference:\n```python\n%s```\n\n", jget_str(p, "torch_text", ""));
	if (spec) {
		buf_adds(&u, "Sizes, inputs and outputs (JSON):\n```json\n");
		json_t *sub = json_object();
		json_object_set(sub, "sizes", json_object_get(spec, "sizes"));
		json_object_set(sub, "scalars", json_object_get(spec, "scalars"));
		json_object_set(sub, "inputs", json_object_get(spec, "inputs"));
		json_object_set(sub, "outputs", json_object_get(spec, "outputs"));
		json_add_canonical_pretty(&u, sub);
		json_decref(sub);
		buf_adds(&u, "\n```\n");
	}
	json_array_append_new(m, msg("system", system_prompt));
	json_array_append_new(m, msg("user", u.s));
	json_decref(spec);
	buf_release(&u);
	if (p)
		json_object_set(p, "_prompt", m);
	return m;
}

/* The messages of the recorded LLM request, when it has a usable list. */
static json_t *request_prompt(const char *req)
{
	json_t *r, *m, *out, *x;
	size_t i;

	if (!req)
		return NULL;
	r = json_loads(req, 0, NULL);
	m = json_object_get(r, "messages");
	if (!json_is_array(m) || !json_array_size(m)) {
		json_decref(r);
		return NULL;
	}
	out = json_array();
	json_array_foreach(m, i, x) {
		const char *role = jget_str(x, "role", NULL), *content = jget_str(x, "content", NULL);
		if (!role || !content) {
			json_decref(out);
			out = NULL;
			break;
		}
		json_array_append_new(out, msg(role, content));
	}
	json_decref(r);
	return out;
}

static json_t *answer(const char *source)
{
	struct buf b = BUF_INIT;
	json_t *m = json_array();
	size_t n = strlen(source);
	buf_addf(&b, "```cuda\n%s%s```", source, n && source[n - 1] == '\n' ? "" : "\n");
	json_array_append_new(m, msg("assistant", b.s));
	buf_release(&b);
	return m;
}

/* ---- sft.jsonl: one line per (problem, kernel) ------------------------- */

struct sft_ctx {
	struct ds_stage *st;
	struct jsonl *w;
	struct buf *err;
	json_t *group;          /* kernel_hash -> record, for the current problem */
	char problem[512];
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int sft_flush(struct sft_ctx *c)
{
	size_t n = json_object_size(c->group), i = 0;
	const char **keys = xcalloc(n ? n : 1, sizeof(*keys));
	const char *k;
	json_t *v;
	int ret = 0;

	json_object_foreach(c->group, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (i = 0; i < n && !ret; i++)
		ret = jsonl_put(c->w, json_object_get(c->group, keys[i]), c->err);
	free(keys);
	json_object_clear(c->group);
	return ret;
}

static int sft_row(void *p, json_t *row)
{
	struct sft_ctx *c = p;
	const char *pid = jget_str(row, "problem_id", ""), *kh = jget_str(row, "kernel_hash", "");
	const char *gpu = jget_str(row, "gpu_name", "");
	json_t *rec, *g, *se = json_object_get(row, "speedup_eager");

	if (strcmp(pid, c->problem)) {
		if (sft_flush(c) < 0)
			return -1;
		snprintf(c->problem, sizeof(c->problem), "%s", pid);
	}
	rec = json_object_get(c->group, kh);
	if (!rec) {
		struct buf path = BUF_INIT;
		json_t *m = request_prompt(jget_str(row, "request", NULL));
		const char *src = m ? "llm_request" : "problem";
		json_t *a = answer(jget_str(row, "source", ""));
		if (!m) {
			json_t *shared = problem_prompt(c->st, pid);
			m = json_copy(shared);   /* shallow: the messages stay shared */
			json_decref(shared);
		}
		json_array_extend(m, a);
		json_decref(a);
		rec = json_object();
		buf_addf(&path, "kernels/%s/%s.cu", pid, kh);
		json_object_set_new(rec, "id", json_sprintf("%s/%s", pid, kh));
		json_object_set_new(rec, "problem_id", json_string(pid));
		json_object_set_new(rec, "kernel_hash", json_string(kh));
		json_object_set_new(rec, "kernel_path", json_string(path.s));
		json_object_set_new(rec, "messages", m);
		json_object_set_new(rec, "prompt_source", json_string(src));
		json_object_set_new(rec, "per_gpu", json_object());
		json_object_set_new(rec, "verified_gpus",
				    json_loads(jget_str(row, "verified_gpus", "[]"), 0, NULL));
		if (!json_is_array(json_object_get(rec, "verified_gpus")))
			json_object_set_new(rec, "verified_gpus", json_array());
		json_object_set_new(rec, "gpu_name", json_null());
		json_object_set_new(rec, "speedup_eager", json_null());
		json_object_set_new(rec, "speedup_compile", json_null());
		json_object_set_new(rec, "time_mean_ms", json_null());
		json_object_set_new(c->group, kh, rec);
		buf_release(&path);
	}
	g = json_object();
	json_object_set(g, "eval_id", json_object_get(row, "eval_id"));
	json_object_set(g, "time_mean_ms", json_object_get(row, "time_mean_ms"));
	json_object_set(g, "time_median_ms", json_object_get(row, "time_median_ms"));
	json_object_set(g, "speedup_eager", se);
	json_object_set(g, "speedup_compile", json_object_get(row, "speedup_compile"));
	json_object_set_new(g, "verified", json_boolean(jget_int(row, "verified", 0)));
	json_object_set_new(json_object_get(rec, "per_gpu"), gpu, g);
	/* The headline figures are the worst case over GPUs (rows come by GPU
	 * name, so ties keep the first). */
	if (json_is_number(se) && (!json_is_number(json_object_get(rec, "speedup_eager")) ||
				   json_number_value(se) < jget_num(rec, "speedup_eager", 0))) {
		json_object_set_new(rec, "gpu_name", json_string(gpu));
		json_object_set(rec, "speedup_eager", se);
		json_object_set(rec, "speedup_compile", json_object_get(row, "speedup_compile"));
		json_object_set(rec, "time_mean_ms", json_object_get(row, "time_mean_ms"));
	} else if (json_is_null(json_object_get(rec, "gpu_name"))) {
		json_object_set_new(rec, "gpu_name", json_string(gpu));
		json_object_set(rec, "time_mean_ms", json_object_get(row, "time_mean_ms"));
	}
	return 0;
}

/* ---- pairs.jsonl: per (problem, GPU) ----------------------------------- */

static json_t *pair(struct ds_stage *st, const char *kind, long long idx, const json_t *a,
		    const json_t *b)
{
	const char *pid = jget_str(a, "problem_id", ""), *gpu = jget_str(a, "gpu_name", "");
	json_t *o = json_object();
	json_object_set_new(o, "id", json_sprintf("%s/%s/%s/%lld", pid, gpu, kind, idx));
	json_object_set_new(o, "problem_id", json_string(pid));
	json_object_set_new(o, "gpu_name", json_string(gpu));
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "prompt", problem_prompt(st, pid));
	json_object_set_new(o, "chosen", answer(jget_str(a, "source", "")));
	json_object_set_new(o, "rejected", answer(jget_str(b, "source", "")));
	json_object_set(o, "chosen_kernel_hash", json_object_get(a, "kernel_hash"));
	json_object_set(o, "rejected_kernel_hash", json_object_get(b, "kernel_hash"));
	json_object_set(o, "chosen_time_mean_ms", json_object_get(a, "time_mean_ms"));
	json_object_set(o, "chosen_speedup_eager", json_object_get(a, "speedup_eager"));
	json_object_set(o, "rejected_time_mean_ms",
			json_object_get(b, "time_mean_ms") ? json_object_get(b, "time_mean_ms") : json_null());
	json_object_set(o, "rejected_speedup_eager",
			json_object_get(b, "speedup_eager") ? json_object_get(b, "speedup_eager") : json_null());
	json_object_set_new(o, "rejected_status", json_string(jget_str(b, "status", "correct")));
	return o;
}

static int same_group(const json_t *a, const json_t *b)
{
	return a && b && !strcmp(jget_str(a, "problem_id", ""), jget_str(b, "problem_id", "")) &&
	       !strcmp(jget_str(a, "gpu_name", ""), jget_str(b, "gpu_name", ""));
}

static int group_cmp(const json_t *a, const json_t *b)
{
	int c = strcmp(jget_str(a, "problem_id", ""), jget_str(b, "problem_id", ""));
	return c ? c : strcmp(jget_str(a, "gpu_name", ""), jget_str(b, "gpu_name", ""));
}

/* Both lists are ordered by (problem, gpu); correct ones fastest first. */
static int write_pairs(struct ds_stage *st, struct jsonl *w, json_t *correct, json_t *failed,
		       struct buf *err)
{
	size_t nc = json_array_size(correct), nf = json_array_size(failed), i = 0, j = 0;

	while (i < nc) {
		size_t s = i, e, n;
		long long idx = 0;
		json_t *first = json_array_get(correct, i);
		for (e = i; e < nc && same_group(first, json_array_get(correct, e)); e++)
			;
		n = e - s;
		for (size_t k = 0; k < n / 2; k++) {
			json_t *a = json_array_get(correct, s + k), *b = json_array_get(correct, e - 1 - k);
			if (jget_num(b, "time_mean_ms", 0) < jget_num(a, "time_mean_ms", 0) * PAIR_MIN_RATIO)
				continue;
			json_t *o = pair(st, "faster_vs_slower", idx++, a, b);
			int r = jsonl_put(w, o, err);
			json_decref(o);
			if (r < 0)
				return -1;
		}
		while (j < nf && group_cmp(json_array_get(failed, j), first) < 0)
			j++;
		for (size_t k = 0; j < nf && same_group(first, json_array_get(failed, j)); j++, k++) {
			json_t *o = pair(st, "correct_vs_incorrect", idx++, json_array_get(correct, s + k % n),
					 json_array_get(failed, j));
			int r = jsonl_put(w, o, err);
			json_decref(o);
			if (r < 0)
				return -1;
		}
		i = e;
	}
	return 0;
}

static int collect(void *p, json_t *row)
{
	json_array_append(p, row);
	return 0;
}

static int load_problems(void *p, json_t *row)
{
	struct ds_stage *st = p;
	json_object_set(st->problems, jget_str(row, "id", ""), row);
	return 0;
}

static int ensure_problems(struct ds_stage *st, struct buf *err)
{
	if (!st->problems)
		st->problems = json_object();
	if (json_object_size(st->problems))
		return 0;
	return store_problems_each(st->s, load_problems, st, err) < 0 ? -1 : 0;
}

int ds_write_sft(struct ds_stage *st, struct buf *err)
{
	struct jsonl w;
	struct sft_ctx c = { st, &w, err, json_object(), "" };
	int ret = -1;

	if (ensure_problems(st, err) < 0)
		goto out;
	if (jsonl_open(&w, st, "sft.jsonl", err) < 0)
		goto out;
	if (store_export_correct(st->s, sft_row, &c, err) != 0 || sft_flush(&c) < 0) {
		jsonl_abort(&w);
		goto out;
	}
	ret = jsonl_close(&w, st, err);
out:
	json_decref(c.group);
	return ret;
}

int ds_write_pairs(struct ds_stage *st, struct buf *err)
{
	struct jsonl w;
	json_t *correct = json_array(), *failed = json_array();
	int ret = -1;

	if (ensure_problems(st, err) < 0)
		goto out;
	if (store_export_correct(st->s, collect, correct, err) != 0 ||
	    store_export_failed(st->s, collect, failed, err) != 0)
		goto out;
	if (jsonl_open(&w, st, "pairs.jsonl", err) < 0)
		goto out;
	if (write_pairs(st, &w, correct, failed, err) < 0) {
		jsonl_abort(&w);
		goto out;
	}
	ret = jsonl_close(&w, st, err);
out:
	json_decref(correct);
	json_decref(failed);
	return ret;
}
