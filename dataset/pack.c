/* kforge pack: stage every file in a private directory beside the output,
 * then write one tarball in sorted order with fixed metadata. */
#include "dataset.h"
#include "ds_int.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "core/store_export.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ZSTD_LEVEL "9"    /* fixed: the bytes depend on it */

void pack_result_init(struct pack_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->path);
	buf_init(&r->gz_path);
}

void pack_result_release(struct pack_result *r)
{
	buf_release(&r->path);
	buf_release(&r->gz_path);
	json_decref(r->counts);
	r->counts = NULL;
}

int ds_safe_path(const char *p)
{
	const char *c = p;
	if (!*p || *p == '/' || strlen(p) > 1024)
		return 0;
	for (const char *q = p; *q; q++)
		if (*q < 0x20 || *q > 0x7e || *q == '\\')
			return 0;
	while (*c) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c += n;
		if (*c == '/')
			c++;
		else
			break;
	}
	return p[strlen(p) - 1] != '/';
}

static int rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int ds_rmtree(const char *dir)
{
	return nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static int valid_word(const char *s, int version)
{
	if (!s || !*s || strlen(s) > 64)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '.' || *s == '-' || *s == '_' || (version && *s == '+')))
			return 0;
	return 1;
}

static int valid_version(const char *v)
{
	int a, b, c, n = 0;
	if (!valid_word(v, 1) || sscanf(v, "%d.%d.%d%n", &a, &b, &c, &n) != 3)
		return 0;
	return v[n] == 0 || v[n] == '-' || v[n] == '+';
}

/* ---- kernel files: checksummed first, streamed into the tar later ------ */

struct kf_ctx {
	struct ds_files *files;
	struct archive *a;   /* NULL on the checksum pass */
	long long mtime;
	struct buf *err;
};

static int add_entry(struct archive *a, const char *path, int64_t size, long long mtime,
		     struct buf *err)
{
	struct archive_entry *e = archive_entry_new();
	int r;
	archive_entry_set_pathname(e, path);
	archive_entry_set_size(e, size);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_mtime(e, (time_t)mtime, 0);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	r = archive_write_header(a, e);
	archive_entry_free(e);
	if (r != ARCHIVE_OK)
		return kf_err(err, "tar: %s: %s", path, archive_error_string(a));
	return 0;
}

static int write_data(struct archive *a, const void *p, size_t n, struct buf *err)
{
	if (n && archive_write_data(a, p, n) != (la_ssize_t)n)
		return kf_err(err, "tar: write: %s", archive_error_string(a));
	return 0;
}

static int kernel_file(void *p, json_t *row)
{
	struct kf_ctx *c = p;
	const char *path = jget_str(row, "path", ""), *src = jget_str(row, "source", "");
	size_t n = json_string_length(json_object_get(row, "source"));
	char hex[65];

	if (!ds_safe_path(path)) {
		kf_err(c->err, "problem id gives an unsafe path in the tarball: %s", path);
		return -1;
	}
	if (!c->a) {
		sha256_hex(src, n, hex);
		ds_files_add(c->files, path, hex, (int64_t)n);
		return 0;
	}
	if (add_entry(c->a, path, (int64_t)n, c->mtime, c->err) < 0 ||
	    write_data(c->a, src, n, c->err) < 0)
		return -1;
	return 0;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct ds_file *)a)->path, ((const struct ds_file *)b)->path);
}

static int copy_file_in(struct archive *a, const char *stage, const struct ds_file *f,
			long long mtime, struct buf *err)
{
	struct buf path = BUF_INIT;
	char chunk[1 << 16];
	int64_t left = f->size;
	int fd, ret = -1;

	path_join(&path, stage, f->path);
	fd = open(path.s, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kf_err(err, "cannot open %s: %s", path.s, strerror(errno));
		goto out;
	}
	if (add_entry(a, f->path, f->size, mtime, err) < 0)
		goto out;
	while (left > 0) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n <= 0) {
			kf_err(err, "reading %s: %s", path.s, n < 0 ? strerror(errno) : "file shrank");
			goto out;
		}
		if (n > left)
			n = (ssize_t)left;
		if (write_data(a, chunk, (size_t)n, err) < 0)
			goto out;
		left -= n;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	buf_release(&path);
	return ret;
}

/* Writes the tarball to a temp file in out_dir and renames it to dst. */
static int write_tar(const char *dst, int gz, struct ds_stage *st, const char *db_copy,
		     char sha[65], long long *bytes, struct buf *err)
{
	struct buf tmp = BUF_INIT;
	struct archive *a = archive_write_new();
	struct store s;
	struct kf_ctx kc = { NULL, a, st->mtime, err };
	int fd = -1, ret = -1, open_store = 0;
	struct stat sb;
	size_t i;

	buf_addf(&tmp, "%s.tmp.XXXXXX", dst);
	fd = mkstemp(tmp.s);
	if (fd < 0) {
		kf_err(err, "cannot create %s: %s", tmp.s, strerror(errno));
		goto out;
	}
	archive_write_set_format_pax_restricted(a);
	if (gz) {
		archive_write_add_filter_gzip(a);
		/* No timestamp in the gzip header: it would change every run. */
		if (archive_write_set_filter_option(a, "gzip", "timestamp", NULL) < ARCHIVE_OK ||
		    archive_write_set_filter_option(a, "gzip", "compression-level", "9") < ARCHIVE_OK) {
			kf_err(err, "gzip: %s", archive_error_string(a));
			goto out;
		}
	} else {
		if (archive_write_add_filter_zstd(a) != ARCHIVE_OK ||
		    archive_write_set_filter_option(a, "zstd", "compression-level", ZSTD_LEVEL) < ARCHIVE_OK) {
			kf_err(err, "zstd: %s", archive_error_string(a));
			goto out;
		}
	}
	if (archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		kf_err(err, "tar: %s", archive_error_string(a));
		goto out;
	}
	/* Sorted order: staged files before "kernels/", the kernels (in path
	 * order from the store), then the remaining staged files. */
	for (i = 0; i < st->files.n && strcmp(st->files.v[i].path, "kernels/") < 0; i++)
		if (copy_file_in(a, st->dir, &st->files.v[i], st->mtime, err) < 0)
			goto out;
	if (store_open(&s, db_copy, STORE_READONLY, err) < 0)
		goto out;
	open_store = 1;
	if (store_export_kernel_files(&s, kernel_file, &kc, err) != 0)
		goto out;
	for (; i < st->files.n; i++)
		if (copy_file_in(a, st->dir, &st->files.v[i], st->mtime, err) < 0)
			goto out;
	if (archive_write_close(a) != ARCHIVE_OK) {
		kf_err(err, "tar: %s", archive_error_string(a));
		goto out;
	}
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0 || fstat(fd, &sb) < 0) {
		kf_err(err, "%s: %s", tmp.s, strerror(errno));
		goto out;
	}
	*bytes = (long long)sb.st_size;
	if (sha256_file_hex(tmp.s, sha, err) < 0)
		goto out;
	if (rename(tmp.s, dst) < 0) {
		kf_err(err, "cannot rename %s to %s: %s", tmp.s, dst, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (open_store)
		store_close(&s);
	archive_write_free(a);
	if (fd >= 0)
		close(fd);
	if (ret < 0 && fd >= 0)
		unlink(tmp.s);
	buf_release(&tmp);
	return ret;
}

static long long parse_iso(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return (long long)timegm(&tm);
}

static int stage_all(const struct pack_opts *o, struct ds_stage *st, const char *db_copy,
		     struct ds_files *kfiles, struct buf *err)
{
	struct store s;
	json_t *filter = json_pack("{s:O?, s:b}", "problems", o->problems, "only_verified",
				   o->only_verified);
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	struct kf_ctx kc = { kfiles, NULL, 0, err };
	int ret = -1;

	if (store_open(&s, db_copy, STORE_READONLY, err) < 0) {
		json_decref(filter);
		return -1;
	}
	st->s = &s;
	if (o->mtime >= 0) {
		st->mtime = o->mtime;
	} else if (sde && *sde) {
		char *end;
		errno = 0;
		st->mtime = strtoll(sde, &end, 10);
		if (errno || *end || st->mtime < 0) {
			kf_err(err, "SOURCE_DATE_EPOCH must be a non-negative integer, not '%s'", sde);
			goto out;
		}
	} else {
		json_t *p = store_export_provenance(&s, err);
		if (!p)
			goto out;
		st->mtime = parse_iso(jget_str(p, "last_created_at", NULL));
		json_decref(p);
	}
	if (ds_write_tables(st, err) < 0 || ds_write_trajectories(st, err) < 0 ||
	    ds_write_training(st, err) < 0 || ds_write_schema(st, err) < 0 ||
	    ds_write_provenance(st, o->name, o->version, filter, err) < 0 ||
	    ds_write_card(st, o->name, o->version, o->license, err) < 0)
		goto out;
	if (store_export_kernel_files(&s, kernel_file, &kc, err) != 0)
		goto out;
	ret = 0;
out:
	st->s = NULL;
	store_close(&s);
	json_decref(filter);
	return ret;
}

static int write_sums(struct ds_stage *st, const struct ds_files *kfiles, struct buf *err)
{
	struct ds_files all = { NULL, 0, 0 };
	struct buf b = BUF_INIT;
	int ret;

	for (size_t i = 0; i < st->files.n; i++)
		ds_files_add(&all, st->files.v[i].path, st->files.v[i].sha, st->files.v[i].size);
	for (size_t i = 0; i < kfiles->n; i++)
		ds_files_add(&all, kfiles->v[i].path, kfiles->v[i].sha, kfiles->v[i].size);
	qsort(all.v, all.n, sizeof(*all.v), cmp_file);
	for (size_t i = 0; i < all.n; i++)
		buf_addf(&b, "%s  %s\n", all.v[i].sha, all.v[i].path);
	ret = ds_stage_file(st, "SHA256SUMS", b.s, b.len, err);
	buf_release(&b);
	ds_files_release(&all);
	return ret;
}

int dataset_pack(const struct pack_opts *o, struct pack_result *r, struct buf *err)
{
	struct ds_stage st;
	struct ds_files kfiles = { NULL, 0, 0 };
	struct buf stage = BUF_INIT, db = BUF_INIT, data = BUF_INIT, name = BUF_INIT;
	struct store chk;
	char hex[65];
	struct stat sb;
	int ret = -1, staged = 0;

	memset(&st, 0, sizeof(st));
	if (!valid_word(o->name, 0))
		return kf_err(err, "dataset name '%s': use letters, digits, '.', '-', '_'", o->name ? o->name : "");
	if (!valid_version(o->version))
		return kf_err(err, "version '%s' is not X.Y.Z", o->version ? o->version : "");
	if (store_open(&chk, o->db_path, STORE_READONLY, err) < 0)
		return -1;
	store_close(&chk);
	if (mkdir_p(o->out_dir, err) < 0)
		return -1;
	path_join(&stage, o->out_dir, ".kforge-pack.XXXXXX");
	if (!mkdtemp(stage.s)) {
		kf_err(err, "cannot create a staging directory in %s: %s", o->out_dir, strerror(errno));
		goto out;
	}
	staged = 1;
	st.dir = stage.s;
	st.counts = json_object();
	st.problems = json_object();
	path_join(&data, stage.s, "data");
	path_join(&db, stage.s, "kforge.db");
	if (mkdir(data.s, 0755) < 0) {
		kf_err(err, "mkdir %s: %s", data.s, strerror(errno));
		goto out;
	}
	{
		struct export_filter f = { o->problems, o->only_verified };
		if (store_export_copy(o->db_path, db.s, &f, err) < 0)
			goto out;
	}
	if (stage_all(o, &st, db.s, &kfiles, err) < 0)
		goto out;
	if (sha256_file_hex(db.s, hex, err) < 0 || stat(db.s, &sb) < 0)
		goto out;
	ds_files_add(&st.files, "kforge.db", hex, (int64_t)sb.st_size);
	if (write_sums(&st, &kfiles, err) < 0)
		goto out;
	qsort(st.files.v, st.files.n, sizeof(*st.files.v), cmp_file);
	buf_addf(&name, "kforge-%s-%s.tar.zst", o->name, o->version);
	path_join(&r->path, o->out_dir, name.s);
	if (write_tar(r->path.s, 0, &st, db.s, r->sha256, &r->bytes, err) < 0)
		goto out;
	if (o->gz) {
		buf_setf(&name, "kforge-%s-%s.tar.gz", o->name, o->version);
		path_join(&r->gz_path, o->out_dir, name.s);
		if (write_tar(r->gz_path.s, 1, &st, db.s, r->gz_sha256, &r->gz_bytes, err) < 0)
			goto out;
	}
	r->counts = json_incref(st.counts);
	ret = 0;
out:
	if (staged)
		ds_rmtree(stage.s);
	ds_files_release(&st.files);
	ds_files_release(&kfiles);
	json_decref(st.counts);
	json_decref(st.problems);
	json_decref(st.prov);
	buf_release(&stage);
	buf_release(&db);
	buf_release(&data);
	buf_release(&name);
	return ret;
}
