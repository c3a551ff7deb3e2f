#include "termsafe.h"
#include "utf8.h"

size_t text_control_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!n)
		return 0;
	if (p[0] < 0x20 || p[0] == 0x7F)
		return 1;
	if (n >= 2 && p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)
		return 2;                                  /* C1 */
	if (n >= 2 && p[0] == 0xD8 && p[1] == 0x9C)
		return 2;                                  /* U+061C */
	if (n >= 3 && p[0] == 0xE2 && p[1] == 0x80 &&
	    (p[2] == 0x8E || p[2] == 0x8F || (p[2] >= 0xAA && p[2] <= 0xAE)))
		return 3;                                  /* U+200E-F, U+202A-E */
	if (n >= 3 && p[0] == 0xE2 && p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9)
		return 3;                                  /* U+2066-9 */
	return 0;
}

static unsigned code_point(const unsigned char *p, size_t k)
{
	if (k == 2)
		return ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
	return ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
}

size_t termsafe_add(struct buf *out, const char *s, size_t n, unsigned flags)
{
	size_t i = 0, bad = 0;

	while (i < n) {
		const unsigned char c = (unsigned char)s[i];
		size_t k = text_control_len(s + i, n - i);
		if (k == 1 && (flags & TERMSAFE_KEEP_NL) && (c == '\n' || c == '\t')) {
			buf_addc(out, (char)c);
		} else if (k == 1) {
			if (c == '\n')
				buf_adds(out, "\\n");
			else if (c == '\t')
				buf_adds(out, "\\t");
			else if (c == '\r')
				buf_adds(out, "\\r");
			else
				buf_addf(out, "\\x%02x", c);
			bad++;
		} else if (k) {
			buf_addf(out, "\\u%04x", code_point((const unsigned char *)s + i, k));
			bad++;
		} else if (!(k = utf8_seq_len(s + i, n - i))) {
			buf_addf(out, "\\x%02x", c);
			bad++;
			k = 1;
		} else {
			buf_add(out, s + i, k);
		}
		i += k;
	}
	return bad;
}

void termsafe_buf(struct buf *b, unsigned flags)
{
	struct buf t = BUF_INIT;

	if (!b->len)
		return;
	termsafe_add(&t, b->s, b->len, flags);
	buf_release(b);
	*b = t;
}
