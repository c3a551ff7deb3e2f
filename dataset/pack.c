/* kforge pack: stage every file in a private directory beside the output,
 * then write one tarball in sorted order with fixed metadata. */
#include "dataset.h"
#include "ds_int.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "core/log.h"
#include "store/store_export.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ZSTD_LEVEL "3"    /* fixed: the bytes depend on it; 19 is 50x slower for ~5% */

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
	if (!*p || *p == '/' || strlen(p) > DS_MAX_PATH)
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

/* ---- writing the tarball ---------------------------------------------- */

struct kf_ctx {
	struct ds_files *files;  /* kernel files' checksums, filled on the first pass */
	struct archive *a;
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
	if (c->files) {
		sha256_hex(src, n, hex);
		ds_files_add(c->files, path, hex, (int64_t)n);
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

/* Copies a staged file in; fills f->sha on the way when it is empty. */
static int copy_file_in(struct archive *a, const char *stage, struct ds_file *f,
			long long mtime, struct buf *err)
{
	struct buf path = BUF_INIT;
	char chunk[1 << 16];
	int64_t left = f->size;
	struct sha256 h;
	int fd, ret = -1, hashing = !f->sha[0];

	if (hashing)
		sha256_init(&h);
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
		if (hashing)
			sha256_update(&h, chunk, (size_t)n);
		if (write_data(a, chunk, (size_t)n, err) < 0)
			goto out;
		left -= n;
	}
	if (hashing) {
		sha256_final_hex(&h, f->sha);
		hashing = 0;
	}
	ret = 0;
out:
	if (hashing)
		sha256_release(&h);
	if (fd >= 0)
		close(fd);
	buf_release(&path);
	return ret;
}

/* SHA256SUMS: every other file, by path. */
static void make_sums(const struct ds_files *staged, const struct ds_files *kfiles, struct buf *out)
{
	struct ds_files all = { NULL, 0, 0 };
	for (size_t i = 0; i < staged->n; i++)
		ds_files_add(&all, staged->v[i].path, staged->v[i].sha, staged->v[i].size);
	for (size_t i = 0; i < kfiles->n; i++)
		ds_files_add(&all, kfiles->v[i].path, kfiles->v[i].sha, kfiles->v[i].size);
	qsort(all.v, all.n, sizeof(*all.v), cmp_file);
	for (size_t i = 0; i < all.n; i++)
		buf_addf(out, "%s  %s\n", all.v[i].sha, all.v[i].path);
	ds_files_release(&all);
}

/* Writes the tarball into the temporary file fd: the staged files and the
 * kernel files in byte order of their paths, then SHA256SUMS, which covers
 * them all and so comes last (one read of each file: checksummed as it is
 * written). On the first call sums is empty and gets filled. */
static int write_tar(int fd, int gz, struct ds_stage *st, const char *db_copy, struct buf *sums,
		     struct buf *err)
{
	struct archive *a = archive_write_new();
	struct ds_files kfiles = { NULL, 0, 0 };
	struct store s;
	int first = sums->len == 0;
	struct kf_ctx kc = { first ? &kfiles : NULL, a, st->mtime, err };
	int ret = -1, open_store = 0;
	size_t i;

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
	/* Staged files before "kernels/", the kernels (in path order from the
	 * store), the remaining staged files. */
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
	if (first)
		make_sums(&st->files, &kfiles, sums);
	if (add_entry(a, "SHA256SUMS", (int64_t)sums->len, st->mtime, err) < 0 ||
	    write_data(a, sums->s, sums->len, err) < 0)
		goto out;
	if (archive_write_close(a) != ARCHIVE_OK) {
		kf_err(err, "tar: %s", archive_error_string(a));
		goto out;
	}
	ret = 0;
out:
	if (open_store)
		store_close(&s);
	archive_write_free(a);
	ds_files_release(&kfiles);
	return ret;
}

/* The bounds `dataset verify` and `fetch` hold every tarball to (entries,
 * expansion over the tarball's size: ds_limits), read back the way they
 * read it: a tarball they would refuse as a bomb is an error here, not a
 * published dataset nobody can open. */
static int check_limits(const char *tmp, const char *dst, struct buf *err)
{
	struct ds_reader rd;
	struct archive_entry *e;
	const char *name;
	struct buf e2 = BUF_INIT;
	int r;

	if (ds_reader_open(&rd, tmp, &e2) < 0) {
		r = -1;
	} else {
		while ((r = ds_reader_next(&rd, &e, &name, &e2)) == 1)
			;
		ds_reader_close(&rd);
	}
	if (r < 0)
		kf_err(err, "%s: dataset verify would refuse this tarball (%s): a text in the store "
		       "compresses too well; not written", dst, e2.s);
	buf_release(&e2);
	return r < 0 ? -1 : 0;
}

/* Syncs a finished temporary tarball, checksums it and renames it. */
static int finish_tar(int fd, const char *tmp, const char *dst, char sha[65], long long *bytes,
		      struct buf *err)
{
	struct stat sb;
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0 || fstat(fd, &sb) < 0)
		return kf_err(err, "%s: %s", tmp, strerror(errno));
	*bytes = (long long)sb.st_size;
	if (sha256_file_hex(tmp, sha, err) < 0)
		return -1;
	if (rename(tmp, dst) < 0)
		return kf_err(err, "cannot rename %s to %s: %s", tmp, dst, strerror(errno));
	{
		/* DST.sha256 in sha256sum's format, for downloads pages and fetch --sha256. */
		struct buf side = BUF_INIT, line = BUF_INIT;
		const char *base = strrchr(dst, '/');
		int r;
		buf_addf(&side, "%s.sha256", dst);
		buf_addf(&line, "%s  %s\n", sha, base ? base + 1 : dst);
		r = write_file_atomic(side.s, line.s, line.len, err);
		buf_release(&side);
		buf_release(&line);
		return r;
	}
}

static long long parse_iso(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return (long long)timegm(&tm);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void step(const char *what, double *t)
{
	double n = now_s();
	log_debug("pack: %s took %.2f s", what, n - *t);
	*t = n;
}

/* data/evaluations.jsonl (per-trial values: the biggest file) and
 * pairs.jsonl are written by a second thread with its own connection; the
 * files are independent, so the bytes do not depend on the timing. */
struct evals_job {
	struct ds_stage st;
	const char *db;
	struct buf err;
	int ret;
	double t_evals, t_pairs;  /* seconds, for the debug log */
};

static void *evals_thread(void *p)
{
	struct evals_job *j = p;
	struct store s;

	j->ret = -1;
	if (store_open(&s, j->db, STORE_READONLY, &j->err) < 0)
		return NULL;
	j->st.s = &s;
	j->t_evals = now_s();
	j->ret = ds_write_table(&j->st, "evals", &j->err);
	j->t_pairs = now_s();
	j->t_evals = j->t_pairs - j->t_evals;
	if (j->ret == 0)
		j->ret = ds_write_pairs(&j->st, &j->err);
	j->t_pairs = now_s() - j->t_pairs;
	j->st.s = NULL;
	store_close(&s);
	return NULL;
}

static int stage_all(const struct pack_opts *o, struct ds_stage *st, const char *db_copy,
		     double *tp, struct buf *err)
{
	struct store s;
	json_t *filter = json_pack("{s:O?, s:b}", "problems", o->problems, "only_verified",
				   o->only_verified);
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	int ret = -1;
	double t = *tp;

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
	{
		struct evals_job j;
		pthread_t th;
		int started, r;

		memset(&j, 0, sizeof(j));
		j.st.dir = st->dir;
		j.st.counts = json_object();
		j.st.types = json_object();
		j.db = db_copy;
		buf_init(&j.err);
		started = pthread_create(&th, NULL, evals_thread, &j) == 0;
		if (!started)
			evals_thread(&j);
		r = ds_write_tables(st, "evals", err);
		if (r == 0) {
			step("tables", &t);
			r = ds_write_trajectories(st, err);
		}
		if (r == 0) {
			step("trajectories", &t);
			r = ds_write_sft(st, err);
		}
		if (r == 0)
			step("sft", &t);
		if (started)
			pthread_join(th, NULL);
		step("waiting for the second thread", &t);
		log_debug("pack: (second thread: evaluations %.2f s, pairs %.2f s)", j.t_evals, j.t_pairs);
		for (size_t i = 0; i < j.st.files.n; i++)
			ds_files_add(&st->files, j.st.files.v[i].path, j.st.files.v[i].sha,
				     j.st.files.v[i].size);
		json_object_update(st->counts, j.st.counts);
		json_object_update(st->types, j.st.types);
		if (r == 0 && j.ret < 0)
			r = kf_err(err, "%s", j.err.s);
		ds_files_release(&j.st.files);
		json_decref(j.st.counts);
		json_decref(j.st.types);
		json_decref(j.st.problems);
		buf_release(&j.err);
		if (r < 0)
			goto out;
	}
	if (ds_write_schema(st, err) < 0 ||
	    ds_write_provenance(st, o->name, o->version, filter, err) < 0 ||
	    ds_write_card(st, o->name, o->version, o->license, err) < 0)
		goto out;
	step("card, schema, provenance", &t);
	*tp = t;
	ret = 0;
out:
	st->s = NULL;
	store_close(&s);
	json_decref(filter);
	return ret;
}

static int tmp_beside(const char *dst, struct buf *tmp, struct buf *err)
{
	int fd;
	buf_reset(tmp);
	buf_addf(tmp, "%s.tmp.XXXXXX", dst);
	fd = mkstemp(tmp->s);
	if (fd < 0)
		kf_err(err, "cannot create %s: %s", tmp->s, strerror(errno));
	return fd;
}

int dataset_pack(const struct pack_opts *o, struct pack_result *r, struct buf *err)
{
	struct ds_stage st;
	struct buf stage = BUF_INIT, db = BUF_INIT, data = BUF_INIT, name = BUF_INIT;
	struct buf sums = BUF_INIT, tmp = BUF_INIT, gztmp = BUF_INIT;
	struct store chk;
	struct stat sb;
	int ret = -1, staged = 0, fd = -1, gzfd = -1;
	double t = now_s();

	memset(&st, 0, sizeof(st));
	if (!valid_word(o->name, 0))
		return kf_err(err, "dataset name '%s': use letters, digits, '.', '-', '_'", o->name ? o->name : "");
	if (!valid_version(o->version))
		return kf_err(err, "version '%s' is not X.Y.Z", o->version ? o->version : "");
	if (store_open(&chk, o->db_path, STORE_READONLY, err) < 0)
		return -1;
	if (o->problems) {
		json_t *unknown = store_export_unknown_problems(&chk, o->problems, err);
		if (!unknown || json_array_size(unknown)) {
			if (unknown) {
				struct buf l = BUF_INIT;
				json_add_compact(&l, unknown);
				kf_err(err, "no such problem(s) in the store: %s", l.s);
				buf_release(&l);
			}
			json_decref(unknown);
			store_close(&chk);
			return -1;
		}
		json_decref(unknown);
	}
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
	st.types = json_object();
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
	step("store copy", &t);
	if (stage_all(o, &st, db.s, &t, err) < 0)
		goto out;
	if (stat(db.s, &sb) < 0) {
		kf_err(err, "%s: %s", db.s, strerror(errno));
		goto out;
	}
	ds_files_add(&st.files, "kforge.db", "", (int64_t)sb.st_size); /* checksummed in the tar */
	qsort(st.files.v, st.files.n, sizeof(*st.files.v), cmp_file);
	buf_addf(&name, "kforge-%s-%s.tar.zst", o->name, o->version);
	path_join(&r->path, o->out_dir, name.s);
	if ((fd = tmp_beside(r->path.s, &tmp, err)) < 0 || write_tar(fd, 0, &st, db.s, &sums, err) < 0 ||
	    check_limits(tmp.s, r->path.s, err) < 0)
		goto out;
	step("tar.zst", &t);
	if (o->gz) {
		buf_setf(&name, "kforge-%s-%s.tar.gz", o->name, o->version);
		path_join(&r->gz_path, o->out_dir, name.s);
		if ((gzfd = tmp_beside(r->gz_path.s, &gztmp, err)) < 0 ||
		    write_tar(gzfd, 1, &st, db.s, &sums, err) < 0 ||
		    check_limits(gztmp.s, r->gz_path.s, err) < 0)
			goto out;
		step("tar.gz", &t);
	}
	/* The staging files go before the sync: deleted, their pages need
	 * never reach the disk. */
	ds_rmtree(stage.s);
	staged = 0;
	if (finish_tar(fd, tmp.s, r->path.s, r->sha256, &r->bytes, err) < 0)
		goto out;
	if (o->gz && finish_tar(gzfd, gztmp.s, r->gz_path.s, r->gz_sha256, &r->gz_bytes, err) < 0)
		goto out;
	step("sync and checksum", &t);
	r->counts = json_incref(st.counts);
	ret = 0;
out:
	if (staged)
		ds_rmtree(stage.s);
	if (fd >= 0)
		close(fd);
	if (gzfd >= 0)
		close(gzfd);
	if (ret < 0 && tmp.len)
		unlink(tmp.s);
	if (ret < 0 && gztmp.len)
		unlink(gztmp.s);
	ds_files_release(&st.files);
	json_decref(st.counts);
	json_decref(st.types);
	json_decref(st.problems);
	json_decref(st.prov);
	buf_release(&stage);
	buf_release(&db);
	buf_release(&data);
	buf_release(&name);
	buf_release(&sums);
	buf_release(&tmp);
	buf_release(&gztmp);
	return ret;
}
