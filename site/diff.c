#include "diff.h"
#include "html.h"

#include <git2.h>
#include <pthread.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void git_init(void)
{
	git_libgit2_init();   /* kept for the process: diffs are made until exit */
}

static int make_patch(git_patch **p, const char *a, size_t al, const char *b, size_t bl,
		      struct buf *err)
{
	git_diff_options o = GIT_DIFF_OPTIONS_INIT;

	pthread_once(&once, git_init);
	o.context_lines = 3;
	o.flags = GIT_DIFF_FORCE_TEXT;   /* a NUL in a source is still text */
	if (git_patch_from_buffers(p, a, al, "a", b, bl, "b", &o) < 0) {
		const git_error *e = git_error_last();
		return kf_err(err, "diff: %s", e && e->message ? e->message : "libgit2 failed");
	}
	return 0;
}

/* "@@ -a,b +c,d @@" as diff -u writes it (",1" left out). */
static void hunk_header(struct buf *out, const git_diff_hunk *h)
{
	buf_addf(out, "@@ -%d", h->old_start);
	if (h->old_lines != 1)
		buf_addf(out, ",%d", h->old_lines);
	buf_addf(out, " +%d", h->new_start);
	if (h->new_lines != 1)
		buf_addf(out, ",%d", h->new_lines);
	buf_adds(out, " @@");
}

/* Calls line(ctx, origin, text, len) for each line of the diff: origin
 * '@' for a hunk header (text in hb), ' ', '+', '-', or '\\' (no newline
 * at the end); text without its newline. */
typedef void (*line_fn)(void *ctx, char origin, const char *text, size_t len);

static void walk(git_patch *p, line_fn fn, void *ctx)
{
	struct buf hb = BUF_INIT;
	size_t nh = git_patch_num_hunks(p);
	for (size_t h = 0; h < nh; h++) {
		const git_diff_hunk *hk;
		size_t nl;
		if (git_patch_get_hunk(&hk, &nl, p, h) < 0)
			continue;
		buf_reset(&hb);
		hunk_header(&hb, hk);
		fn(ctx, '@', hb.s, hb.len);
		for (size_t l = 0; l < nl; l++) {
			const git_diff_line *ln;
			if (git_patch_get_line_in_hunk(&ln, p, h, l) < 0)
				continue;
			char o = ln->origin;
			if (o == GIT_DIFF_LINE_CONTEXT_EOFNL || o == GIT_DIFF_LINE_ADD_EOFNL ||
			    o == GIT_DIFF_LINE_DEL_EOFNL) {
				fn(ctx, '\\', "No newline at end of file", 25);
				continue;
			}
			if (o != ' ' && o != '+' && o != '-')
				continue;
			size_t n = ln->content_len;
			if (n && ln->content[n - 1] == '\n')
				n--;
			fn(ctx, o, ln->content, n);
		}
	}
	buf_release(&hb);
}

static void text_line(void *ctx, char o, const char *t, size_t n)
{
	struct buf *out = ctx;

	if (o != '@')
		buf_addc(out, o == '\\' ? '\\' : o);
	if (o == '\\')
		buf_addc(out, ' ');
	buf_add(out, t, n);
	buf_addc(out, '\n');
}

int site_diff_text(struct buf *out, const char *a, size_t al, const char *b, size_t bl,
		   struct buf *err)
{
	git_patch *p = NULL;

	if (make_patch(&p, a, al, b, bl, err) < 0)
		return -1;
	walk(p, text_line, out);
	git_patch_free(p);
	return 0;
}

struct html_ctx {
	struct buf *out;
	struct site_diff_stat *st;
	long max;
	int counting;
};

static void html_line(void *vctx, char o, const char *t, size_t n)
{
	struct html_ctx *c = vctx;
	struct site_diff_stat *st = c->st;

	if (c->counting) {
		st->lines++;
		st->added += o == '+';
		st->removed += o == '-';
		return;
	}
	if (st->shown >= c->max)
		return;
	st->shown++;
	switch (o) {
	case '@': buf_adds(c->out, "<span class=\"dh\">"); break;
	case '+': buf_adds(c->out, "<ins class=\"da\">+"); break;
	case '-': buf_adds(c->out, "<del class=\"dd\">-"); break;
	case '\\': buf_adds(c->out, "<span class=\"dn\">\\ "); break;
	default: buf_adds(c->out, "<span class=\"dc\"> "); break;
	}
	html_escape(c->out, t, n);
	buf_adds(c->out, o == '+' ? "</ins>" : o == '-' ? "</del>" : "</span>");
}

int site_diff_html(struct buf *out, const char *a, size_t al, const char *b, size_t bl,
		   long max_lines, struct site_diff_stat *st, struct buf *err)
{
	struct html_ctx c = { out, st, max_lines, 1 };
	git_patch *p = NULL;

	memset(st, 0, sizeof(*st));
	if (make_patch(&p, a, al, b, bl, err) < 0)
		return -1;
	/* count first, so the note can say how many lines were left out */
	walk(p, html_line, &c);
	c.counting = 0;
	if (st->lines) {
		buf_adds(out, "<pre class=\"diff\"><code>");
		walk(p, html_line, &c);
	}
	git_patch_free(p);
	if (!st->lines)
		return 0;
	buf_adds(out, "</code></pre>");
	if (st->lines > st->shown)
		buf_addf(out, "<p class=\"note diff-more\">… %ld more lines not shown</p>",
			 st->lines - st->shown);
	return 0;
}
