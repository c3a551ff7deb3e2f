#include "store_profile.h"
#include "core/json.h"

#include <string.h>

const char *const store_profile_limiters[] = { "memory", "compute", "latency", "launch", NULL };

int store_profile_limiter_ok(const char *s)
{
	for (int i = 0; s && store_profile_limiters[i]; i++)
		if (!strcmp(s, store_profile_limiters[i]))
			return 1;
	return 0;
}

static const char *const prof_cols[] = {
	"eval_id", "kernel_hash", "problem_id", "gpu_name", "limiter", "launches", "kernel_ms",
	"dram_read_bytes", "dram_write_bytes", "dram_pct", "l2_hit_pct", "sm_pct", "tensor_pct",
	"occupancy_pct", "cost_ms", "tool", "created_at", NULL,
};
static const char *const kern_cols[] = {
	"idx", "name", "duration_ms", "dram_read_bytes", "dram_write_bytes", "dram_pct",
	"l2_hit_pct", "sm_pct", "tensor_pct", "occupancy_pct", "registers", "shared_bytes",
	"block_threads", "grid_blocks", "limiter", NULL,
};

/* A row of the named columns of src (missing ones null). */
static json_t *row_of(const json_t *src, const char *const *cols)
{
	json_t *row = json_object();

	for (int i = 0; cols[i]; i++) {
		json_t *v = json_object_get(src, cols[i]);
		json_object_set_new(row, cols[i], v ? json_deep_copy(v) : json_null());
	}
	return row;
}

int store_profile_put(struct store *s, const json_t *prof, struct buf *err)
{
	const char *eid = json_string_value(json_object_get(prof, "eval_id"));
	const json_t *ks = json_object_get(prof, "kernels"), *k;
	int own = !s->in_tx, ret = -1;
	json_t *row, *prm;
	size_t i;

	if (!eid || !store_profile_limiter_ok(json_string_value(json_object_get(prof, "limiter"))))
		return kf_err(err, "profiles: an eval_id and a known limiter are required");
	if (own && store_begin(s, err) < 0)
		return -1;
	prm = json_pack("[s]", eid);
	if (store_query(s, "DELETE FROM profile_kernels WHERE eval_id = ?1", prm, NULL, NULL, err) < 0)
		goto out;
	row = row_of(prof, prof_cols);
	ret = store_insert(s, "profiles", row, STORE_REPLACE, err);
	json_decref(row);
	if (ret < 0)
		goto out;
	json_array_foreach(ks, i, k) {
		if (!store_profile_limiter_ok(json_string_value(json_object_get(k, "limiter")))) {
			ret = kf_err(err, "profiles: kernel %zu of %s has no known limiter", i, eid);
			goto out;
		}
		row = row_of(k, kern_cols);
		json_object_set_new(row, "eval_id", json_string(eid));
		json_object_set_new(row, "idx", json_integer((json_int_t)i));
		ret = store_insert(s, "profile_kernels", row, STORE_REPLACE, err);
		json_decref(row);
		if (ret < 0)
			goto out;
	}
	ret = 0;
out:
	json_decref(prm);
	if (own) {
		if (ret == 0)
			ret = store_commit(s, err);
		else
			store_rollback(s);
	}
	return ret;
}

int store_profile_get(struct store *s, const char *eval_id, json_t **out, struct buf *err)
{
	json_t *prm = json_pack("[s]", eval_id), *row = NULL, *ks;

	*out = NULL;
	if (store_query_one(s, "SELECT * FROM profiles WHERE eval_id = ?1", prm, &row, err) < 0) {
		json_decref(prm);
		return -1;
	}
	if (!row) {
		json_decref(prm);
		return 0;
	}
	ks = store_query_all(s, "SELECT * FROM profile_kernels WHERE eval_id = ?1 ORDER BY idx", prm, err);
	json_decref(prm);
	if (!ks) {
		json_decref(row);
		return -1;
	}
	for (size_t i = 0; i < json_array_size(ks); i++)
		json_object_del(json_array_get(ks, i), "eval_id");
	json_object_set_new(row, "kernels", ks);
	*out = row;
	return 0;
}

int store_profile_delete(struct store *s, const char *eval_id, struct buf *err)
{
	json_t *prm = json_pack("[s]", eval_id);
	int r = store_query(s, "DELETE FROM profile_kernels WHERE eval_id = ?1", prm, NULL, NULL, err);

	if (r >= 0)
		r = store_query(s, "DELETE FROM profiles WHERE eval_id = ?1", prm, NULL, NULL, err);
	json_decref(prm);
	return r < 0 ? -1 : 0;
}
