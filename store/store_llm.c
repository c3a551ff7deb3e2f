#include "store_llm.h"
#include "core/json.h"

#include <string.h>

int store_llm_call_archive(struct store *s, const char *id, struct buf *err)
{
	json_t *cols = store_table_columns(s, "llm_calls", err), *prm = NULL, *c;
	struct buf sql = BUF_INIT, names = BUF_INIT, vals = BUF_INIT;
	long long n = 0;
	size_t i;
	int ret = -1;

	if (!cols)
		return -1;
	prm = json_pack("[s]", id);
	if (store_query_int(s, "SELECT attempt FROM llm_calls WHERE id = ?1", prm, 0, &n, err) < 0)
		goto out;
	if (n < 1) {
		ret = kf_err(err, "llm_calls: no call %s to retry", id);
		goto out;
	}
	json_array_foreach(cols, i, c) {
		const char *name = json_string_value(c);
		buf_addf(&names, "%s%s", i ? ", " : "", name);
		if (!strcmp(name, "id"))
			buf_addf(&vals, "%sid || '#' || attempt", i ? ", " : "");
		else if (!strcmp(name, "retry_of"))
			buf_addf(&vals, "%s?1", i ? ", " : "");
		else
			buf_addf(&vals, "%s%s", i ? ", " : "", name);
	}
	buf_addf(&sql, "INSERT INTO llm_calls (%s) SELECT %s FROM llm_calls WHERE id = ?1", names.s, vals.s);
	if (store_query(s, sql.s, prm, NULL, NULL, err) < 0)
		goto out;
	ret = (int)n + 1;
out:
	json_decref(cols);
	json_decref(prm);
	buf_release(&sql);
	buf_release(&names);
	buf_release(&vals);
	return ret;
}
