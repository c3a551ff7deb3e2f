#include "proposer.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *cat_names[CAT_COUNT] = { "memory", "async", "precision", "compute",
					    "parallelism", "control" };
static const char *cat_titles[CAT_COUNT] = {
	"Memory access optimization",
	"Asynchronous operations and latency hiding",
	"Data type and precision optimization",
	"Compute and instruction optimization",
	"Parallelism and occupancy enhancement",
	"Control flow and loop optimization",
};

const char *idea_category_name(int i)
{
	return i >= 0 && i < CAT_COUNT ? cat_names[i] : "unknown";
}

const char *idea_category_title(int i)
{
	return i >= 0 && i < CAT_COUNT ? cat_titles[i] : "Unknown";
}

int idea_category_parse(const char *name)
{
	for (int i = 0; i < CAT_COUNT; i++)
		if (!strcasecmp(name, cat_names[i]) || !strcasecmp(name, cat_titles[i]))
			return 1 << i;
	return 0;
}

void proposer_record_init(struct proposer_record *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->model);
	buf_init(&r->request);
	buf_init(&r->response);
	buf_init(&r->error);
	buf_init(&r->attempts);
	r->prompt_tokens = r->completion_tokens = r->reasoning_tokens = -1;
}

void proposer_record_release(struct proposer_record *r)
{
	buf_release(&r->model);
	buf_release(&r->request);
	buf_release(&r->response);
	buf_release(&r->error);
	buf_release(&r->attempts);
}

void proposal_list_init(struct proposal_list *l)
{
	memset(l, 0, sizeof(*l));
}

void proposal_list_release(struct proposal_list *l)
{
	for (int i = 0; i < l->n; i++) {
		free(l->v[i].source);
		free(l->v[i].format_error);
		free(l->v[i].template_id);
		free(l->v[i].note);
		json_decref(l->v[i].params);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

struct proposal *proposal_list_add(struct proposal_list *l)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 8;
		l->v = xrealloc(l->v, (size_t)l->alloc * sizeof(*l->v));
	}
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	return &l->v[l->n++];
}

void idea_release(struct idea *i)
{
	free(i->text);
	free(i->category_method);
	free(i->catalogue_id);
	memset(i, 0, sizeof(*i));
}

void idea_list_init(struct idea_list *l)
{
	memset(l, 0, sizeof(*l));
}

void idea_list_release(struct idea_list *l)
{
	for (int i = 0; i < l->n; i++)
		idea_release(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

struct idea *idea_list_add(struct idea_list *l)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 8;
		l->v = xrealloc(l->v, (size_t)l->alloc * sizeof(*l->v));
	}
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	return &l->v[l->n++];
}

/* Keywords per category, matched case-insensitively as substrings. */
static const char *const kw[CAT_COUNT][16] = {
	{ "coalesc", "vectoriz", "float4", "shared memory", "tiling", "tile", "cache",
	  "bandwidth", "memory access", "bank conflict", "load", "l2", NULL },
	{ "async", "cp.async", "pipelin", "double buffer", "prefetch", "overlap", "latency",
	  "stream", "tma", NULL },
	{ "fp16", "bf16", "half", "tf32", "precision", "mixed", "data type", "dtype", "int8",
	  NULL },
	{ "intrinsic", "fast math", "fma", "tensor core", "mma", "wmma", "instruction",
	  "arithmetic", "warp shuffle", "shuffle", "reciprocal", "exp2", NULL },
	{ "occupancy", "parallel", "thread block", "block size", "grid", "warps", "split-k",
	  "persistent", "work per thread", NULL },
	{ "unroll", "loop", "branch", "divergence", "control flow", "predicat", NULL },
};

unsigned idea_classify_keywords(const char *text)
{
	unsigned bits = 0;
	size_t n = strlen(text);
	char *low = xmalloc(n + 1);
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)tolower((unsigned char)text[i]);
	for (int c = 0; c < CAT_COUNT; c++)
		for (int k = 0; kw[c][k]; k++)
			if (strstr(low, kw[c][k])) {
				bits |= 1u << c;
				break;
			}
	free(low);
	return bits ? bits : CAT_COMPUTE;
}
