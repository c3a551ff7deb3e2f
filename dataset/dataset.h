/* dataset/: packing, checking, fetching and comparing the tarball
 * datasets (struct pack_opts in, struct pack_result out). Includes store/ and below.
 *
 * Datasets: packing a store into a versioned, byte-reproducible tarball
 * (kforge-<name>-<version>.tar.zst), checking one, fetching one safely and
 * comparing two. Functions return 0 or -1 with a message in err; checks
 * that ran and found problems return -2 with the list in their report.
 * Nothing here prints. */
#ifndef KF_DATASET_H
#define KF_DATASET_H

#include <jansson.h>
#include <stdint.h>
#include "core/buf.h"

#define DATASET_FORMAT_VERSION 1
#define DATASET_MAX_ENTRY ((int64_t)16 << 30)    /* one file inside a tarball */
#define DATASET_MAX_LINE ((size_t)256 << 20)     /* one JSONL line */
#define DATASET_MAX_EXTRACT ((int64_t)256 << 30) /* a tarball's contents, in all */

struct pack_opts {
	const char *db_path;
	const char *out_dir;
	const char *name;          /* [A-Za-z0-9._-]+, default "kernelbench" */
	const char *version;       /* X.Y.Z[-pre] */
	const char *license;       /* card's license, default "cc-by-4.0" */
	const json_t *problems;    /* array of problem ids, NULL: all (borrowed) */
	int only_verified;
	int gz;                    /* also write .tar.gz */
	long long mtime;           /* entries' time; < 0: SOURCE_DATE_EPOCH, else the data */
};

struct pack_result {
	struct buf path, gz_path;  /* owned */
	char sha256[65], gz_sha256[65];
	long long bytes, gz_bytes;
	json_t *counts;            /* file -> lines, owned */
};

void pack_result_init(struct pack_result *r);
void pack_result_release(struct pack_result *r);
int dataset_pack(const struct pack_opts *o, struct pack_result *r, struct buf *err);

/* Checks a tarball (.tar.zst, .tar.gz, .tar) or a directory holding an
 * extracted one: SHA256SUMS against every
 * file, every file listed, every JSONL line against schema.json, the
 * card's counts against the lines. Returns 0 when all hold, -2 with the
 * problems in report (one per line), -1 when it could not be read. */
struct verify_summary {
	long long files, lines;
};
int dataset_verify(const char *path, struct buf *report, struct verify_summary *sum,
		   struct buf *err);

/* Writes the entry named member (as inside the tarball: "provenance.json",
 * "kforge.db") of a tarball or extracted directory to fd, read within the
 * same bounds as dataset_verify. 0; -2 when there is no such entry; -1 on
 * any other failure (a truncated entry included). */
int dataset_cat(const char *path, const char *member, int fd, struct buf *err);

/* Downloads url (https://, or http:// to a loopback address) into out_dir
 * (resuming a partial download), checks its SHA-256 (when sha256 is
 * non-NULL), with verify runs dataset_verify on the downloaded file, and
 * only then extracts it safely into out_dir/<name without .tar.*>. A
 * tarball that fails the SHA-256 or the verification is removed and
 * nothing is extracted: -2 when the verification found problems (listed
 * in the result's report), -1 for any other failure. */
struct fetch_opts {
	const char *url;
	const char *out_dir;
	const char *sha256;        /* 64 hex digits or NULL */
	int64_t max_bytes;         /* download limit */
	int64_t max_extract;       /* total bytes extracted (dataset_extract_safe) */
	/* Called with (done, total) while downloading; NULL for quiet. */
	void (*progress)(void *ctx, int64_t done, int64_t total);
	void *progress_ctx;
	int verify;                /* dataset_verify before extracting */
};
struct fetch_result {
	struct buf archive, dir;   /* downloaded file, extracted directory (owned) */
	char sha256[65];
	int resumed;               /* 1 when a partial download was continued */
	struct buf report;         /* dataset_verify's problems (owned) */
	struct verify_summary verified;   /* with verify: what was checked */
};
void fetch_result_init(struct fetch_result *r);
void fetch_result_release(struct fetch_result *r);
int dataset_fetch(const struct fetch_opts *o, struct fetch_result *r, struct buf *err);

/* Extracts archive into dest (which must not exist) through a temporary
 * directory beside it: regular files and directories only, relative paths
 * without "..", no sparse files, the entry and size bounds of ds_limits
 * (ds_int.h: total size at most DS_EXPAND_RATIO times the tarball's and
 * at most max_total). Nothing is written outside dest's parent's
 * temporary directory; on error nothing is left. */
int dataset_extract_safe(const char *archive, const char *dest, int64_t max_total,
			 struct buf *err);

/* What changed from a to b (both tarballs): rows per file, problems added
 * and removed, best speedups (per problem and GPU) that moved. */
int dataset_diff(const char *a, const char *b, struct buf *out, struct buf *err);

#endif
