/* Keeping the API key out of everything a server sends back. A server may
 * echo the key in any encoding that decodes to it later: JSON escapes
 * ("\u0073k-..."; jansson decodes them into idea texts, kernels and the
 * next prompts), URL encoding ("%73k-..."), or base64 (of the key alone
 * or inside a longer text, at any of the three byte alignments). Each
 * form is replaced with "[REDACTED]", on the raw body before anything
 * stores or parses it and again on the decoded texts. */
#include "llm.h"

#include <jansson.h>
#include <string.h>

#define REDACTED "[REDACTED]"
/* Base64 forms are matched only for keys this long: a short key's base64
 * would be a few letters that ordinary text holds by chance. */
#define B64_MIN_KEY 12

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int hex_byte(const char *p, int digits)
{
	int v = 0;
	for (int i = 0; i < digits; i++) {
		int h = hexval(p[i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* End of the key at s+i written with any mix of literal bytes, JSON
 * escapes (\uXXXX in either case, \/ \" \\) and %XX; 0 when it is not. */
static size_t match_escaped(const char *s, size_t n, size_t i, const char *key, size_t kl)
{
	for (size_t k = 0; k < kl; k++) {
		unsigned char c = (unsigned char)key[k];
		if (i < n && (unsigned char)s[i] == c)
			i++;
		else if (i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u' && hex_byte(s + i + 2, 4) == c)
			i += 6;
		else if (i + 2 <= n && s[i] == '\\' && s[i + 1] == (char)c && strchr("/\"\\", c))
			i += 2;
		else if (i + 3 <= n && s[i] == '%' && hex_byte(s + i + 1, 2) == c)
			i += 3;
		else
			return 0;
	}
	return i;
}

/* The base64 characters that depend on the key's bits only, for the key
 * starting at byte `align` (0-2) of a 3-byte group; url: '-' '_' for
 * '+' '/'. */
static void b64_form(const char *key, size_t kl, int align, int url, struct buf *out)
{
	static const char std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t nbits = 8 * (size_t)align + 8 * kl;
	struct buf in = BUF_INIT;

	buf_reset(out);
	for (int i = 0; i < align; i++)
		buf_addc(&in, '\0');
	buf_add(&in, key, kl);
	buf_add(&in, "\0\0", 2);
	for (size_t j = 0; 6 * j + 6 <= nbits; j++) {
		size_t bit = 6 * j;
		unsigned v = 0;
		char ch;
		if (bit < 8 * (size_t)align)
			continue;
		for (int b = 0; b < 6; b++, bit++)
			v = (v << 1) | (((unsigned char)in.s[bit / 8] >> (7 - bit % 8)) & 1u);
		ch = std[v];
		if (url && ch == '+')
			ch = '-';
		else if (url && ch == '/')
			ch = '_';
		buf_addc(out, ch);
	}
	buf_release(&in);
}

size_t llm_redact(struct buf *b, const char *key)
{
	struct buf forms[6], t = BUF_INIT;
	size_t kl, i = 0, nf = 0, hits = 0;

	if (!key || (kl = strlen(key)) < 4 || !b->len)
		return 0;
	if (kl >= B64_MIN_KEY)
		for (int a = 0; a < 3; a++)
			for (int url = 0; url < 2; url++) {
				buf_init(&forms[nf]);
				b64_form(key, kl, a, url, &forms[nf++]);
			}
	size_t run = 0; /* start of the bytes not yet copied to t */
	while (i < b->len) {
		size_t end = match_escaped(b->s, b->len, i, key, kl);
		for (size_t f = 0; !end && f < nf; f++)
			if (forms[f].len && b->s[i] == forms[f].s[0] && b->len - i >= forms[f].len &&
			    !memcmp(b->s + i, forms[f].s, forms[f].len))
				end = i + forms[f].len;
		if (end) {
			buf_add(&t, b->s + run, i - run);
			buf_adds(&t, REDACTED);
			hits++;
			i = run = end;
		} else {
			i++;
		}
	}
	buf_add(&t, b->s + run, b->len - run);
	for (size_t f = 0; f < nf; f++) {
		explicit_bzero(forms[f].s, forms[f].len);
		buf_release(&forms[f]);
	}
	if (hits) {
		explicit_bzero(b->s, b->len);
		buf_release(b);
		*b = t;
	} else {
		buf_release(&t);
	}
	return hits;
}

void llm_redact_texts(json_t *texts, const char *key)
{
	size_t i;
	json_t *v;

	json_array_foreach(texts, i, v) {
		struct buf b = BUF_INIT;
		if (!json_is_string(v))
			continue;
		buf_add(&b, json_string_value(v), json_string_length(v));
		if (llm_redact(&b, key))
			json_string_setn_nocheck(v, b.s, b.len);
		explicit_bzero(b.s, b.len);
		buf_release(&b);
	}
}
