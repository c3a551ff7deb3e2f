/* Internals of dataset/: the staging of files for a pack. */
#ifndef KF_DS_INT_H
#define KF_DS_INT_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "core/buf.h"
#include "core/sha256.h"
#include "store/store.h"

/* A file staged for the tarball: its path inside, checksum and size. */
struct ds_file {
	char *path;
	char sha[65];
	int64_t size;
};
struct ds_files {
	struct ds_file *v;
	size_t n, alloc;
};
void ds_files_add(struct ds_files *fs, const char *path, const char *sha, int64_t size);
void ds_files_release(struct ds_files *fs);

/* The staging state shared by the writers. */
struct ds_stage {
	const char *dir;        /* staging directory */
	struct store *s;        /* the filtered copy */
	struct ds_files files;  /* staged files */
	json_t *counts;         /* path -> lines (JSONL files) */
	json_t *problems;       /* id -> problems row */
	json_t *prov;           /* provenance.json's object, once written */
	json_t *types;          /* path -> Arrow type of its rows (features.c) */
	long long mtime;        /* entries' modification time */
};

/* A JSONL file being written: checksummed and counted on the way. */
struct jsonl {
	FILE *f;
	struct sha256 h;
	long long lines;
	int64_t bytes;
	struct buf line, rel, abspath;
	json_t *type;           /* of the rows so far (ds_type_row) */
};
int jsonl_open(struct jsonl *w, struct ds_stage *st, const char *rel, struct buf *err);
int jsonl_put(struct jsonl *w, const json_t *v, struct buf *err);
/* Appends one line of ready JSON text (without the newline). */
int jsonl_put_text(struct jsonl *w, const char *s, size_t n, struct buf *err);
int jsonl_close(struct jsonl *w, struct ds_stage *st, struct buf *err);
void jsonl_abort(struct jsonl *w);
/* Writes a small staged file whole. */
int ds_stage_file(struct ds_stage *st, const char *rel, const void *p, size_t n, struct buf *err);

/* One exported table: data/<file>.jsonl from store table `table`. */
struct ds_table {
	const char *file, *table, *what;
};
extern const struct ds_table ds_tables[];
/* Columns holding JSON text, exported as JSON values ("table.column"). */
int ds_json_column(const char *table, const char *column);

/* shapes.c: one JSON shape per field across rows (docs/dataset.md): the
 * exported row of a table, a problem spec; whether a field is a GPU name
 * that is null for compile-only rows. reals (or NULL): the paths where
 * some row of the file has a real (ds_reals_collect over the shaped rows
 * first), where integers are written as reals. */
void ds_row_shape(const char *table, json_t *row, json_t *reals);
void ds_reals_collect(const json_t *row, json_t *reals);
void ds_spec_shape(json_t *spec);
/* A profiles row (with its kernels): every field present, reals real,
 * integers integer, else null; kernels a list (docs/dataset.md). */
void ds_profile_shape(json_t *row);
/* A search_sessions row: problems a list of strings, levels of integers. */
void ds_session_shape(json_t *row);
int ds_gpu_null(const char *field);

/* features.c: folds a row into the Arrow type of a file's rows (*acc NULL
 * at first); writes a file's type as the YAML `features:` list of a card's
 * dataset_info at indent, or returns -1 (rows not objects, or a conflict). */
void ds_type_row(json_t **acc, const json_t *row);
int ds_features_yaml(struct buf *b, const json_t *type, int indent);

/* Meaning of a table's field (fields.c), or NULL. */
const char *ds_field_doc(const char *table, const char *field);

/* export.c: one table's file; all tables but `except` (NULL: all). */
int ds_write_table(struct ds_stage *st, const char *table, struct buf *err);
int ds_write_tables(struct ds_stage *st, const char *except, struct buf *err);
int ds_write_trajectories(struct ds_stage *st, struct buf *err); /* export.c */
/* training.c: sft.jsonl and pairs.jsonl (each with its own queries) */
int ds_write_sft(struct ds_stage *st, struct buf *err);
int ds_write_pairs(struct ds_stage *st, struct buf *err);
/* schema.json, provenance.json, README.md (card.c) */
int ds_write_schema(struct ds_stage *st, struct buf *err);
int ds_write_provenance(struct ds_stage *st, const char *name, const char *version,
			const json_t *filter, struct buf *err);
int ds_write_card(struct ds_stage *st, const char *name, const char *version,
		  const char *license, struct buf *err);

/* Tarball path rules shared by pack, verify and extract: relative, no "."
 * or ".." component, no empty component, printable ASCII without '\\'. */
int ds_safe_path(const char *p);
/* Opens a tarball for reading (any compression libarchive knows). */
struct archive;
struct archive *ds_open_archive(const char *path, struct buf *err);
/* Bounds on reading a tarball, most from its size on disk, so that a
 * small download cannot take the disk or hours (reader.c). Extracted bytes
 * (the entries' declared sizes, which the data must match) at most
 * DS_EXPAND_RATIO times the tarball (at least DS_EXPAND_FLOOR) and at most
 * the caller's cap: real datasets expand 7 to 21 times (zstd -3 of
 * level1-builtin-v0.1.0: 7.9 MB -> 74 MB, 9.5x; its .tar.gz 7.2x; an empty
 * store's pack 21x; its most compressible files alone, kernels.jsonl and
 * pairs.jsonl, 30x and 34x),
 * while zeros compress over 1000x (gzip) and 30000x (zstd). Entries, empty
 * ones and directories included, at most DS_MAX_ENTRIES and one per
 * DS_ENTRY_BYTES bytes of tarball (at least 1000): a real entry costs at
 * least the 32 bytes of entropy of its SHA-256 in SHA256SUMS (measured:
 * 520 to 6700 bytes per entry), a million empty files xz-compress to 1.3
 * bytes each. */
#define DS_EXPAND_RATIO 200
#define DS_EXPAND_FLOOR ((int64_t)1 << 20)
#define DS_MAX_ENTRIES 500000
#define DS_ENTRY_BYTES 16
#define DS_MAX_PATH 1024
struct archive_entry;
struct ds_limits {
	int64_t archive_bytes, cap;
	int64_t max_total, max_entries;
	int64_t total, entries;       /* so far */
};
/* archive_bytes: the tarball's size; cap: the absolute bound on bytes. */
void ds_limits_init(struct ds_limits *l, int64_t archive_bytes, int64_t cap);
/* Counts one entry (name as in the tarball): refuses it past the entry
 * bounds, with a name over DS_MAX_PATH, as a sparse file (its holes would
 * be written out), without a size, over DATASET_MAX_ENTRY bytes or past
 * the total bound. 0 or -1 with "refused: ..." in err. */
int ds_limits_entry(struct ds_limits *l, struct archive_entry *e, const char *name,
		    struct buf *err);

/* Reads a dataset's entries from a tarball or an extracted directory
 * (directories skipped, names relative). next: 1 entry, 0 end, -1 error.
 * A tarball's entries are held to ds_limits (cap DATASET_MAX_EXTRACT, or
 * the given cap). */
struct ds_reader {
	struct archive *a;
	int disk;
	size_t strip;
	struct buf name;
	struct ds_limits lim;     /* tarballs only */
};
int ds_reader_open(struct ds_reader *r, const char *path, struct buf *err);
int ds_reader_open_capped(struct ds_reader *r, const char *path, int64_t cap, struct buf *err);
int ds_reader_next(struct ds_reader *r, struct archive_entry **e, const char **name,
		   struct buf *err);
void ds_reader_close(struct ds_reader *r);
/* Writes the current entry's data to fd; its size must be the one its
 * header declared (what ds_limits counted): more is refused as soon as it
 * shows, less (a truncated entry) at the end. 0 or -1. */
int ds_copy_entry(struct archive *a, struct archive_entry *e, const char *name, int fd,
		  struct buf *err);
/* Splits an entry's bytes into JSONL lines as they are read. Each '\n'
 * counts a line (n); a line that fits DATASET_MAX_LINE goes to line(), one
 * that does not to over() once, when it first exceeds the limit (its bytes
 * are dropped). A callback's non-zero return stops the feed and is returned. */
struct ds_lines {
	struct buf line;
	long long n;
	int too_long;
};
typedef int (*ds_line_fn)(void *ctx, long long lineno, const char *s, size_t len);
typedef int (*ds_over_fn)(void *ctx, long long lineno);
int ds_lines_feed(struct ds_lines *l, const char *p, size_t n, ds_line_fn line, ds_over_fn over,
		  void *ctx);
/* Forgets the current entry's partial line and count. */
void ds_lines_reset(struct ds_lines *l);
/* Removes a directory tree that kforge made (no symlinks followed). */
int ds_rmtree(const char *dir);

#endif
