/* Kernel parameter lists, parsed from the candidate's code: enough of C++
 * to find `extern "C" __global__` functions and classify each parameter
 * (pointer to what element type, or which scalar type). */
#include "launch.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum tk { TK_EOF, TK_IDENT, TK_NUM, TK_STR, TK_PUNCT };

struct tok {
	enum tk kind;
	const char *s;
	size_t n;
	int line, col;
};

struct toks {
	struct tok *t;
	int n, alloc;
};

static void push(struct toks *ts, enum tk k, const char *s, size_t n, int line, int col)
{
	if (ts->n == ts->alloc) {
		ts->alloc = ts->alloc ? ts->alloc * 2 : 256;
		ts->t = xrealloc(ts->t, (size_t)ts->alloc * sizeof(*ts->t));
	}
	ts->t[ts->n++] = (struct tok){ k, s, n, line, col };
}

static int is_id(int c)
{
	return isalnum(c) || c == '_';
}

/* Tokens of the code, with comments and preprocessor lines dropped. */
static void lex(const char *s, struct toks *ts)
{
	int line = 1, col = 1, bol = 1;
	size_t i = 0, n = strlen(s);
#define ADV(k)                                          \
	do {                                            \
		for (size_t _k = 0; _k < (k) && i < n; _k++, i++) { \
			if (s[i] == '\n') {             \
				line++;                 \
				col = 1;                \
			} else {                        \
				col++;                  \
			}                               \
		}                                       \
	} while (0)
	while (i < n) {
		char c = s[i];
		if (c == '\n') {
			bol = 1;
			ADV(1);
		} else if (isspace((unsigned char)c)) {
			ADV(1);
		} else if (c == '/' && s[i + 1] == '/') {
			while (i < n && s[i] != '\n')
				ADV(1);
		} else if (c == '/' && s[i + 1] == '*') {
			ADV(2);
			while (i < n && !(s[i] == '*' && s[i + 1] == '/'))
				ADV(1);
			ADV(2);
		} else if (bol && c == '#') {
			while (i < n && s[i] != '\n')
				ADV(s[i] == '\\' && s[i + 1] == '\n' ? 2 : 1);
		} else if (c == '"' || c == '\'') {
			size_t st = i;
			int l0 = line, c0 = col;
			ADV(1);
			while (i < n && s[i] != c && s[i] != '\n')
				ADV(s[i] == '\\' && s[i + 1] != '\n' ? 2 : 1);
			if (i < n && s[i] == c)
				ADV(1);
			push(ts, TK_STR, s + st, i - st, l0, c0);
			bol = 0;
		} else if (is_id((unsigned char)c)) {
			size_t st = i;
			int l0 = line, c0 = col;
			enum tk k = isdigit((unsigned char)c) ? TK_NUM : TK_IDENT;
			while (i < n && (is_id((unsigned char)s[i]) ||
					 (k == TK_NUM && (s[i] == '.' || (s[i] == '\'' &&
									  is_id((unsigned char)s[i + 1]))))))
				ADV(1);
			push(ts, k, s + st, i - st, l0, c0);
			bol = 0;
		} else {
			int l0 = line, c0 = col;
			size_t w = (c == ':' && s[i + 1] == ':') ? 2 : 1;
			push(ts, TK_PUNCT, s + i, w, l0, c0);
			ADV(w);
			bol = 0;
		}
	}
	push(ts, TK_EOF, s + n, 0, line, col);
#undef ADV
}

static int is(const struct tok *t, const char *w)
{
	return t->n == strlen(w) && !memcmp(t->s, w, t->n);
}

void kernel_sigs_init(struct kernel_sigs *s)
{
	s->k = NULL;
	s->n = 0;
}

static void sig_free(struct kernel_sig *k)
{
	for (int j = 0; j < k->n_params; j++) {
		free(k->params[j].type_text);
		free(k->params[j].name);
	}
	free(k->params);
	free(k->name);
	memset(k, 0, sizeof(*k));
}

void kernel_sigs_release(struct kernel_sigs *s)
{
	for (int i = 0; i < s->n; i++)
		sig_free(&s->k[i]);
	free(s->k);
	kernel_sigs_init(s);
}

const struct kernel_sig *kernel_sigs_find(const struct kernel_sigs *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->k[i].name, name))
			return &s->k[i];
	return NULL;
}

struct tname {
	const char *w;
	enum sig_base b;
	int vec;
};
static const struct tname typedefs[] = {
	{ "float", SIG_FLOAT, 1 }, { "double", SIG_DOUBLE, 1 }, { "half", SIG_HALF, 1 },
	{ "__half", SIG_HALF, 1 }, { "__nv_bfloat16", SIG_BF16, 1 },
	{ "nv_bfloat16", SIG_BF16, 1 }, { "bool", SIG_BOOL, 1 }, { "void", SIG_VOID, 1 },
	{ "size_t", SIG_ULONG, 1 }, { "ptrdiff_t", SIG_LONG, 1 }, { "ssize_t", SIG_LONG, 1 },
	{ "int64_t", SIG_LLONG, 1 }, { "uint64_t", SIG_ULLONG, 1 }, { "int32_t", SIG_INT, 1 },
	{ "uint32_t", SIG_UINT, 1 }, { "int16_t", SIG_SHORT, 1 }, { "uint16_t", SIG_USHORT, 1 },
	{ "int8_t", SIG_SCHAR, 1 }, { "uint8_t", SIG_UCHAR, 1 }, { "float2", SIG_FLOAT, 2 },
	{ "float4", SIG_FLOAT, 4 }, { "double2", SIG_DOUBLE, 2 }, { "half2", SIG_HALF, 2 },
	{ "__half2", SIG_HALF, 2 }, { "__nv_bfloat162", SIG_BF16, 2 },
	{ "nv_bfloat162", SIG_BF16, 2 }, { "int2", SIG_INT, 2 }, { "int4", SIG_INT, 4 },
	{ "uint2", SIG_UINT, 2 }, { "uint4", SIG_UINT, 4 }, { "longlong2", SIG_LLONG, 2 },
	{ "char4", SIG_SCHAR, 4 }, { "uchar4", SIG_UCHAR, 4 },
	{ NULL, SIG_OTHER, 0 },
};
static const char *const builtin_words[] = { "unsigned", "signed", "long", "short", "char",
					      "int", NULL };
static const char *const skip_words[] = {
	"const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "class",
	"__grid_constant__", "typename", "register", NULL,
};

static int word_in(const struct tok *t, const char *const *l)
{
	for (; *l; l++)
		if (is(t, *l))
			return 1;
	return 0;
}

static int is_type_word(const struct tok *t)
{
	for (const struct tname *d = typedefs; d->w; d++)
		if (is(t, d->w))
			return 1;
	return word_in(t, builtin_words);
}

/* Classifies one parameter: tokens [a, b). */
static int param(const struct tok *t, int a, int b, struct sig_param *sp, struct buf *err)
{
	const struct tok *w[32];
	int nw = 0, n_long = 0, n_uns = 0, n_short = 0, n_char = 0, n_int = 0, n_signed = 0;
	struct buf text = BUF_INIT;

	memset(sp, 0, sizeof(*sp));
	sp->vec = 1;
	for (int i = a; i < b; i++) {
		if (t[i].kind == TK_PUNCT && is(&t[i], "=")) {
			b = i;
			break;
		}
		if (text.len && t[i].kind == TK_IDENT &&
		    (t[i - 1].kind == TK_IDENT || is(&t[i - 1], "*") || is(&t[i - 1], "&")))
			buf_addc(&text, ' ');
		buf_add(&text, t[i].s, t[i].n);
	}
	for (int i = a; i < b; i++) {
		const struct tok *k = &t[i];
		if (k->kind == TK_IDENT && (is(k, "__attribute__") || is(k, "alignas") ||
					    is(k, "__align__"))) {
			int d = 0;
			for (i++; i < b; i++) {
				if (is(&t[i], "("))
					d++;
				else if (is(&t[i], ")") && --d <= 0)
					break;
			}
		} else if (is(k, "[") && i + 1 < b && is(&t[i + 1], "[")) {
			while (i < b && !(is(&t[i], "]") && i + 1 < b && is(&t[i + 1], "]")))
				i++;
			i++;
		} else if (is(k, "[")) {
			sp->is_pointer++;
			while (i < b && !is(&t[i], "]"))
				i++;
		} else if (k->kind == TK_IDENT && i + 1 < b && is(&t[i + 1], "::")) {
			i++;    /* std::, cuda::std:: qualifiers */
		} else if (is(k, "::")) {
			continue;
		} else if (is(k, "const")) {
			sp->is_const = 1;
		} else if (k->kind == TK_IDENT && word_in(k, skip_words)) {
			continue;
		} else if (is(k, "*")) {
			sp->is_pointer++;
		} else if (is(k, "&")) {
			sp->is_ref = 1;
		} else if (k->kind == TK_IDENT && nw < 32) {
			w[nw++] = k;
		} else if (k->kind != TK_IDENT) {
			buf_release(&text);
			return kf_err(err, "%d:%d: cannot read this kernel parameter (`%.*s`)", k->line,
				      k->col, (int)k->n, k->s);
		}
	}
	sp->type_text = buf_detach(&text, NULL);
	if (nw == 0) {
		sp->name = xstrdup("");
		sp->base = SIG_OTHER;
		return 0;
	}
	if (nw >= 2 && !is_type_word(w[nw - 1])) {
		sp->name = xstrndup(w[nw - 1]->s, w[nw - 1]->n);
		nw--;
	} else {
		sp->name = xstrdup("");
	}
	sp->base = SIG_OTHER;
	if (nw == 1) {
		for (const struct tname *d = typedefs; d->w; d++)
			if (is(w[0], d->w)) {
				sp->base = d->b;
				sp->vec = d->vec;
				return 0;
			}
	}
	for (int i = 0; i < nw; i++) {
		if (is(w[i], "long"))
			n_long++;
		else if (is(w[i], "unsigned"))
			n_uns++;
		else if (is(w[i], "signed"))
			n_signed++;
		else if (is(w[i], "short"))
			n_short++;
		else if (is(w[i], "char"))
			n_char++;
		else if (is(w[i], "int"))
			n_int++;
		else
			return 0;   /* a type kforge does not know: SIG_OTHER */
	}
	if (n_uns > 1 || n_signed > 1 || n_int > 1 || n_long > 2 || (n_uns && n_signed))
		return 0;
	if (n_char)
		sp->base = n_char == 1 && !n_int && !n_long && !n_short
			   ? (n_uns ? SIG_UCHAR : n_signed ? SIG_SCHAR : SIG_CHAR) : SIG_OTHER;
	else if (n_short)
		sp->base = n_uns ? SIG_USHORT : SIG_SHORT;
	else if (n_long == 2)
		sp->base = n_uns ? SIG_ULLONG : SIG_LLONG;
	else if (n_long == 1)
		sp->base = n_uns ? SIG_ULONG : SIG_LONG;
	else
		sp->base = n_uns ? SIG_UINT : SIG_INT;
	return 0;
}

static const char *const attr_calls[] = { "__launch_bounds__", "__maxnreg__", "__cluster_dims__",
					  "__attribute__", "__declspec", "alignas", NULL };

/* t[g] is `__global__`; reads the name and parameters. 1 when found. */
static int kernel_at(const struct tok *t, int n, int g, struct kernel_sig *k, int *end,
		     struct buf *err)
{
	int i = g + 1, d, a, bounds = 0;
	while (i < n && t[i].kind != TK_EOF) {
		if (t[i].kind == TK_IDENT && i + 1 < n && is(&t[i + 1], "(")) {
			if (!word_in(&t[i], attr_calls))
				break;
			if (is(&t[i], "__launch_bounds__") && i + 3 < n && t[i + 2].kind == TK_NUM &&
			    (is(&t[i + 3], ")") || is(&t[i + 3], ","))) {
				long v = strtol(t[i + 2].s, NULL, 0);
				bounds = v > 0 && v <= 65536 ? (int)v : 0;
			}
			for (d = 0, i++; i < n; i++) {
				if (is(&t[i], "("))
					d++;
				else if (is(&t[i], ")") && --d == 0)
					break;
			}
			i++;
		} else if (is(&t[i], ";") || is(&t[i], "{")) {
			*end = i;
			return 0;
		} else {
			i++;
		}
	}
	if (i >= n || t[i].kind == TK_EOF)
		return 0;
	memset(k, 0, sizeof(*k));
	k->name = xstrndup(t[i].s, t[i].n);
	k->line = t[i].line;
	k->launch_bounds = bounds;
	i += 2;
	a = i;
	for (d = 0; i < n && t[i].kind != TK_EOF; i++) {
		int close = is(&t[i], ")");
		if (is(&t[i], "(") || is(&t[i], "[") || is(&t[i], "<"))
			d++;
		else if ((close || is(&t[i], "]") || is(&t[i], ">")) && d > 0)
			d--;
		else if ((close && d == 0) || (is(&t[i], ",") && d == 0)) {
			if (i > a && !(i == a + 1 && is(&t[a], "void") && close && k->n_params == 0)) {
				if (k->n_params >= LAUNCH_MAX_ARGS)
					return kf_err(err, "%d:%d: kernel `%s` has over %d parameters",
						      t[i].line, t[i].col, k->name, LAUNCH_MAX_ARGS);
				k->params = xrealloc(k->params, (size_t)(k->n_params + 1) *
							       sizeof(*k->params));
				if (param(t, a, i, &k->params[k->n_params], err) < 0)
					return -1;
				k->n_params++;
			}
			a = i + 1;
			if (close)
				break;
		}
	}
	*end = i;
	return 1;
}

/* `extern "C"` right before position i within the same declaration. */
static int extern_c_before(const struct tok *t, int i)
{
	for (int j = i - 1; j >= 0; j--) {
		if (is(&t[j], ";") || is(&t[j], "}") || is(&t[j], "{"))
			return 0;
		if (t[j].kind == TK_STR && is(&t[j], "\"C\"") && j > 0 && is(&t[j - 1], "extern"))
			return 1;
	}
	return 0;
}

int kernel_sigs_parse(struct kernel_sigs *s, const char *src, struct buf *err)
{
	struct toks ts = { 0 };
	char cblock[256];       /* per brace depth: 1 when an extern "C" { block */
	int depth = 0, ret = -1, in_c = 0;

	kernel_sigs_release(s);
	lex(src, &ts);
	memset(cblock, 0, sizeof(cblock));
	for (int i = 0; i < ts.n && ts.t[i].kind != TK_EOF; i++) {
		struct tok *t = &ts.t[i];
		if (is(t, "{")) {
			int c = i >= 2 && is(&ts.t[i - 2], "extern") && is(&ts.t[i - 1], "\"C\"");
			if (depth < (int)sizeof(cblock))
				cblock[depth] = (char)c;
			depth++;
			in_c += c;
		} else if (is(t, "}")) {
			if (depth > 0) {
				depth--;
				if (depth < (int)sizeof(cblock) && cblock[depth]) {
					in_c--;
					cblock[depth] = 0;
				}
			}
		} else if (is(t, "__global__")) {
			struct kernel_sig k;
			int end = i, r, ext = in_c > 0 || extern_c_before(ts.t, i);
			memset(&k, 0, sizeof(k));
			r = kernel_at(ts.t, ts.n, i, &k, &end, err);
			if (r < 0) {
				sig_free(&k);
				goto out;
			}
			if (r == 1 && kernel_sigs_find(s, k.name)) {
				sig_free(&k);   /* a declaration and its definition */
				r = 0;
			}
			if (r == 1) {
				k.extern_c = ext;
				s->k = xrealloc(s->k, (size_t)(s->n + 1) * sizeof(*s->k));
				s->k[s->n++] = k;
			}
			i = end > i ? end - 1 : i;
		}
	}
	ret = 0;
out:
	free(ts.t);
	return ret;
}
