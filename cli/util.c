#include "cli.h"
#include "collector/problem_list.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "core/termsafe.h"

int cli_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int *prev, *cur, d;

	if (la > 64 || lb > 64)
		return 99;
	prev = calloc(lb + 1, sizeof(int));
	cur = calloc(lb + 1, sizeof(int));
	if (!prev || !cur)
		abort();
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

json_t *cli_problem_ids(struct cli_ctx *ctx, const struct cli_list *pl, struct buf *err)
{
	struct problem_list l;
	struct buf all = BUF_INIT, e2 = BUF_INIT;
	json_t *probs = json_array();
	int ids_only = 1;

	for (int i = 0; i < pl->n; i++) {
		char *dup = strdup(pl->v[i]), *save = NULL;
		if (!dup)
			abort();
		for (char *t = strtok_r(dup, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
			const char *sl = strchr(t, '/');
			buf_addf(&all, "%s%s", all.len ? "," : "", t);
			json_array_append_new(probs, json_string(t));
			if (!sl || !strchr(sl, '_'))
				ids_only = 0;
		}
		free(dup);
	}
	problem_list_init(&l);
	if (problem_list_resolve(&l, ctx->root, all.s, &e2) == 0) {
		json_array_clear(probs);
		for (int i = 0; i < l.n; i++)
			json_array_append_new(probs, json_string(l.v[i].id));
	} else if (!ids_only) {
		kf_err(err, "%s", e2.s);
		json_decref(probs);
		probs = NULL;
	}
	problem_list_release(&l);
	buf_release(&all);
	buf_release(&e2);
	return probs;
}
