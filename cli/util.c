#include "cli.h"

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
