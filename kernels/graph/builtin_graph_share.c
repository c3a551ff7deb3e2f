/* Tensor-core kernels shared between nodes. The GEMM and conv emitters
 * take the sizes as kernel arguments, so two convs of one geometry and
 * epilogue write the same text but for the kernel's name: the later text
 * is dropped and its launches call the earlier kernels. Deep nets then fit
 * every such node on tensor cores within the source limit. */
#include "kernels/graph/builtin_graph.h"

#include <string.h>

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* s[i] starts the identifier-prefix name (not inside another identifier). */
static int name_at(const char *s, size_t i, const char *name, size_t n)
{
	return (i == 0 || !ident_char(s[i - 1])) && !strncmp(s + i, name, n);
}

/* The text with name as \3 and comments as \4: what must be equal. */
static void normalize(struct buf *o, const char *s, size_t len, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
			const char *e = strstr(s + i + 2, "*/");
			if (e && (size_t)(e - s) < len) {
				buf_addc(o, '\4');
				i = (size_t)(e - s) + 1;
				continue;
			}
		}
		if (name_at(s, i, name, n)) {
			buf_addc(o, '\3');
			i += n - 1;
			continue;
		}
		buf_addc(o, s[i]);
	}
}

int gr_share_emitted(struct gr_plan *p, size_t src0, size_t from, const char *name, struct buf *err)
{
	struct buf key = BUF_INIT, l = BUF_INIT;
	const char *hit = NULL, *s;
	size_t n = strlen(name);

	if (!p->share || p->src.len <= src0)
		return 0;
	normalize(&key, p->src.s + src0, p->src.len - src0, name);
	/* records: NAME \1 KEY \2 */
	for (s = p->shared.s; s && *s; s = strchr(s, '\2') + 1) {
		const char *k = strchr(s, '\1');
		if (!strncmp(k + 1, key.s, key.len) && k[1 + key.len] == '\2') {
			hit = s;
			break;
		}
	}
	if (!hit) {
		buf_addf(&p->shared, "%s\1", name);
		buf_add(&p->shared, key.s, key.len);
		buf_addc(&p->shared, '\2');
		buf_release(&key);
		return 0;
	}
	buf_release(&key);
	/* drop the text; the launches from `from` call the earlier kernels */
	p->src.len = src0;
	p->src.s[src0] = '\0';
	buf_add(&l, p->launch.s, from);
	for (size_t i = from; i < p->launch.len; i++) {
		if (name_at(p->launch.s, i, name, n)) {
			size_t j = i + n;
			while (j < p->launch.len && ident_char(p->launch.s[j]))
				j++;
			if (!strncmp(p->launch.s + j, "<<<", 3)) {
				buf_add(&l, hit, (size_t)(strchr(hit, '\1') - hit));
				i += n - 1;
				continue;
			}
		}
		buf_addc(&l, p->launch.s[i]);
	}
	buf_release(&p->launch);
	p->launch = l;
	(void)err;
	return 0;
}
