#include "store_verify.h"
#include "core/json.h"

json_t *store_verify_candidates(struct store *s, const char *gpu_name, const char *protocol,
				int top_k, int per_category, struct buf *err)
{
	json_t *prm = json_pack("[s,s,i,i]", gpu_name, protocol, top_k, per_category);
	json_t *rows = store_query_all(s,
		/* The collector's measurements on this GPU; for a problem never
		 * searched here (verifying an H100 search on an H200), those of
		 * the GPUs where it was (the fastest time where several). */
		"WITH ok AS (\n"
		"  SELECT e.problem_id, e.kernel_hash, min(e.time_mean_ms) AS time_mean_ms FROM evals e\n"
		"  WHERE e.protocol LIKE ?2 AND e.status = 'correct' AND e.time_mean_ms IS NOT NULL\n"
		"    AND (e.gpu_name = ?1 OR NOT EXISTS (SELECT 1 FROM evals x WHERE\n"
		"      x.problem_id = e.problem_id AND x.gpu_name = ?1 AND x.protocol LIKE ?2\n"
		"      AND x.status = 'correct'))\n"
		"  GROUP BY e.problem_id, e.kernel_hash),\n"
		"top AS (\n"
		"  SELECT problem_id, kernel_hash, time_mean_ms, row_number() OVER (\n"
		"    PARTITION BY problem_id ORDER BY time_mean_ms, kernel_hash) AS rk FROM ok),\n"
		"cat AS (\n"
		"  SELECT ok.problem_id, ok.kernel_hash, ok.time_mean_ms, row_number() OVER (\n"
		"    PARTITION BY ok.problem_id, ic.category ORDER BY ok.time_mean_ms, ok.kernel_hash) AS rk\n"
		"  FROM ok JOIN candidates c ON c.kernel_hash = ok.kernel_hash AND c.problem_id = ok.problem_id\n"
		"  JOIN idea_categories ic ON ic.idea_id = c.idea_id),\n"
		"pick AS (\n"
		"  SELECT problem_id, kernel_hash, time_mean_ms FROM top WHERE rk <= ?3\n"
		"  UNION SELECT problem_id, kernel_hash, time_mean_ms FROM cat WHERE rk = 1 AND ?4)\n"
		"SELECT p.problem_id, p.kernel_hash, p.time_mean_ms, k.source\n"
		"FROM pick p JOIN kernels k ON k.hash = p.kernel_hash\n"
		"JOIN problems pr ON pr.id = p.problem_id\n"
		"ORDER BY pr.level, pr.number, p.time_mean_ms, p.kernel_hash",
		prm, err);
	json_decref(prm);
	return rows;
}

json_t *store_eval_env(struct store *s, const char *eval_id, struct buf *err)
{
	json_t *prm = json_pack("[s]", eval_id), *row = NULL, *env = NULL;
	if (store_query_one(s, "SELECT env FROM evals WHERE id = ?", prm, &row, err) == 0 && row) {
		const char *t = jget_str(row, "env", NULL);
		if (t)
			env = json_loads(t, 0, NULL);
	}
	json_decref(prm);
	json_decref(row);
	return env;
}

int store_put_verification(struct store *s, const json_t *row, struct buf *err)
{
	return store_insert(s, "verifications", row, STORE_REPLACE, err) < 0 ? -1 : 0;
}

int store_verification_sanitizer(struct store *s, const char *verification_id, struct buf *out,
				 struct buf *err)
{
	json_t *row = NULL, *p = json_pack("[s]", verification_id);
	int r = store_query_one(s, "SELECT sanitizer FROM verifications WHERE id = ?", p, &row, err);
	const char *t = r == 0 ? jget_str(row, "sanitizer", NULL) : NULL;

	json_decref(p);
	if (t) {
		buf_reset(out);
		buf_adds(out, t);
	}
	json_decref(row);
	return r < 0 ? -1 : t != NULL;
}
