/* The engine's rows: kernels, compiles (+ compile_kernels), evals (+
 * eval_trials) and gpus, built from the engine's structs and written with
 * store_insert; their SQL is in store/store_eval.c. Callers hold the
 * engine's store mutex. */
#include "engine_int.h"
#include "core/json.h"
#include "store/store_eval.h"
#include "store/store_profile.h"
#include "core/utf8.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static json_t *num_or_null(double v, int have)
{
	return have && isfinite(v) ? json_real(v) : json_null();
}

int es_put_kernel(struct store *s, const char *hash, const char *canonical, size_t len,
		  struct buf *err)
{
	char now[32];
	json_t *row, *src = json_utf8(canonical, len);
	int r;

	store_now(now);
	row = json_pack("{s:s,s:O,s:I,s:s}", "hash", hash, "source", src, "bytes",
			(json_int_t)json_string_length(src), "created_at", now);
	json_decref(src);
	r = store_insert(s, "kernels", row, STORE_IGNORE, err);
	json_decref(row);
	return r < 0 ? -1 : 0;
}

int es_put_compile(struct store *s, const char *compile_id, const char *kernel_hash,
		   const char *arch, const struct compile_result *r, const char *status,
		   const char *message, struct buf *err)
{
	char now[32];
	json_t *row;
	int ret = -1;

	store_now(now);
	if (store_begin(s, err) < 0)
		return -1;
	row = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:s}", "id", compile_id,
			"kernel_hash", kernel_hash, "arch", arch, "options",
			r && r->options.len ? r->options.s : "[]", "nvrtc_version",
			r ? r->nvrtc_version : "", "status", status, "message",
			json_utf8(message, message ? strlen(message) : 0), "log",
			r ? json_utf8(r->log.s, r->log.len) : json_string(""), "duration_ms",
			num_or_null(r ? r->ms : 0, r != NULL), "created_at", now);
	if (store_insert(s, "compiles", row, STORE_REPLACE, err) < 0)
		goto out;
	for (int i = 0; r && i < r->n_kernels; i++) {
		const struct kernel_stats *k = &r->kernels[i];
		json_t *kr = json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:i}", "compile_id", compile_id,
				       "kernel_name", k->name ? k->name : "", "registers",
				       k->registers, "shared_bytes", k->smem_static,
				       "spill_store_bytes", k->spill_stores, "spill_load_bytes",
				       k->spill_loads, "stack_bytes", k->stack, "const_bytes", k->cmem);
		int rr = store_insert(s, "compile_kernels", kr, STORE_REPLACE, err);
		json_decref(kr);
		if (rr < 0)
			goto out;
	}
	ret = store_commit(s, err);
out:
	if (ret < 0)
		store_rollback(s);
	json_decref(row);
	return ret;
}

static double rowd(const json_t *row, const char *k)
{
	const json_t *v = json_object_get(row, k);
	return json_is_number(v) ? json_number_value(v) : 0;
}

static void copy_str(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

int es_find_eval(struct store *s, const char *eval_id, struct eval_outcome *o, struct buf *err)
{
	json_t *row = NULL, *env;
	int r = store_eval_get(s, eval_id, &row, err);

	if (r < 0)
		return -1;
	if (!row)
		return 0;
	if (o->eval_id != eval_id)
		copy_str(o->eval_id, sizeof(o->eval_id), eval_id);
	copy_str(o->kernel_hash, sizeof(o->kernel_hash), jget_str(row, "kernel_hash", ""));
	copy_str(o->status, sizeof(o->status), jget_str(row, "status", ""));
	copy_str(o->failed_check, sizeof(o->failed_check), jget_str(row, "failed_check", ""));
	copy_str(o->gpu_name, sizeof(o->gpu_name), jget_str(row, "gpu_name", ""));
	buf_reset(&o->detail);
	buf_adds(&o->detail, jget_str(row, "detail", ""));
	o->max_abs_err = rowd(row, "max_abs_err");
	o->max_rel_err = rowd(row, "max_rel_err");
	o->mismatches = jget_int(row, "mismatches", 0);
	o->time_mean_ms = rowd(row, "time_mean_ms");
	o->time_median_ms = rowd(row, "time_median_ms");
	o->time_std_ms = rowd(row, "time_std_ms");
	o->time_min_ms = rowd(row, "time_min_ms");
	o->time_max_ms = rowd(row, "time_max_ms");
	o->cupti_mean_ms = rowd(row, "cupti_mean_ms");
	o->cupti_median_ms = rowd(row, "cupti_median_ms");
	env = json_loads(jget_str(row, "env", "{}"), 0, NULL);
	if (env) {
		copy_str(o->compile_id, sizeof(o->compile_id), jget_str(env, "compile_id", ""));
		o->compile_ms = jget_num(env, "compile_ms", 0);
		o->harness_ms = jget_num(env, "harness_ms", 0);
		o->compile_prefetched = json_is_true(json_object_get(env, "compile_prefetched"));
		json_decref(env);
	}
	o->cached = 1;
	json_decref(row);
	return 1;
}

static int put_trials(struct store *s, const char *eval_id, const char *kind, const json_t *arr,
		      struct buf *err)
{
	size_t i;
	json_t *t;

	json_array_foreach(arr, i, t) {
		json_t *row = json_pack("{s:s,s:s,s:I}", "eval_id", eval_id, "kind", kind, "idx",
					(json_int_t)jget_int(t, "idx", (int64_t)i));
		static const char *const cols[] = { "seed", "time_ms", "cupti_ms", "max_abs_err",
						    "max_rel_err", "mismatches", "ok", NULL };
		int r;
		for (int c = 0; cols[c]; c++) {
			json_t *v = json_object_get(t, cols[c]);
			if (v)
				json_object_set(row, cols[c], v);
		}
		r = store_insert(s, "eval_trials", row, STORE_REPLACE, err);
		json_decref(row);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int put_profile(struct store *s, const struct eval_outcome *o, const char *problem_id,
		       const json_t *prof, const char *now, struct buf *err)
{
	json_t *p;
	int r;

	if (!json_is_object(prof) || strcmp(o->status, "correct"))
		return 0;
	p = json_deep_copy(prof);
	json_object_set_new(p, "eval_id", json_string(o->eval_id));
	json_object_set_new(p, "kernel_hash", json_string(o->kernel_hash));
	json_object_set_new(p, "problem_id", json_string(problem_id));
	json_object_set_new(p, "gpu_name", json_string(o->gpu_name));
	json_object_set_new(p, "created_at", json_string(now));
	r = store_profile_put(s, p, err);
	json_decref(p);
	return r;
}

int es_put_eval(struct store *s, const struct eval_outcome *o, const char *problem_id,
		const char *protocol_name, const char *protocol_json, const json_t *result,
		struct buf *err)
{
	char now[32];
	json_t *row = NULL, *env;
	struct buf envs = BUF_INIT;
	int timed = o->time_mean_ms > 0, ret = -1, has_err = result != NULL;
	const json_t *times = result ? json_object_get(result, "time") : NULL;

	store_now(now);
	env = result && json_is_object(json_object_get(result, "env"))
		      ? json_deep_copy(json_object_get(result, "env"))
		      : json_object();
	json_object_set_new(env, "compile_id", json_string(o->compile_id));
	json_object_set_new(env, "compile_ms", json_real(o->compile_ms));
	json_object_set_new(env, "harness_ms", json_real(o->harness_ms));
	if (o->compile_prefetched)
		json_object_set_new(env, "compile_prefetched", json_true());
	if (o->phases)
		json_object_set(env, "phases_ms", o->phases);
	json_add_compact(&envs, env);
	row = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s?,s:o,s:s,s:s}", "id", o->eval_id,
			"kernel_hash", o->kernel_hash, "problem_id", problem_id, "gpu_name",
			o->gpu_name, "protocol", protocol_name, "protocol_params", protocol_json,
			"status", o->status, "failed_check",
			o->failed_check[0] ? o->failed_check : NULL, "detail",
			json_utf8(o->detail.s, o->detail.len), "env", envs.s, "created_at", now);
	json_object_set_new(row, "max_abs_err", num_or_null(o->max_abs_err, has_err));
	json_object_set_new(row, "max_rel_err", num_or_null(o->max_rel_err, has_err));
	json_object_set_new(row, "mismatches",
			    has_err ? json_integer(o->mismatches) : json_null());
	json_object_set_new(row, "time_mean_ms", num_or_null(o->time_mean_ms, timed));
	json_object_set_new(row, "time_median_ms", num_or_null(o->time_median_ms, timed));
	json_object_set_new(row, "time_std_ms", num_or_null(o->time_std_ms, timed));
	json_object_set_new(row, "time_min_ms", num_or_null(o->time_min_ms, timed));
	json_object_set_new(row, "time_max_ms", num_or_null(o->time_max_ms, timed));
	json_object_set_new(row, "cupti_mean_ms", num_or_null(o->cupti_mean_ms, o->cupti_mean_ms > 0));
	json_object_set_new(row, "cupti_median_ms",
			    num_or_null(o->cupti_median_ms, o->cupti_median_ms > 0));
	json_object_set_new(row, "n_trials",
			    json_is_array(times) ? json_integer((json_int_t)json_array_size(times))
						 : json_integer(0));
	if (store_begin(s, err) < 0)
		goto out;
	/* A forced re-evaluation replaces the trials and the profile
	 * (worker_prof.c) as a whole: they belong to one measurement. */
	if (store_eval_delete_trials(s, o->eval_id, err) < 0 || store_profile_delete(s, o->eval_id, err) < 0)
		goto out;
	if (store_insert(s, "evals", row, STORE_REPLACE, err) < 0)
		goto out;
	if (result && (put_trials(s, o->eval_id, "check", json_object_get(result, "check"), err) < 0 ||
		       put_trials(s, o->eval_id, "time", times, err) < 0))
		goto out;
	if (result && put_profile(s, o, problem_id, json_object_get(result, "profile"), now, err) < 0)
		goto out;
	ret = store_commit(s, err);
out:
	if (ret < 0)
		store_rollback(s);
	json_decref(row);
	json_decref(env);
	buf_release(&envs);
	return ret;
}

int es_put_gpu(struct store *s, const json_t *info, double gbs, double tflops, struct buf *err)
{
	char now[32];
	json_t *row;
	int r;

	store_now(now);
	row = json_pack("{s:s,s:s,s:I,s:I,s:I,s:o,s:o,s:s,s:s,s:s}", "name",
			jget_str(info, "name", ""), "arch", jget_str(info, "arch", ""), "sm_count",
			(json_int_t)jget_int(info, "sm_count", 0), "memory_bytes",
			(json_int_t)jget_int(info, "memory_bytes", 0), "l2_bytes",
			(json_int_t)jget_int(info, "l2_bytes", 0), "peak_bw_gbs",
			num_or_null(gbs, gbs > 0), "peak_fp32_tflops", num_or_null(tflops, tflops > 0),
			"driver", jget_str(info, "driver", ""), "cuda_version",
			jget_str(info, "cuda_version", ""), "first_seen", now);
	/* Keep first_seen; refresh the measured ceilings. */
	r = store_insert(s, "gpus", row, STORE_IGNORE, err);
	if (r == 0 && gbs > 0) {
		json_t *set = json_pack("{s:f,s:f,s:s,s:s}", "peak_bw_gbs", gbs, "peak_fp32_tflops",
					tflops, "driver", jget_str(info, "driver", ""), "cuda_version",
					jget_str(info, "cuda_version", ""));
		json_t *where = json_pack("{s:s}", "name", jget_str(info, "name", ""));
		r = store_update(s, "gpus", set, where, err);
		json_decref(set);
		json_decref(where);
	}
	json_decref(row);
	return r < 0 ? -1 : 0;
}
