/* The proposer interface: what the search asks of an idea-and-kernel
 * writer. The LLM proposer (collector/llm_*.c) and the built-in offline
 * proposer (collector/builtin*.c) implement it. A proposer never touches
 * the store: it returns what it did in a `struct proposer_record`, and the
 * search records that (as an llm_calls row) together with the results. */
#ifndef KF_PROPOSER_H
#define KF_PROPOSER_H

#include <jansson.h>
#include "core/buf.h"

/* The six idea categories of the CRFM write-up, as bits. */
enum idea_category {
	CAT_MEMORY = 1 << 0,      /* memory access optimization */
	CAT_ASYNC = 1 << 1,       /* asynchronous operations and latency hiding */
	CAT_PRECISION = 1 << 2,   /* data type and precision optimization */
	CAT_COMPUTE = 1 << 3,     /* compute and instruction optimization */
	CAT_PARALLELISM = 1 << 4, /* parallelism and occupancy enhancement */
	CAT_CONTROL = 1 << 5,     /* control flow and loop optimization */
};
#define CAT_COUNT 6
/* Stable names: "memory", "async", "precision", "compute", "parallelism", "control". */
const char *idea_category_name(int bit_index);
const char *idea_category_title(int bit_index);
int idea_category_parse(const char *name); /* bit value, or 0 if unknown */

/* The problem as proposers see it: a view of the search's loaded struct
 * problem (problem/problem.h), its parsed spec and texts, not a copy. */
struct proposer_problem {
	const char *id;            /* "level1/023_Softmax" */
	const json_t *spec;        /* spec.json (docs/formats.md) */
	const char *torch_text;    /* reference.py */
	const char *reference_src; /* reference.cu (a candidate file) */
	const char *gpu_name;      /* e.g. "NVIDIA H100 80GB HBM3" */
	const char *arch;          /* e.g. "sm_90" */
	int allow_tf32;            /* run's tolerance allows TF32 paths */
};

/* An idea (in natural language) with its categories. */
struct idea {
	char *text;                /* owned */
	unsigned categories;       /* CAT_* bits */
	char *category_method;     /* "model", "keyword" or "catalogue"; owned */
	char *catalogue_id;        /* built-in ideas: the catalogue entry; owned, may be NULL */
};

/* An earlier idea of this problem and how it did (conditioning history). */
struct idea_outcome {
	const char *text;
	unsigned categories;
	const char *catalogue_id;  /* may be NULL */
	int round;
	int kernels, correct;
	double best_speedup;       /* vs eager, 0 when none correct */
};

/* A kernel to build on (seed) or to repair. */
struct seed_kernel {
	const char *kernel_id;     /* the candidate's id in the store */
	const char *source;        /* full candidate file text */
	const json_t *params;      /* built-in: template parameters; may be NULL */
	const char *template_id;   /* built-in: template that made it; may be NULL */
	double time_ms;            /* 0 when not timed */
	double speedup;            /* vs eager, 0 when unknown */
	const char *profile;       /* its profile as proposer_profile_text, with
				      --profile-feedback only; NULL: none */
};

struct idea_request {
	const struct proposer_problem *problem;
	const struct idea_outcome *history;
	int n_history;
	int k;                     /* ideas wanted */
	int round;
	unsigned long long seed;   /* deterministic choices derive from it */
	/* The best kernel so far, when it has a profile on this GPU: its
	 * limiter (memory, compute, latency, launch) and label; NULL: none. */
	const char *limiter, *limiter_kernel;
	const char *profile;       /* that profile's text, with --profile-feedback only */
};

struct impl_request {
	const struct proposer_problem *problem;
	const struct idea *idea;
	const struct seed_kernel *seeds;
	int n_seeds;
	int m;                     /* implementations wanted */
	int round;
	unsigned long long seed;
	/* Kernel hashes (engine/candidate.h) of the problem's candidates in the run's earlier
	 * rounds: the built-in proposer renders none of them again. */
	const char *const *known;
	int n_known;
	/* The round's ideas implemented before this one (in the round's order, each
	 * with its own seed and m): the built-in proposer renders none of their
	 * kernels again, whatever order concurrent implementations run in. */
	const struct impl_request *before;
	int n_before;
};

struct repair_request {
	const struct proposer_problem *problem;
	const struct seed_kernel *kernel;  /* the failing kernel */
	const char *status;        /* format_error, compile_error, incorrect, ... */
	const char *failure;       /* compile log, launch-block error, failed check */
	int turn;
	unsigned long long seed;
};

/* One implementation: a full candidate file (docs/formats.md). */
struct proposal {
	char *source;              /* owned; NULL when the response was malformed */
	char *format_error;        /* owned; why source is NULL (the raw text is in the record) */
	char *template_id;         /* built-in: which template; owned, may be NULL */
	json_t *params;            /* built-in: template parameters; owned ref, may be NULL */
	char *note;                /* short rationale; owned, may be NULL */
};

/* What one proposer call did, for the llm_calls table. For the built-in
 * proposer, prompt/response say what was chosen and why; tokens stay -1. */
struct proposer_record {
	struct buf model;          /* "builtin" or the LLM's model name */
	struct buf request;        /* full request (JSON for an LLM; never the API key) */
	struct buf response;       /* raw response text */
	long long prompt_tokens, completion_tokens, reasoning_tokens; /* -1: not reported */
	double latency_ms;
	int retries;
	int http_status;           /* 0 for the built-in proposer */
	int cached;                /* served from the response cache */
	struct buf error;          /* empty on success */
	struct buf attempts;       /* JSON array: every HTTP attempt (empty: none) */
};

void proposer_record_init(struct proposer_record *r);
void proposer_record_release(struct proposer_record *r);

struct proposal_list {
	struct proposal *v;
	int n, alloc;
};
struct idea_list {
	struct idea *v;
	int n, alloc;
};
void proposal_list_init(struct proposal_list *l);
void proposal_list_release(struct proposal_list *l);
struct proposal *proposal_list_add(struct proposal_list *l); /* zeroed slot */
void idea_list_init(struct idea_list *l);
void idea_list_release(struct idea_list *l);
struct idea *idea_list_add(struct idea_list *l);             /* zeroed slot */
void idea_release(struct idea *i);

/* A proposer. Every call is synchronous from the caller's view; an LLM
 * proposer may keep many requests in flight internally when called from
 * several threads (calls must be thread-safe). 0 or -1 with err; a
 * malformed model response is NOT an error: it is a proposal with
 * source == NULL and format_error set. */
struct proposer {
	const char *name;          /* "builtin" or "llm" */
	void *self;
	int (*ideas)(void *self, const struct idea_request *req, struct idea_list *out,
		     struct proposer_record *rec, struct buf *err);
	int (*implement)(void *self, const struct impl_request *req, struct proposal_list *out,
			 struct proposer_record *rec, struct buf *err);
	int (*repair)(void *self, const struct repair_request *req, struct proposal *out,
		      struct proposer_record *rec, struct buf *err);
	void (*release)(void *self);
};

/* The short text form of a profile (store/store_profile.h's JSON) for a
 * prompt, in out (reset): the limiter, kernel time, DRAM % and bytes, L2
 * hit, SM, tensor and occupancy %, and the three longest kernels with
 * their registers and shared memory. At most PROPOSER_PROFILE_TEXT_MAX
 * bytes of printable ASCII and newlines, whatever the profile holds. */
#define PROPOSER_PROFILE_TEXT_MAX 600
void proposer_profile_text(const json_t *prof, struct buf *out);

/* Deterministic keyword classifier for ideas that carry no labels. */
unsigned idea_classify_keywords(const char *text);

#endif
