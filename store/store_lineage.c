#include "store_lineage.h"
#include "store_profile.h"
#include "core/json.h"

#include <string.h>

/* The latest correct evaluation's mean time of kernel H for problem P on
 * GPU G (SQL expressions). The unary + keep SQLite on evals_by_kernel: a
 * kernel has few evaluations, a problem thousands. */
#define KTIME(H, P, G) \
	"(SELECT e.time_mean_ms FROM evals e WHERE e.kernel_hash = " H " AND +e.problem_id = " P \
	" AND +e.gpu_name = " G " AND +e.status = 'correct' AND e.time_mean_ms > 0" \
	" ORDER BY e.created_at DESC, e.id DESC LIMIT 1)"
#define EAGER(P, G) \
	"(SELECT b.mean_ms FROM baselines b WHERE b.problem_id = " P " AND b.gpu_name = " G \
	" AND b.variant = 'eager')"
/* The first parent id; NULL for malformed JSON (a hostile store must not
 * fail the query). */
#define PARENT0(C) \
	"(CASE WHEN json_valid(" C ".parent_ids) THEN json_extract(" C ".parent_ids, '$[0]') END)"

int store_kernel_profile(struct store *s, const char *hash, const char *problem_id,
			 const char *gpu, json_t **out, struct buf *err)
{
	json_t *pa = json_pack("[s,s,s]", hash, problem_id, gpu), *row = NULL;
	int r;

	*out = NULL;
	r = store_query_one(s, "SELECT p.eval_id FROM profiles p JOIN evals e ON e.id = p.eval_id"
			    " WHERE p.kernel_hash = ?1 AND p.problem_id = ?2 AND p.gpu_name = ?3"
			    " AND e.status = 'correct' ORDER BY p.created_at DESC, p.eval_id DESC LIMIT 1",
			    pa, &row, err);
	json_decref(pa);
	if (r < 0)
		return -1;
	if (!row)
		return 0;
	r = store_profile_get(s, jget_str(row, "eval_id", ""), out, err);
	json_decref(row);
	return r;
}

json_t *store_idea_chain(struct store *s, const char *cand_id, const char *gpu, int max,
			 struct buf *err)
{
	json_t *chain = json_array(), *seen = json_object(), *row;
	struct buf id = BUF_INIT;

	buf_adds(&id, cand_id);
	for (int n = 0; n < max && id.len && !json_object_get(seen, id.s); n++) {
		json_t *pa = json_pack("[s,s]", id.s, gpu ? gpu : "");
		row = NULL;
		int r = store_query_one(s,
			"SELECT c.id, c.run_id, c.round, c.status, c.kernel_hash, c.idea_id,"
			" i.text AS idea_text, " PARENT0("c") " AS parent_id,"
			" " KTIME("c.kernel_hash", "c.problem_id", "?2") " AS time_ms,"
			" " EAGER("c.problem_id", "?2") " AS eager_ms"
			" FROM candidates c LEFT JOIN ideas i ON i.id = c.idea_id WHERE c.id = ?1",
			pa, &row, err);
		json_decref(pa);
		if (r < 0) {
			json_decref(chain);
			chain = NULL;
			break;
		}
		if (!row)
			break;
		json_object_set_new(seen, id.s, json_true());
		double t = jget_num(row, "time_ms", 0), e = jget_num(row, "eager_ms", 0);
		json_object_set_new(row, "speedup", t > 0 && e > 0 ? json_real(e / t) : json_null());
		buf_reset(&id);
		buf_adds(&id, jget_str(row, "parent_id", ""));
		json_object_del(row, "parent_id");
		json_array_insert_new(chain, 0, row);
	}
	json_decref(seen);
	buf_release(&id);
	return chain;
}

json_t *store_problem_diffs(struct store *s, const char *problem_id, struct buf *err)
{
	json_t *pa = json_pack("[s]", problem_id);
	json_t *r = store_query_all(s,
		"SELECT c.id, c.run_id, c.round, r.gpu_name, c.status, c.kernel_hash, c.idea_id,"
		" i.text AS idea_text, pc.id AS parent_id, pc.round AS parent_round,"
		" pc.kernel_hash AS parent_hash,"
		" " KTIME("c.kernel_hash", "c.problem_id", "r.gpu_name") " AS time_ms,"
		" " KTIME("pc.kernel_hash", "c.problem_id", "r.gpu_name") " AS parent_ms,"
		" " EAGER("c.problem_id", "r.gpu_name") " AS eager_ms"
		" FROM candidates c JOIN runs r ON r.id = c.run_id"
		" JOIN candidates pc ON pc.id = " PARENT0("c")
		" LEFT JOIN ideas i ON i.id = c.idea_id"
		" WHERE c.problem_id = ?1 AND c.kernel_hash IS NOT NULL AND pc.kernel_hash IS NOT NULL"
		" ORDER BY c.run_id, c.round, c.idea_id, c.impl_index, c.id", pa, err);
	json_decref(pa);
	return r;
}

json_t *store_limiter_shifts(struct store *s, struct buf *err)
{
	return store_query_all(s,
		"WITH kp AS (SELECT p.kernel_hash, p.problem_id, p.gpu_name, p.limiter,"
		"  ROW_NUMBER() OVER (PARTITION BY p.kernel_hash, p.problem_id, p.gpu_name"
		"   ORDER BY p.created_at DESC, p.eval_id DESC) AS rn"
		"  FROM profiles p JOIN evals e ON e.id = p.eval_id WHERE e.status = 'correct'),"
		" lp AS (SELECT * FROM kp WHERE rn = 1)"
		" SELECT ic.category, pb.limiter AS before, pa.limiter AS after, COUNT(*) AS n"
		" FROM idea_categories ic JOIN candidates c ON c.idea_id = ic.idea_id"
		" JOIN runs r ON r.id = c.run_id"
		" JOIN candidates pc ON pc.id = " PARENT0("c")
		" JOIN lp pa ON pa.kernel_hash = c.kernel_hash AND pa.problem_id = c.problem_id"
		"  AND pa.gpu_name = r.gpu_name"
		" JOIN lp pb ON pb.kernel_hash = pc.kernel_hash AND pb.problem_id = c.problem_id"
		"  AND pb.gpu_name = r.gpu_name"
		" GROUP BY ic.category, pb.limiter, pa.limiter ORDER BY 1, 2, 3", NULL, err);
}
