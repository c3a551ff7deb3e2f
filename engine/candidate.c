/* Candidate files: canonical form, content hash, split into code and
 * launch block. The include scan lives in srcscan.c. */
#include "candidate.h"

#include <stdlib.h>
#include <string.h>
#include "core/sha256.h"
#include "core/utf8.h"
#include "core/xalloc.h"

void candidate_init(struct candidate *c)
{
	memset(c, 0, sizeof(*c));
}

void candidate_release(struct candidate *c)
{
	free(c->text);
	free(c->device_src);
	free(c->launch_text);
	candidate_init(c);
}

void candidate_canonical(const char *text, size_t len, struct buf *out)
{
	size_t i = 0;

	buf_reset(out);
	while (i < len) {
		size_t e = i, end;
		/* A lone CR ends a line too (as in C preprocessors): a directive
		 * after it must be seen as one by the include scan. */
		while (e < len && text[e] != '\n' && !(text[e] == '\r' && (e + 1 >= len ||
									 text[e + 1] != '\n')))
			e++;
		end = e;
		/* CR of a CRLF and trailing blanks go. */
		while (end > i && (text[end - 1] == '\r' || text[end - 1] == ' ' ||
				   text[end - 1] == '\t'))
			end--;
		buf_add(out, text + i, end - i);
		buf_addc(out, '\n');
		i = e + 1;
	}
	while (out->len >= 2 && out->s[out->len - 1] == '\n' && out->s[out->len - 2] == '\n')
		buf_truncate(out, out->len - 1);
	if (out->len == 1)
		buf_truncate(out, 0);
}

void candidate_hash(const char *text, size_t len, char hex[65])
{
	struct buf b = BUF_INIT;
	candidate_canonical(text, len, &b);
	sha256_hex(b.s, b.len, hex);
	buf_release(&b);
}

/* The line's content without leading blanks equals marker. */
static int line_is(const char *l, size_t n, const char *marker)
{
	while (n && (*l == ' ' || *l == '\t')) {
		l++;
		n--;
	}
	return n == strlen(marker) && !memcmp(l, marker, n);
}

static int line_blank_or_comment(const char *l, size_t n)
{
	while (n && (*l == ' ' || *l == '\t')) {
		l++;
		n--;
	}
	return n == 0 || (n >= 2 && l[0] == '/' && l[1] == '/');
}

/* 1-based line and byte column of offset off. */
static void text_pos(const char *t, size_t off, int *line, int *col)
{
	size_t bol = 0;
	*line = 1;
	for (size_t j = 0; j < off; j++)
		if (t[j] == '\n') {
			(*line)++;
			bol = j + 1;
		}
	*col = (int)(off - bol) + 1;
}

int candidate_parse(struct candidate *c, const char *text, size_t len, struct buf *err)
{
	struct buf canon = BUF_INIT;
	int line = 1, open_line = 0, close_line = 0, ret = -1;
	size_t open_off = 0, body_off = 0, body_end = 0, i;

	candidate_release(c);
	if (len > CANDIDATE_MAX_BYTES)
		return kf_err(err, "1:1: candidate is %zu bytes, over the limit of %d", len,
			      CANDIDATE_MAX_BYTES);
	candidate_canonical(text, len, &canon);
	c->len = canon.len;
	c->text = buf_detach(&canon, NULL);
	/* Text, UTF-8: the store, the prompts and the dataset carry it as JSON. */
	i = utf8_first_bad(c->text, c->len);
	if (i < c->len) {
		int l, col;
		text_pos(c->text, i, &l, &col);
		if (!c->text[i])
			kf_err(err, "%d:%d: NUL byte in the candidate", l, col);
		else
			kf_err(err, "%d:%d: byte 0x%02X is not valid UTF-8 (a candidate is UTF-8 text)",
			       l, col, (unsigned char)c->text[i]);
		goto out;
	}

	for (i = 0; i < c->len; line++) {
		size_t e = i;
		while (e < c->len && c->text[e] != '\n')
			e++;
		if (e - i > CANDIDATE_MAX_LINE) {
			kf_err(err, "%d:1: line is %zu bytes long, over the limit of %d", line, e - i,
			       CANDIDATE_MAX_LINE);
			goto out;
		}
		if (line_is(c->text + i, e - i, "/*@launch")) {
			if (open_line) {
				kf_err(err, "%d:1: a second launch block (the first opens on line %d); "
				       "a candidate has exactly one", line, open_line);
				goto out;
			}
			open_line = line;
			open_off = i;
			body_off = e < c->len ? e + 1 : e;
		} else if (open_line && !close_line && line_is(c->text + i, e - i, "@*/")) {
			close_line = line;
			body_end = i;
		} else if (open_line && !close_line) {
			const char *star = memmem(c->text + i, e - i, "*/", 2);
			if (star) {
				kf_err(err, "%d:%d: `*/` inside the launch block (it must end with a "
				       "line `@*/`)", line, (int)(star - (c->text + i)) + 1);
				goto out;
			}
		} else if (close_line && !line_blank_or_comment(c->text + i, e - i)) {
			kf_err(err, "%d:1: code after the launch block (the launch block closes on "
			       "line %d and must come after all the code)", line, close_line);
			goto out;
		}
		i = e + 1;
	}
	if (!open_line) {
		kf_err(err, "%d:1: missing launch block: expected a line `/*@launch`, the launch "
		       "statements, and a line `@*/` after the code", line);
		goto out;
	}
	if (!close_line) {
		kf_err(err, "%d:1: the launch block opened on line %d is not closed by a line `@*/`",
		       line, open_line);
		goto out;
	}
	c->device_src = xstrndup(c->text, open_off);
	c->device_len = open_off;
	c->launch_text = xstrndup(c->text + body_off, body_end - body_off);
	c->launch_line = open_line + 1;
	if (candidate_scan_source(c->device_src, c->device_len, 1, err) < 0)
		goto out;
	ret = 0;
out:
	if (ret < 0) {
		free(c->device_src);
		free(c->launch_text);
		c->device_src = NULL;
		c->launch_text = strdup("");
		c->device_len = 0;
	}
	buf_release(&canon);
	return ret;
}

void candidate_assemble(const char *code, const char *launch, struct buf *out)
{
	struct buf l = BUF_INIT;
	int has_markers;

	buf_reset(out);
	buf_adds(out, code);
	if (out->len && out->s[out->len - 1] != '\n')
		buf_addc(out, '\n');
	buf_adds(&l, launch);
	buf_trim(&l);
	has_markers = strstr(l.s, "/*@launch") != NULL;
	buf_addc(out, '\n');
	if (!has_markers)
		buf_adds(out, "/*@launch\n");
	buf_add(out, l.s, l.len);
	buf_addc(out, '\n');
	if (!has_markers)
		buf_adds(out, "@*/\n");
	buf_release(&l);
}
