/* site/: the static site and reports, owned by struct site. Includes
 * store/ and below (templates/ holds its Mustache text).
 *
 * The static site: renders a store into OUT/ (HTML pages, style.css,
 * reports under reports/ in HTML and Markdown, the --dist tarballs under
 * downloads/). Pages use relative links only, so the site works from
 * file:// and on any static host, and need no JavaScript (site.js only
 * adds sorting and filtering to the leaderboard).
 * Templates are logic-less Mustache (templates/site/NAME.mustache); every
 * text from the store is escaped, kernel sources are highlighted here and
 * charts are inline SVG drawn here.
 *
 * The site is built in OUT.tmp-PID and renamed over OUT at the end, so a
 * failed build leaves the previous site as it was. */
#ifndef KF_SITE_H
#define KF_SITE_H

#include "core/buf.h"

struct site_options {
	const char *db_path;        /* the store (opened read-only) */
	const char *out_dir;        /* public/ */
	const char *templates_dir;  /* templates/site */
	const char *dist_dir;       /* tarballs for downloads.html, may be NULL */
	int no_kernel_pages;        /* skip the page per kernel (quick previews) */
	int threads;                /* threads rendering kernel pages (0: 1) */
	const char *card_path;      /* a dataset card (Markdown) for downloads.html, or NULL */
	const char *base_url;       /* tarballs linked at base_url/NAME; NULL: copied into downloads/ */
};

struct site_stats {
	long pages, problems, kernels, reports;
};

int site_build(const struct site_options *o, struct site_stats *st, struct buf *err);

/* Slug of a problem id for file names: [A-Za-z0-9_.-] kept, '/' -> '-',
 * anything else -> '_'; at most 120 bytes. */
void site_problem_slug(struct buf *out, const char *problem_id);
/* Path of a kernel's page relative to the site root:
 * kernels/HH/HASH.html; a hash that is not lowercase hex is replaced by
 * the SHA-256 of it, so no store value becomes a path by itself. */
void site_kernel_path(struct buf *out, const char *hash);

#endif
