/* Prompts: templates/prompts/{system,ideas,implement,repair}.mustache
 * (with the partial _problem) rendered against a JSON context built here.
 * All numbers are formatted in C so the text is the same everywhere. */
#include "llm.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/json.h"
#include "core/mustache.h"
#include "core/xalloc.h"

enum { P_SYSTEM, P_IDEAS, P_IMPLEMENT, P_REPAIR, P_COUNT };
static const char *const names[P_COUNT] = { "system", "ideas", "implement", "repair" };

struct llm_prompts {
	struct mustache_tpl tpl[P_COUNT];
	struct mustache_partials partials;
	pthread_mutex_t mu; /* the partials cache is not thread-safe */
};

int llm_prompts_open(struct llm_prompts **pp, const char *dir, struct buf *err)
{
	struct llm_prompts *p = xcalloc(1, sizeof(*p));
	struct buf path = BUF_INIT, text = BUF_INIT, e2 = BUF_INIT;
	int rc = -1, i;

	if (!dir)
		dir = "templates/prompts";
	for (i = 0; i < P_COUNT; i++)
		mustache_init(&p->tpl[i]);
	mustache_partials_dir(&p->partials, dir);
	pthread_mutex_init(&p->mu, NULL);
	for (i = 0; i < P_COUNT; i++) {
		buf_setf(&path, "%s/%s.mustache", dir, names[i]);
		buf_reset(&text);
		if (buf_read_file(&text, path.s, MUSTACHE_MAX_TEMPLATE, &e2) < 0) {
			kf_err(err, "prompt template: %s", e2.s);
			goto out;
		}
		mustache_set_name(&p->tpl[i], path.s);
		if (mustache_compile(&p->tpl[i], text.s, text.len, &e2) < 0) {
			kf_err(err, "prompt template: %s", e2.s);
			goto out;
		}
	}
	rc = 0;
	*pp = p;
out:
	if (rc < 0)
		llm_prompts_close(p);
	buf_release(&path);
	buf_release(&text);
	buf_release(&e2);
	return rc;
}

void llm_prompts_close(struct llm_prompts *p)
{
	if (!p)
		return;
	for (int i = 0; i < P_COUNT; i++)
		mustache_release(&p->tpl[i]);
	mustache_partials_release(&p->partials);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

static int render(struct llm_prompts *p, int which, json_t *ctx, struct buf *out,
		  struct buf *err)
{
	int rc;
	pthread_mutex_lock(&p->mu);
	rc = mustache_render_capped(&p->tpl[which], ctx, &p->partials, out, 8u << 20, err);
	pthread_mutex_unlock(&p->mu);
	json_decref(ctx);
	return rc;
}

static json_t *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static json_t *fmt(const char *f, ...)
{
	char s[64];
	va_list ap;
	va_start(ap, f);
	vsnprintf(s, sizeof(s), f, ap);
	va_end(ap);
	return json_string(s);
}

/* Texts from files or the model may not be valid UTF-8: keep the bytes. */
static json_t *str_or_empty(const char *s)
{
	json_t *j;
	if (!s)
		s = "";
	j = json_string(s);
	return j ? j : json_string_nocheck(s);
}

/* Long texts (compile logs) are cut to keep prompts bounded. */
static json_t *str_cut(const char *s, size_t max)
{
	struct buf b = BUF_INIT;
	json_t *j;
	size_t n = s ? strlen(s) : 0;
	if (n <= max)
		return str_or_empty(s);
	while (max && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	buf_add(&b, s, max);
	buf_addf(&b, "\n[... %zu more bytes cut ...]", n - max);
	j = str_or_empty(b.s);
	buf_release(&b);
	return j;
}

/* Source text without trailing blank lines (it sits inside a fence). */
static json_t *src_text(const char *s)
{
	struct buf b = BUF_INIT;
	json_t *j;
	buf_adds(&b, s ? s : "");
	buf_trim(&b);
	j = str_or_empty(b.s);
	buf_release(&b);
	return j;
}

static const char *tolerance_text(const char *t)
{
	if (!t || !strcmp(t, "fp32"))
		return "fp32 tolerance (atol = rtol = 1e-4)";
	if (!strcmp(t, "fp16") || !strcmp(t, "bf16"))
		return "half-precision tolerance (atol = rtol = 1e-2)";
	if (!strcmp(t, "exact"))
		return "exact equality";
	return t;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *cat_list(unsigned bits)
{
	struct buf b = BUF_INIT;
	for (int i = 0; i < CAT_COUNT; i++)
		if (bits & (1u << i))
			buf_addf(&b, "%s%s", b.len ? ", " : "", idea_category_name(i));
	return buf_detach(&b, NULL);
}

static json_t *shape_text(const json_t *shape)
{
	struct buf b = BUF_INIT;
	size_t i;
	json_t *d, *s;
	buf_addc(&b, '[');
	json_array_foreach(shape, i, d) {
		if (i)
			buf_adds(&b, ", ");
		if (json_is_string(d))
			buf_adds(&b, json_string_value(d));
		else if (json_is_integer(d))
			buf_addf(&b, "%lld", (long long)json_integer_value(d));
	}
	buf_addc(&b, ']');
	s = json_stringn(b.s, b.len);
	buf_release(&b);
	return s;
}

static json_t *tensors(const json_t *arr)
{
	json_t *out = json_array(), *t;
	size_t i;
	json_array_foreach(arr, i, t) {
		json_array_append_new(out, json_pack("{s:o, s:o, s:o}",
						     "name", str_or_empty(jget_str(t, "name", "")),
						     "dtype", str_or_empty(jget_str(t, "dtype", "")),
						     "shape", shape_text(json_object_get(t, "shape"))));
	}
	return out;
}

/* {name, value, last} items of a JSON object, in key order. */
static json_t *named(const json_t *obj)
{
	json_t *out = json_array(), *v;
	const char **keys;
	size_t n = json_object_size(obj), i = 0;
	const char *k;

	keys = xcalloc(n + 1, sizeof(*keys));
	json_object_foreach((json_t *)obj, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (i = 0; i < n; i++) {
		json_t *val = json_object_get(obj, keys[i]), *s;
		if (json_is_integer(val)) {
			char t[32];
			snprintf(t, sizeof(t), "%lld", (long long)json_integer_value(val));
			s = json_string(t);
		} else if (json_is_real(val))
			s = fmt("%.9g", json_real_value(val));
		else
			continue;
		json_array_append_new(out, json_pack("{s:s, s:o, s:b}", "name", keys[i], "value", s,
						     "last", i + 1 == n));
	}
	free(keys);
	return out;
}

static json_t *problem_ctx(const struct proposer_problem *pr)
{
	const json_t *spec = pr->spec;
	json_t *sizes = named(json_object_get(spec, "sizes"));
	json_t *scalars = named(json_object_get(spec, "scalars"));
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:b, s:o, s:b}",
			 "id", str_or_empty(pr->id),
			 "operation", str_or_empty(jget_str(spec, "operation", "")),
			 "torch_text", src_text(pr->torch_text),
			 "reference_src", src_text(pr->reference_src),
			 "tolerance", json_string(tolerance_text(jget_str(spec, "tolerance", NULL))),
			 "gpu_name", str_or_empty(pr->gpu_name ? pr->gpu_name : "an NVIDIA GPU"),
			 "arch", str_or_empty(pr->arch ? pr->arch : "sm_90"),
			 "inputs", tensors(json_object_get(spec, "inputs")),
			 "outputs", tensors(json_object_get(spec, "outputs")),
			 "allow_tf32", pr->allow_tf32,
			 "sizes", sizes, "has_sizes", json_array_size(sizes) > 0,
			 "scalars", scalars, "has_scalars", json_array_size(scalars) > 0);
}

int llm_prompt_system(struct llm_prompts *p, struct buf *out, struct buf *err)
{
	return render(p, P_SYSTEM, json_object(), out, err);
}

int llm_prompt_ideas(struct llm_prompts *p, const struct idea_request *req, struct buf *out,
		     struct buf *err)
{
	json_t *hist = json_array(), *cats = json_array(), *ctx;
	/* the most recent LLM_PROMPT_MAX_HISTORY ideas keep the prompt bounded */
	int first = req->n_history > LLM_PROMPT_MAX_HISTORY ? req->n_history - LLM_PROMPT_MAX_HISTORY : 0;
	for (int i = first; i < req->n_history; i++) {
		const struct idea_outcome *o = &req->history[i];
		char *c = cat_list(o->categories);
		json_array_append_new(
			hist, json_pack("{s:i, s:i, s:o, s:s, s:i, s:i, s:o}", "n", i + 1, "round",
					o->round, "text", str_cut(o->text, LLM_MAX_IDEA_BYTES), "categories", c,
					"kernels", o->kernels, "correct", o->correct, "best",
					o->correct > 0 ? fmt("%.2fx", o->best_speedup)
						       : json_string("none correct")));
		free(c);
	}
	for (int i = 0; i < CAT_COUNT; i++)
		json_array_append_new(cats, json_pack("{s:s, s:s}", "name", idea_category_name(i),
						      "title", idea_category_title(i)));
	ctx = json_pack("{s:o, s:o, s:b, s:i, s:i, s:o}", "problem", problem_ctx(req->problem),
			"history", hist, "has_history", req->n_history > 0, "k", req->k, "round",
			req->round, "categories", cats);
	if (req->profile) {
		json_object_set_new(ctx, "has_profile", json_true());
		json_object_set_new(ctx, "profile", str_cut(req->profile, PROPOSER_PROFILE_TEXT_MAX));
		json_object_set_new(ctx, "profile_kernel", str_cut(req->limiter_kernel, 64));
	}
	return render(p, P_IDEAS, ctx, out, err);
}

int llm_prompt_implement(struct llm_prompts *p, const struct impl_request *req, int m,
			 struct buf *out, struct buf *err)
{
	json_t *seeds = json_array();
	char *c = cat_list(req->idea ? req->idea->categories : 0);
	json_t *ctx;

	for (int i = 0; i < req->n_seeds; i++) {
		const struct seed_kernel *s = &req->seeds[i];
		json_t *o = json_pack("{s:o, s:o, s:b, s:o, s:b, s:o}", "kernel_id",
				      str_or_empty(s->kernel_id), "source", src_text(s->source),
				      "has_time", s->time_ms > 0, "time_ms", fmt("%.4g", s->time_ms),
				      "has_speedup", s->speedup > 0, "speedup", fmt("%.2f", s->speedup));
		if (s->profile) {
			json_object_set_new(o, "has_profile", json_true());
			json_object_set_new(o, "profile", str_cut(s->profile, PROPOSER_PROFILE_TEXT_MAX));
		}
		json_array_append_new(seeds, o);
	}
	ctx = json_pack("{s:o, s:{s:o, s:s}, s:o, s:b, s:i, s:b}", "problem",
			problem_ctx(req->problem), "idea", "text",
			str_or_empty(req->idea ? req->idea->text : ""), "categories", c, "seeds",
			seeds, "has_seeds", req->n_seeds > 0, "m", m, "multi", m > 1);
	free(c);
	return render(p, P_IMPLEMENT, ctx, out, err);
}

int llm_prompt_repair(struct llm_prompts *p, const struct repair_request *req, struct buf *out,
		      struct buf *err)
{
	json_t *ctx = json_pack(
		"{s:o, s:{s:o, s:o}, s:o, s:o, s:i}", "problem", problem_ctx(req->problem),
		"kernel", "source", src_text(req->kernel ? req->kernel->source : ""),
		"kernel_id", str_or_empty(req->kernel ? req->kernel->kernel_id : ""), "status",
		str_or_empty(req->status), "failure", str_cut(req->failure, 16000), "turn", req->turn);
	return render(p, P_REPAIR, ctx, out, err);
}
