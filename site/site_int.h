/* Internals of the site builder, shared by the files of site/. */
#ifndef KF_SITE_INT_H
#define KF_SITE_INT_H

#include <jansson.h>
#include "core/buf.h"
#include "store/store.h"
#include "store/store_site.h"
#include "site.h"
#include "core/mustache.h"

enum { T_INDEX, T_PROBLEM, T_KERNEL, T_CATEGORY, T_METHODOLOGY, T_DOWNLOADS, T_REPORT, T_N };

/* What one rendering thread owns: the partials cache is not thread-safe
 * and each thread renders into its own buffer. */
struct site_out {
	struct mustache_partials parts;
	struct buf page;
	long pages;
};

struct site {
	const struct site_options *o;
	struct store store;
	struct store_site ss;
	struct mustache_tpl tpl[T_N];
	struct buf stage;             /* the staging directory */
	struct site_out main;         /* the main thread's renderer */
	int threads;                  /* for the kernel pages */
	struct buf report_index;      /* rows of reports/README.md */
	struct buf report_index_html; /* the same rows, linking the HTML reports */
	json_t *slugs;                /* problem id -> slug */
	json_t *problems;             /* store_site_problems() */
	json_t *best;                 /* store_site_best(NULL) */
	json_t *flagged;              /* store_site_flagged(): listed apart */
	json_t *gpus;                 /* GPU names, most evaluations first */
	json_t *common;               /* generated_at, version: in every page */
	struct site_stats *st;
};

/* Renders template t with data (root and common fields added) and writes
 * it to STAGE/rel. depth: how many directories rel is below the root. */
int site_write_page(struct site *s, int t, json_t *data, const char *rel, int depth,
		    struct buf *err);
/* Same from a worker thread with its own renderer. */
int site_write_page_to(struct site *s, struct site_out *w, int t, json_t *data, const char *rel,
		       int depth, struct buf *err);
int site_write_file(struct site *s, const char *rel, const void *data, size_t len,
		    struct buf *err);

/* Display helpers: set key to a formatted string. */
void jset_num(json_t *o, const char *key, double v);
void jset_ms(json_t *o, const char *key, double v);
void jset_pct(json_t *o, const char *key, double ratio);
void jset_int(json_t *o, const char *key, long long v);
void jset_speed(json_t *o, const char *key, double base_ms, double t_ms);
double jnum(const json_t *o, const char *key);
const char *problem_slug(struct site *s, const char *problem_id);
/* Sets status_cls (good, bad, warn, neutral) from the status in key. */
void site_set_status(json_t *o, const char *key);

/* Decorates a store_site_kernel() object for the templates (highlighted
 * source, launch block, display numbers, links) relative to depth. */
void site_kernel_view(struct site *s, json_t *k, int depth);

int site_pages_index(struct site *s, struct buf *err);
int site_pages_problems(struct site *s, struct buf *err);
int site_pages_kernels(struct site *s, struct buf *err);
int site_pages_categories(struct site *s, json_t *index_data, struct buf *err);
int site_pages_methodology(struct site *s, struct buf *err);
int site_pages_downloads(struct site *s, struct buf *err);
int site_reports(struct site *s, struct buf *err);
/* Issue 41 (site/lineage.c): sets bk.profile (the view of the best
 * kernel's profile on gpu; absent: none) and bk.show_profile. */
int site_problem_profile(struct site *s, json_t *bk, const char *pid, const char *gpu,
			 struct buf *err);
/* Sets d.diffs (each kernel against its parent, the lineage lin first) and
 * d.diffs_more (how many were left out). */
int site_problem_diffs(struct site *s, json_t *d, const char *pid, const json_t *lin,
		       struct buf *err);
/* Sets page.limiters [{limiter, before, after}], limiter_moves, has_limiters
 * for category cat from store_limiter_shifts() rows. */
int site_category_limiters(struct site *s, json_t *page, const json_t *shifts, const char *cat);
/* Writes reports/SLUG.md and reports/SLUG.html from store_site_report() data. */
int site_report_problem(struct site *s, const char *pid, const json_t *rep, struct buf *err);

#endif
