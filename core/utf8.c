/* UTF-8 well-formedness as in the Unicode standard, table 3-7. */
#include "utf8.h"
#include "xalloc.h"

#include <stdlib.h>

size_t utf8_seq_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len;
	unsigned lo = 0x80, hi = 0xBF;

	if (!n)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] < 0xC2 || p[0] > 0xF4)
		return 0;
	len = p[0] < 0xE0 ? 2 : p[0] < 0xF0 ? 3 : 4;
	if (p[0] == 0xE0)
		lo = 0xA0;                 /* overlong */
	else if (p[0] == 0xED)
		hi = 0x9F;                 /* surrogates */
	else if (p[0] == 0xF0)
		lo = 0x90;                 /* overlong */
	else if (p[0] == 0xF4)
		hi = 0x8F;                 /* past U+10FFFF */
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return len;
}

size_t utf8_first_bad(const char *s, size_t n)
{
	size_t i = 0, k;

	while (i < n) {
		if (!s[i] || !(k = utf8_seq_len(s + i, n - i)))
			return i;
		i += k;
	}
	return n;
}

size_t utf8_add_clean(struct buf *out, const char *s, size_t n)
{
	size_t i = 0, bad = 0;

	while (i < n) {
		size_t good = utf8_first_bad(s + i, n - i);
		buf_add(out, s + i, good);
		i += good;
		if (i < n) {
			buf_adds(out, "\xEF\xBF\xBD");
			bad++;
			i++;
		}
	}
	return bad;
}

json_t *json_utf8(const char *s, size_t n)
{
	struct buf b = BUF_INIT;
	json_t *j;

	if (!s)
		s = "";
	utf8_add_clean(&b, s, n);
	j = jnew(json_stringn_nocheck(b.s, b.len));
	buf_release(&b);
	return j;
}
