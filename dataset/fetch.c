/* kforge dataset fetch: libcurl download with TLS verification, resume of
 * a partial download (Range), a size limit, SHA-256 check, optionally the
 * dataset's own check (on the downloaded file: nothing is extracted from a
 * tarball that fails it), then safe extraction. */
#include "dataset.h"
#include "ds_int.h"
#include "core/fsutil.h"
#include "core/sha256.h"
#include "core/version.h"
#include "core/xalloc.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FETCH_MAX_REDIRECTS 5

void fetch_result_init(struct fetch_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->archive);
	buf_init(&r->dir);
	buf_init(&r->report);
}

void fetch_result_release(struct fetch_result *r)
{
	buf_release(&r->archive);
	buf_release(&r->dir);
	buf_release(&r->report);
}

struct dl {
	FILE *f;
	int64_t offset;        /* bytes already in the .part file */
	int64_t written, max;
	int over, checked, restart;
	int redirect;          /* a 3xx answer: its body is not the file */
	CURL *c;
	const struct fetch_opts *o;
};

static size_t on_data(char *p, size_t sz, size_t n, void *ctx)
{
	struct dl *d = ctx;
	size_t len = sz * n;

	if (!d->checked) {
		long code = 0;
		d->checked = 1;
		curl_easy_getinfo(d->c, CURLINFO_RESPONSE_CODE, &code);
		d->redirect = code >= 300 && code < 400;
		/* A 200 to a Range request: the server sends it all again. */
		if (d->offset > 0 && code == 200) {
			if (ftruncate(fileno(d->f), 0) < 0 || fseek(d->f, 0, SEEK_SET) < 0)
				return 0;
			d->offset = 0;
			d->restart = 1;
		}
	}
	if (d->redirect)
		return len;
	if (d->offset + d->written + (int64_t)len > d->max) {
		d->over = 1;
		return 0;
	}
	if (fwrite(p, 1, len, d->f) != len)
		return 0;
	d->written += (int64_t)len;
	return len;
}

static int on_progress(void *ctx, curl_off_t total, curl_off_t now, curl_off_t ut, curl_off_t un)
{
	struct dl *d = ctx;
	(void)ut;
	(void)un;
	if (d->o->progress)
		d->o->progress(d->o->progress_ctx, d->offset + (int64_t)now,
			       total > 0 ? d->offset + (int64_t)total : 0);
	return 0;
}

/* 127.0.0.0/8, ::1 or localhost (as written in the URL). */
static int loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;
	char h[64];
	size_t n = strlen(host);

	if (!strcmp(host, "localhost"))
		return 1;
	if (n >= 2 && n < sizeof(h) + 2 && host[0] == '[' && host[n - 1] == ']') {
		memcpy(h, host + 1, n - 2);
		h[n - 2] = 0;
		host = h;
	}
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* The scheme rule, for the URL given and for every redirect: https, or
 * http to a loopback host. Fills *plain_http. 0 or -1 with err. */
static int url_allowed(CURLU *u, const char *url, int *plain_http, struct buf *err)
{
	char *scheme = NULL, *host = NULL;
	int r = 0;

	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		r = kf_err(err, "not a valid URL: %s", url);
	} else {
		*plain_http = !strcmp(scheme, "http");
		if (strcmp(scheme, "https") && !(*plain_http && loopback(host)))
			r = kf_err(err, "%s: only https:// (or http:// to a loopback address) is accepted",
				   url);
	}
	curl_free(scheme);
	curl_free(host);
	return r;
}

/* Checks the URL and returns its file name (new string) or NULL. */
static char *url_name(const char *url, int *plain_http, struct buf *err)
{
	CURLU *u = curl_url();
	char *path = NULL, *name = NULL;
	const char *base;

	if (url_allowed(u, url, plain_http, err) < 0)
		goto out;
	if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK) {
		kf_err(err, "not a valid URL: %s", url);
		goto out;
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!*base || strlen(base) > 200 || strspn(base, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789._+-") != strlen(base) || base[0] == '.') {
		kf_err(err, "%s: the URL must end in a plain file name", url);
		goto out;
	}
	name = xstrdup(base);
out:
	curl_free(path);
	curl_url_cleanup(u);
	return name;
}

static size_t stem_len(const char *name)
{
	static const char *const ext[] = { ".tar.zst", ".tar.gz", ".tgz", ".tar.xz", ".tar", NULL };
	size_t n = strlen(name);
	for (int i = 0; ext[i]; i++) {
		size_t e = strlen(ext[i]);
		if (n > e && !strcmp(name + n - e, ext[i]))
			return n - e;
	}
	return 0;
}

/* One attempt. Returns 1 when the server cannot resume (start over). */
/* A 3xx's Location resolved against URL, for a transfer that stopped before
 * libcurl resolved it (a resumed request's range error): a new string in
 * *keep (freed by the caller), or NULL. */
static char *location(CURL *c, CURLU *u, const char *url, char **keep)
{
	struct curl_header *h = NULL;

	curl_free(*keep);
	*keep = NULL;
	if (curl_easy_header(c, "Location", 0, CURLH_HEADER, -1, &h) != CURLHE_OK || !h || !h->value)
		return NULL;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_set(u, CURLUPART_URL, h->value, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_URL, keep, 0) != CURLUE_OK)
		return NULL;
	return *keep;
}

static int download_once(const struct fetch_opts *o, const char *part, int plain_http,
			 int *resumed, struct buf *err)
{
	char ebuf[CURL_ERROR_SIZE] = "";
	struct dl d;
	struct stat sb;
	struct buf ua = BUF_INIT;
	CURLcode rc;
	int ret = -1, was_plain;
	char *loc = NULL;       /* a Location resolved here (location()) */
	long code = 0;
	char *url = xstrdup(o->url);
	CURLU *cu = xcheck(curl_url(), "a libcurl URL handle");

	memset(&d, 0, sizeof(d));
	d.o = o;
	d.max = o->max_bytes;
	d.f = fopen(part, "ab");
	if (!d.f) {
		free(url);
		curl_url_cleanup(cu);
		return kf_err(err, "cannot open %s: %s", part, strerror(errno));
	}
	if (fstat(fileno(d.f), &sb) == 0)
		d.offset = (int64_t)sb.st_size;
	if (d.offset > d.max) {
		fclose(d.f);
		unlink(part);
		free(url);
		curl_url_cleanup(cu);
		return kf_err(err, "a partial download over the limit was removed; run again");
	}
	d.c = curl_easy_init();
	if (!d.c) {
		fclose(d.f);
		free(url);
		curl_url_cleanup(cu);
		return kf_err(err, "curl_easy_init failed");
	}
	buf_addf(&ua, "kforge/%s", kforge_version());
	curl_easy_setopt(d.c, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(d.c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(d.c, CURLOPT_WRITEDATA, &d);
	curl_easy_setopt(d.c, CURLOPT_FAILONERROR, 1L);
	/* Redirects are followed here, not by libcurl: each hop must pass
	 * the scheme rule before anything connects to it. */
	curl_easy_setopt(d.c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(d.c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(d.c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(d.c, CURLOPT_USERAGENT, ua.s);
	curl_easy_setopt(d.c, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(d.c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(d.c, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(d.c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(d.c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)(d.max - d.offset));
	if (o->progress) {
		curl_easy_setopt(d.c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(d.c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(d.c, CURLOPT_XFERINFODATA, &d);
	}
	if (d.offset > 0)
		curl_easy_setopt(d.c, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)d.offset);
	for (int hops = 0;; hops++) {
		char *next = NULL;
		curl_easy_setopt(d.c, CURLOPT_URL, url);
		curl_easy_setopt(d.c, CURLOPT_PROTOCOLS_STR, plain_http ? "http" : "https");
		d.checked = d.redirect = 0;
		rc = curl_easy_perform(d.c);
		curl_easy_getinfo(d.c, CURLINFO_RESPONSE_CODE, &code);
		/* A resumed request's redirect is a hop too: without follow-location
		 * libcurl reads a 3xx's body against the range asked for. */
		if ((rc != CURLE_OK && !(rc == CURLE_RANGE_ERROR && code >= 300 && code < 400)) ||
		    code < 300 || code >= 400)
			break;
		if (curl_easy_getinfo(d.c, CURLINFO_REDIRECT_URL, &next) != CURLE_OK || !next)
			next = location(d.c, cu, url, &loc);
		if (!next) {
			kf_err(err, "%s: HTTP %ld without a Location", url, code);
			goto out;
		}
		if (hops >= FETCH_MAX_REDIRECTS) {
			kf_err(err, "%s: more than %d redirects", o->url, FETCH_MAX_REDIRECTS);
			goto out;
		}
		free(url);
		url = xstrdup(next);
		was_plain = plain_http;
		if (url_allowed(cu, url, &plain_http, err) < 0 || (plain_http && !was_plain)) {
			/* and never from https down to plain http, loopback or not */
			kf_err(err, "redirect refused: %s: only https:// (or http:// to a loopback "
			       "address, from a plain http:// URL) is accepted", url);
			goto out;
		}
	}
	if (fflush(d.f) != 0 || fsync(fileno(d.f)) < 0) {
		kf_err(err, "writing %s: %s", part, strerror(errno));
		goto out;
	}
	if (d.over || rc == CURLE_FILESIZE_EXCEEDED) {
		kf_err(err, "the download is over the limit of %lld bytes (--max-bytes)", (long long)d.max);
		fclose(d.f);
		d.f = NULL;
		unlink(part);
		goto out;
	}
	if (rc == CURLE_HTTP_RETURNED_ERROR && code == 416 && d.offset > 0) {
		/* The partial file is not a prefix of what the server has. */
		fclose(d.f);
		d.f = NULL;
		unlink(part);
		kf_err(err, "the server refused to resume (HTTP 416); the partial file was removed, run again");
		goto out;
	}
	if (rc == CURLE_RANGE_ERROR && d.offset > 0) {
		if (ftruncate(fileno(d.f), 0) < 0) {
			kf_err(err, "%s: %s", part, strerror(errno));
			goto out;
		}
		ret = 1;
		goto out;
	}
	if (rc != CURLE_OK) {
		kf_err(err, "%s: %s (partial download kept in %s; run again to resume)", o->url,
		       ebuf[0] ? ebuf : curl_easy_strerror(rc), part);
		goto out;
	}
	*resumed = d.offset > 0 && !d.restart;
	ret = 0;
out:
	if (d.f)
		fclose(d.f);
	curl_easy_cleanup(d.c);
	buf_release(&ua);
	free(url);
	curl_free(loc);
	curl_url_cleanup(cu);
	return ret;
}

static int download(const struct fetch_opts *o, const char *part, int plain_http, int *resumed,
		    struct buf *err)
{
	int r = download_once(o, part, plain_http, resumed, err);
	if (r == 1) /* the server ignores Range: fetch it whole */
		r = download_once(o, part, plain_http, resumed, err);
	return r == 1 ? kf_err(err, "the server cannot resume and the restart failed") : r;
}

/* dataset_verify on the downloaded file, before anything is extracted. */
static int verify_download(const char *part, struct fetch_result *r, struct buf *err)
{
	struct buf e2 = BUF_INIT;
	int v = dataset_verify(part, &r->report, &r->verified, &e2);

	if (v == -2)
		kf_err(err, "the dataset check failed; nothing was extracted and the download was removed");
	else if (v < 0)
		kf_err(err, "checking the dataset: %s (nothing was extracted, the download was removed)",
		       e2.s);
	buf_release(&e2);
	return v;
}

int dataset_fetch(const struct fetch_opts *o, struct fetch_result *r, struct buf *err)
{
	struct buf part = BUF_INIT, want = BUF_INIT;
	char *name = NULL;
	int plain = 0, ret = -1;
	size_t sl;

	if (o->sha256) {
		for (const char *p = o->sha256; *p; p++)
			buf_addc(&want, (char)tolower((unsigned char)*p));
		if (want.len != 64 || strspn(want.s, "0123456789abcdef") != 64)
			return kf_err(err, "--sha256 needs 64 hex digits");
	}
	name = url_name(o->url, &plain, err);
	if (!name)
		goto out;
	sl = stem_len(name);
	if (!sl) {
		kf_err(err, "%s is not a tarball name (.tar.zst, .tar.gz, .tgz, .tar.xz, .tar)", name);
		goto out;
	}
	if (mkdir_p(o->out_dir, err) < 0)
		goto out;
	path_join(&r->archive, o->out_dir, name);
	buf_addf(&part, "%s.part", r->archive.s);
	name[sl] = 0;   /* the stem names the directory */
	path_join(&r->dir, o->out_dir, name);
	if (access(r->dir.s, F_OK) == 0) {
		kf_err(err, "%s exists; remove it or choose another -o", r->dir.s);
		goto out;
	}
	if (download(o, part.s, plain, &r->resumed, err) < 0)
		goto out;
	if (sha256_file_hex(part.s, r->sha256, err) < 0)
		goto out;
	if (want.len && strcmp(want.s, r->sha256)) {
		kf_err(err, "SHA-256 mismatch: expected %s, got %s (download removed)", want.s, r->sha256);
		unlink(part.s);
		goto out;
	}
	if (o->verify) {
		ret = verify_download(part.s, r, err);
		if (ret < 0) {
			unlink(part.s);
			goto out;
		}
		ret = -1;
	}
	if (rename(part.s, r->archive.s) < 0) {
		kf_err(err, "cannot rename %s: %s", part.s, strerror(errno));
		goto out;
	}
	ret = dataset_extract_safe(r->archive.s, r->dir.s, o->max_extract, err);
out:
	free(name);
	buf_release(&part);
	buf_release(&want);
	return ret;
}
