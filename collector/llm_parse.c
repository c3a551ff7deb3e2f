/* Model responses -> ideas and candidate files. Everything here reads
 * untrusted text: every length is bounded and nothing is assumed about
 * the layout beyond what the prompts ask for. */
#include "llm.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "core/json.h"
#include "core/xalloc.h"

/* ---- chat completion ---- */

static void add_content(json_t *texts, const json_t *content)
{
	struct buf b = BUF_INIT;
	size_t i;
	const json_t *part;

	if (json_is_string(content)) {
		json_array_append_new(texts, json_stringn(json_string_value(content),
							  json_string_length(content)));
		return;
	}
	/* Some servers send content as parts: [{"type":"text","text":...}]. */
	if (json_is_array(content))
		json_array_foreach(content, i, part) {
			const char *t = jget_str(part, "text", NULL);
			if (t)
				buf_adds(&b, t);
		}
	json_array_append_new(texts, json_stringn(b.s, b.len));
	buf_release(&b);
}

/* A token count as reported: an integer (or an integral real) in
 * 0..LLM_MAX_CALL_TOKENS; anything else (negative, fractional, absurd,
 * not a number) is unknown (-1) and flags the usage as invalid. Absent
 * is unknown too, without the flag. */
static long long usage_count(const json_t *o, const char *k, int *invalid)
{
	const json_t *v = json_object_get(o, k);
	double d;

	if (!v || json_is_null(v))
		return -1;
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i >= 0 && i <= LLM_MAX_CALL_TOKENS)
			return (long long)i;
	} else if (json_is_real(v)) {
		d = json_real_value(v);
		if (d >= 0 && d <= (double)LLM_MAX_CALL_TOKENS && d == (double)(long long)d)
			return (long long)d;
	}
	*invalid = 1;
	return -1;
}

json_t *llm_parse_completion(const char *body, size_t len, struct llm_usage *usage,
			     struct buf *err)
{
	struct buf e2 = BUF_INIT;
	json_t *o, *texts = NULL, *choices, *u, *ch;
	size_t i;

	usage->prompt_tokens = usage->completion_tokens = usage->reasoning_tokens = -1;
	usage->invalid = 0;
	o = json_parse_bounded(body, len, LLM_MAX_RESPONSE_CAP, &e2);
	if (!o) {
		kf_err(err, "response is not JSON: %s", e2.s);
		goto out;
	}
	if (!json_is_object(o)) {
		kf_err(err, "response is not a JSON object");
		goto out;
	}
	u = json_object_get(o, "usage");
	if (json_is_object(u)) {
		usage->prompt_tokens = usage_count(u, "prompt_tokens", &usage->invalid);
		usage->completion_tokens = usage_count(u, "completion_tokens", &usage->invalid);
		usage->reasoning_tokens = usage_count(json_object_get(u, "completion_tokens_details"),
						      "reasoning_tokens", &usage->invalid);
	}
	choices = json_object_get(o, "choices");
	if (!json_is_array(choices) || json_array_size(choices) == 0) {
		const char *m = jget_str(json_object_get(o, "error"), "message", NULL);
		if (m)
			kf_err(err, "response carries an error: %.300s", m);
		else
			kf_err(err, "response has no \"choices\"");
		goto out;
	}
	texts = json_array();
	json_array_foreach(choices, i, ch) {
		if (i >= 64)
			break;
		add_content(texts, json_object_get(json_object_get(ch, "message"), "content"));
	}
out:
	json_decref(o);
	buf_release(&e2);
	return texts;
}

/* ---- categories ---- */

/* A label the model wrote -> category bit: short names, titles, or their
 * first words ("memory access", "asynchronous", "occupancy"). */
static unsigned label_bit(const char *s, size_t n)
{
	static const struct { const char *prefix; unsigned bit; } pre[] = {
		{ "memory", CAT_MEMORY }, { "async", CAT_ASYNC }, { "latency", CAT_ASYNC },
		{ "precision", CAT_PRECISION }, { "data type", CAT_PRECISION },
		{ "data-type", CAT_PRECISION }, { "compute", CAT_COMPUTE },
		{ "instruction", CAT_COMPUTE }, { "parallel", CAT_PARALLELISM },
		{ "occupancy", CAT_PARALLELISM }, { "control", CAT_CONTROL },
		{ "loop", CAT_CONTROL },
	};
	char low[80];
	size_t j = 0;

	while (n && (isspace((unsigned char)*s) || *s == '*' || *s == '`' || *s == '"' ||
		     *s == '\''))
		s++, n--;
	while (n && (isspace((unsigned char)s[n - 1]) || strchr("*`\"'.", s[n - 1])))
		n--;
	if (n == 0 || n >= sizeof(low))
		return 0;
	for (; j < n; j++)
		low[j] = (char)tolower((unsigned char)s[j]);
	low[j] = '\0';
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (!strncmp(low, pre[i].prefix, strlen(pre[i].prefix)))
			return pre[i].bit;
	return (unsigned)idea_category_parse(low);
}

/* "a, b / c; d" -> bits; 0 when any part is not a category (then the
 * brackets were not a label). */
static unsigned label_list(const char *s, size_t n)
{
	unsigned bits = 0;
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		unsigned b;
		while (j < n && !strchr(",;/|", s[j]))
			j++;
		b = label_bit(s + i, j - i);
		if (!b)
			return 0;
		bits |= b;
		i = j + 1;
	}
	return bits;
}

static void set_idea(struct idea_list *out, const char *text, size_t n, unsigned bits)
{
	struct idea *id;
	while (n && isspace((unsigned char)*text))
		text++, n--;
	while (n && isspace((unsigned char)text[n - 1]))
		n--;
	if (n > LLM_MAX_IDEA_BYTES) {
		n = LLM_MAX_IDEA_BYTES;
		while (n && ((unsigned char)text[n] & 0xC0) == 0x80)
			n--; /* do not cut a UTF-8 sequence */
	}
	if (n == 0)
		return;
	for (int i = 0; i < out->n; i++)
		if (strlen(out->v[i].text) == n && !strncasecmp(out->v[i].text, text, n))
			return; /* the same idea twice */
	id = idea_list_add(out);
	id->text = xstrndup(text, n);
	id->categories = bits ? bits : idea_classify_keywords(id->text);
	id->category_method = xstrdup(bits ? "model" : "keyword");
}

/* ---- fences ---- */

struct fence {
	char info[16];        /* lowercased first word of the info string */
	const char *body;     /* content, between the fence lines */
	size_t len;
	const char *before;   /* prose since the previous fence */
	size_t before_len;
	int closed;
};

/* Finds up to max fenced blocks in text. */
static int find_fences(const char *text, struct fence *f, int max)
{
	const char *p = text, *prose = text;
	int n = 0;

	while (*p && n < max) {
		const char *line = p, *q = p, *eol = strchr(p, '\n');
		size_t ticks = 0;
		if (!eol)
			eol = p + strlen(p);
		while (q < eol && q - line < 3 && *q == ' ')
			q++;
		while (q + ticks < eol && q[ticks] == '`')
			ticks++;
		p = *eol ? eol + 1 : eol;
		if (ticks < 3)
			continue;
		struct fence *fe = &f[n];
		size_t k = 0;
		const char *info = q + ticks;
		memset(fe, 0, sizeof(*fe));
		while (info < eol && *info == ' ')
			info++;
		while (info + k < eol && k + 1 < sizeof(fe->info) && !isspace((unsigned char)info[k]) &&
		       info[k] != '{')
			fe->info[k] = (char)tolower((unsigned char)info[k]), k++;
		fe->before = prose;
		fe->before_len = (size_t)(line - prose);
		fe->body = p;
		/* the closing fence: a line of at least `ticks` backticks */
		while (*p) {
			const char *l2 = p, *e2 = strchr(p, '\n'), *r = p;
			size_t t2 = 0;
			if (!e2)
				e2 = p + strlen(p);
			while (r < e2 && r - l2 < 3 && *r == ' ')
				r++;
			while (r + t2 < e2 && r[t2] == '`')
				t2++;
			p = *e2 ? e2 + 1 : e2;
			if (t2 >= ticks) {
				const char *s = r + t2;
				while (s < e2 && isspace((unsigned char)*s))
					s++;
				if (s == e2) {
					fe->len = (size_t)(l2 - fe->body);
					fe->closed = 1;
					break;
				}
			}
		}
		if (!fe->closed)
			fe->len = strlen(fe->body);
		prose = p;
		n++;
	}
	return n;
}

static int is_code_info(const char *s)
{
	static const char *const ok[] = { "cuda", "cu", "c++", "cpp", "cuh", "c", "cc", "" };
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(s, ok[i]))
			return 1;
	return 0;
}

/* A ```launch fence, or a code fence holding only a launch block. */
static int is_launch_fence(const struct fence *fe)
{
	const char *b = fe->body;
	size_t n = fe->len;
	if (!strcmp(fe->info, "launch"))
		return 1;
	if (!is_code_info(fe->info))
		return 0;
	while (n && isspace((unsigned char)*b))
		b++, n--;
	return n >= 9 && !strncmp(b, "/*@launch", 9);
}

static void note_from(struct proposal *pr, const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n > 600) {
		n = 600;
		while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	if (n) {
		pr->note = xstrndup(s, n);
	}
}

static void bad(struct proposal_list *out, const char *msg)
{
	struct proposal *pr = proposal_list_add(out);
	pr->format_error = xstrdup(msg);
}

#define MAX_FENCES 64

int llm_parse_candidates(const char *text, int max, struct proposal_list *out)
{
	struct fence f[MAX_FENCES];
	int nf = find_fences(text, f, MAX_FENCES), good = 0, made = 0;
	int any_code = 0;

	if (max < 1)
		max = 1;
	for (int i = 0; i < nf && made < max; i++) {
		struct buf src = BUF_INIT;
		struct proposal *pr;
		int ci = i;
		/* a fence without a language counts only when it looks like CUDA */
		if (!is_code_info(f[i].info) ||
		    (!f[i].info[0] && !memmem(f[i].body, f[i].len, "__global__", 10)))
			continue;
		any_code = 1;
		made++;
		if (!f[i].closed) {
			bad(out, "the ```cuda block is not closed (was the response cut off?)");
			continue;
		}
		buf_add(&src, f[i].body, f[i].len);
		if (i + 1 < nf && is_launch_fence(&f[i + 1])) {
			const char *lb = f[i + 1].body;
			size_t ll = f[i + 1].len;
			while (ll && isspace((unsigned char)*lb))
				lb++, ll--;
			if (src.len && src.s[src.len - 1] != '\n')
				buf_addc(&src, '\n');
			if (ll >= 9 && !strncmp(lb, "/*@launch", 9)) {
				buf_add(&src, lb, ll);
			} else {
				buf_adds(&src, "\n/*@launch\n");
				buf_add(&src, lb, ll);
				if (src.s[src.len - 1] != '\n')
					buf_addc(&src, '\n');
				buf_adds(&src, "@*/\n");
			}
			i++;
		}
		if (src.len > LLM_MAX_CANDIDATE_BYTES) {
			bad(out, "the candidate is larger than 256 KiB");
		} else if (!strstr(src.s, "/*@launch")) {
			bad(out, "the ```cuda block has no launch block (/*@launch ... @*/) and no "
				 "```launch block follows it");
		} else {
			pr = proposal_list_add(out);
			pr->source = buf_detach(&src, NULL);
			note_from(pr, f[ci].before, f[ci].before_len);
			good++;
		}
		buf_release(&src);
	}
	if (!any_code)
		bad(out, "the response holds no ```cuda code block");
	return good;
}

/* ---- ideas ---- */

/* A list item start: optional spaces, optional "Idea", digits, then one
 * of . ) : and a space. Returns where the item text begins, or NULL.
 * *heading: the item is a Markdown heading or bold title ("### Idea 2:",
 * "**3. Tiling**"), whose text may run over blank lines. */
static const char *item_start(const char *l, const char *eol, int *heading)
{
	const char *p = l;
	*heading = 0;
	while (p < eol && (*p == ' ' || *p == '\t' || *p == '*' || *p == '#')) {
		if (*p == '*' || *p == '#')
			*heading = 1;
		p++;
	}
	if (eol - p > 4 && !strncasecmp(p, "idea", 4)) {
		p += 4;
		*heading = 1;
		while (p < eol && *p == ' ')
			p++;
	}
	if (p >= eol || !isdigit((unsigned char)*p))
		return NULL;
	while (p < eol && isdigit((unsigned char)*p))
		p++;
	if (p >= eol || !strchr(".):", *p))
		return NULL;
	p++;
	while (p < eol && *p == '*')
		p++;
	if (p < eol && *p != ' ' && *p != '\t')
		return NULL;
	return p;
}

/* Text of one item -> idea with its label removed. */
static void item_to_idea(struct idea_list *out, const char *s, size_t n)
{
	struct buf t = BUF_INIT;
	unsigned bits = 0;
	size_t i = 0;

	while (i < n && isspace((unsigned char)s[i]))
		i++;
	if (i < n && s[i] == '[') {
		const char *close = memchr(s + i, ']', n - i);
		if (close) {
			bits = label_list(s + i + 1, (size_t)(close - s - i - 1));
			if (bits)
				i = (size_t)(close - s) + 1;
		}
	}
	/* "Categories: a, b" anywhere in the item, to the end of its line */
	for (size_t j = i; j < n; j++) {
		static const char *const keys[] = { "categories:", "category:" };
		for (int k = 0; k < 2; k++) {
			size_t kl = strlen(keys[k]);
			if (j + kl <= n && !strncasecmp(s + j, keys[k], kl)) {
				size_t e = j + kl, st = j;
				unsigned b;
				while (e < n && s[e] != '\n')
					e++;
				b = label_list(s + j + kl, e - j - kl);
				if (b) {
					/* drop the label and markup around it */
					while (st > i && strchr("*_(- \t", s[st - 1]))
						st--;
					buf_add(&t, s + i, st - i);
					buf_add(&t, s + e, n - e);
					bits |= b;
					goto done;
				}
			}
		}
	}
	buf_add(&t, s + i, n - i);
done:
	/* join lines: a line break and the indentation around it become one space */
	{
		size_t w = 0;
		for (size_t j = 0; j < t.len; j++) {
			if (t.s[j] == '\n' || t.s[j] == '\t' || t.s[j] == '\r') {
				while (w && t.s[w - 1] == ' ')
					w--;
				while (j + 1 < t.len && isspace((unsigned char)t.s[j + 1]))
					j++;
				t.s[w++] = ' ';
			} else if (t.s[j] == '*' && j + 1 < t.len && t.s[j + 1] == '*') {
				j++; /* Markdown bold markers are noise in an idea */
			} else {
				t.s[w++] = t.s[j];
			}
		}
		buf_truncate(&t, w);
	}
	set_idea(out, t.s, t.len, bits);
	buf_release(&t);
}

static int ideas_from_json(const char *body, size_t len, int k, struct idea_list *out)
{
	json_t *v = json_loadb(body, len, 0, NULL), *arr, *e;
	size_t i;
	int before = out->n;

	arr = json_is_object(v) ? json_object_get(v, "ideas") : v;
	if (!json_is_array(arr)) {
		json_decref(v);
		return 0;
	}
	json_array_foreach(arr, i, e) {
		const char *t = json_is_string(e) ? json_string_value(e) : NULL;
		unsigned bits = 0;
		json_t *c;
		if (out->n >= k)
			break;
		if (!t)
			t = jget_str(e, "text", jget_str(e, "idea", jget_str(e, "description", NULL)));
		if (!t)
			continue;
		c = json_object_get(e, "categories");
		if (json_is_string(c))
			bits = label_list(json_string_value(c), json_string_length(c));
		else if (json_is_array(c)) {
			size_t j;
			json_t *x;
			json_array_foreach(c, j, x)
				if (json_is_string(x))
					bits |= label_bit(json_string_value(x), json_string_length(x));
		}
		set_idea(out, t, strlen(t), bits);
	}
	json_decref(v);
	return out->n - before;
}

int llm_parse_ideas(const char *text, int k, struct idea_list *out)
{
	struct fence f[MAX_FENCES];
	int nf = find_fences(text, f, MAX_FENCES), before = out->n, in_item = 0, heading = 0;
	const char *p = text;
	struct buf cur = BUF_INIT;

	if (k <= 0)
		k = 64;
	for (int i = 0; i < nf; i++)
		if (!strcmp(f[i].info, "json") && ideas_from_json(f[i].body, f[i].len, before + k, out))
			return out->n - before;
	/* a numbered list */
	while (*p && out->n - before < k) {
		const char *eol = strchr(p, '\n'), *st, *q = p;
		int hd = 0;
		if (!eol)
			eol = p + strlen(p);
		st = item_start(p, eol, &hd);
		while (q < eol && isspace((unsigned char)*q))
			q++;
		if (st || !strncmp(q, "```", 3) || (*q == '#' && heading)) {
			if (in_item)
				item_to_idea(out, cur.s, cur.len);
			buf_reset(&cur);
			in_item = st != NULL;
			heading = hd;
			if (st)
				buf_add(&cur, st, (size_t)(eol - st));
		} else if (in_item) {
			if (q == eol) {
				/* a blank line ends a plain item unless indented text follows */
				const char *nx = *eol ? eol + 1 : eol;
				if (!heading && !(*nx == ' ' || *nx == '\t')) {
					item_to_idea(out, cur.s, cur.len);
					in_item = 0;
				}
			} else {
				/* a heading's title and its text: "Title: text" */
				size_t e = cur.len;
				while (e && isspace((unsigned char)cur.s[e - 1]))
					e--;
				buf_truncate(&cur, e);
				while (cur.len >= 2 && !strcmp(cur.s + cur.len - 2, "**"))
					buf_truncate(&cur, cur.len - 2);
				if (heading && cur.len && !memchr(cur.s, '\n', cur.len) &&
				    !strchr(".:;!?", cur.s[cur.len - 1]))
					buf_addc(&cur, ':');
				buf_addc(&cur, '\n');
				buf_add(&cur, p, (size_t)(eol - p));
			}
		}
		p = *eol ? eol + 1 : eol;
	}
	if (in_item && out->n - before < k)
		item_to_idea(out, cur.s, cur.len);
	buf_release(&cur);
	return out->n - before;
}
