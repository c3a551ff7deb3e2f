#include "store_eval.h"
#include "core/json.h"

int store_kernel_exists(struct store *s, const char *hash, struct buf *err)
{
	long long n = 0;
	json_t *pa = json_pack("[s]", hash);
	int r = store_query_int(s, "SELECT COUNT(*) FROM kernels WHERE hash = ?", pa, 0, &n, err);
	json_decref(pa);
	return r < 0 ? -1 : n > 0;
}

int store_kernel_source(struct store *s, const char *hash, struct buf *out, struct buf *err)
{
	json_t *row = NULL, *pa = json_pack("[s]", hash);
	int r = store_query_one(s, "SELECT source FROM kernels WHERE hash = ?", pa, &row, err);

	json_decref(pa);
	if (r < 0)
		return -1;
	if (!row)
		return 0;
	buf_reset(out);
	buf_adds(out, jget_str(row, "source", ""));
	json_decref(row);
	return 1;
}

json_t *store_compile_kernels(struct store *s, const char *compile_id, struct buf *err)
{
	json_t *prm = json_pack("[s]", compile_id);
	json_t *rows = store_query_all(s, "SELECT kernel_name, registers, shared_bytes, spill_store_bytes, "
				       "spill_load_bytes, stack_bytes, const_bytes FROM compile_kernels "
				       "WHERE compile_id = ? ORDER BY kernel_name", prm, err);
	json_decref(prm);
	return rows;
}

int store_eval_get(struct store *s, const char *eval_id, json_t **row, struct buf *err)
{
	json_t *prm = json_pack("[s]", eval_id);
	int r = store_query_one(s, "SELECT * FROM evals WHERE id = ?", prm, row, err);
	json_decref(prm);
	return r;
}

int store_eval_delete_trials(struct store *s, const char *eval_id, struct buf *err)
{
	json_t *prm = json_pack("[s]", eval_id);
	int r = store_query(s, "DELETE FROM eval_trials WHERE eval_id = ?", prm, NULL, NULL, err);
	json_decref(prm);
	return r < 0 ? -1 : 0;
}

static double rowd(const json_t *row, const char *k)
{
	const json_t *v = json_object_get(row, k);
	return json_is_number(v) ? json_number_value(v) : 0;
}

int store_gpu_peaks(struct store *s, const char *gpu, double *gbs, double *tflops,
		    struct buf *err)
{
	json_t *prm = json_pack("[s]", gpu), *row = NULL;
	int r = store_query_one(s, "SELECT peak_bw_gbs, peak_fp32_tflops FROM gpus WHERE name = ?", prm,
				&row, err);

	json_decref(prm);
	*gbs = *tflops = 0;
	if (r < 0)
		return -1;
	if (row) {
		*gbs = rowd(row, "peak_bw_gbs");
		*tflops = rowd(row, "peak_fp32_tflops");
		json_decref(row);
	}
	return 0;
}

int store_gpu_details(struct store *s, const char *gpu, json_t **row, struct buf *err)
{
	json_t *p = json_pack("[s]", gpu);
	int r = store_query_one(s, "SELECT arch, sm_count, memory_bytes, l2_bytes, driver, "
				   "cuda_version FROM gpus WHERE name = ?", p, row, err);
	json_decref(p);
	return r;
}

json_t *store_gpus_measured(struct store *s, const char *name, struct buf *err)
{
	json_t *prm = json_pack("[s?,s?]", name, name);
	json_t *rows = store_query_all(s, "SELECT name, peak_bw_gbs, peak_fp32_tflops FROM gpus "
				       "WHERE (? IS NULL OR name = ?) AND peak_bw_gbs > 0 ORDER BY name",
				       prm, err);
	json_decref(prm);
	return rows;
}
