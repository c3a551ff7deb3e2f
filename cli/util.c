#include "cli.h"
#include "problem/problem_list.h"
#include "store/store.h"
#include "store/store_report.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "core/termsafe.h"
#include "core/xalloc.h"

int cli_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int *prev, *cur, d;

	if (la > 64 || lb > 64)
		return 99;
	prev = xcalloc(lb + 1, sizeof(int));
	cur = xcalloc(lb + 1, sizeof(int));
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int c = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < c)
				c = prev[j] + 1;
			if (cur[j - 1] + 1 < c)
				c = cur[j - 1] + 1;
			cur[j] = c;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(int));
	}
	d = prev[lb];
	free(prev);
	free(cur);
	return d;
}

int cli_fail(int code, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	/* errors quote server and file text: no control reaches the terminal */
	termsafe_buf(&b, TERMSAFE_KEEP_NL);
	fprintf(stderr, "kforge: %s\n", b.s ? b.s : "");
	buf_release(&b);
	return code;
}

void cli_eputs(const char *s)
{
	struct buf b = BUF_INIT;
	termsafe_add(&b, s, strlen(s), TERMSAFE_KEEP_NL);
	fputs(b.s, stderr);
	buf_release(&b);
}

int cli_not_implemented(const char *cmd)
{
	fprintf(stderr, "kforge %s: not yet implemented\n", cmd);
	return EXIT_USAGE;
}

void cli_data_path(struct cli_ctx *ctx, const char *rel, struct buf *out)
{
	buf_reset(out);
	buf_addf(out, "%s/%s", ctx->root, rel);
}

/* One item: the store's problem it names, else the ids of a PROBLEMS form
 * (level2, 1-10, all) under the suite here. 0, PROBLEM_UNKNOWN or -1. */
static int item_ids(struct cli_ctx *ctx, struct store *st, const char *t, json_t *probs,
		    struct buf *err)
{
	struct problem_list l;
	struct buf id = BUF_INIT, e2 = BUF_INIT;
	int r = st ? store_report_find_problem(st, t, &id, err) : PROBLEM_UNKNOWN;

	if (r == 0)
		json_array_append_new(probs, json_string(id.s));
	if (r != PROBLEM_UNKNOWN)
		goto out;
	problem_list_init(&l);
	if (problem_list_resolve(&l, ctx->root, t, &e2) == 0) {
		for (int i = 0; i < l.n; i++)
			json_array_append_new(probs, json_string(l.v[i].id));
		r = 0;
	} else if (!err->len) {
		kf_err(err, "%s", e2.s); /* no store: the suite's own message */
	}
	problem_list_release(&l);
out:
	buf_release(&id);
	buf_release(&e2);
	return r;
}

json_t *cli_problem_ids(struct cli_ctx *ctx, const struct cli_list *pl, struct buf *err)
{
	struct store st;
	int have = store_open(&st, ctx->db_path, STORE_READONLY, err) == 0, r = 0;
	json_t *probs = json_array();

	buf_reset(err);
	for (int i = 0; i < pl->n && r == 0; i++) {
		char *dup = xstrdup(pl->v[i]), *save = NULL;
		for (char *t = strtok_r(dup, ", ", &save); t && r == 0; t = strtok_r(NULL, ", ", &save)) {
			buf_reset(err);
			r = item_ids(ctx, have ? &st : NULL, t, probs, err);
		}
		free(dup);
	}
	if (have)
		store_close(&st);
	if (r < 0) {
		json_decref(probs);
		return NULL;
	}
	return probs;
}
