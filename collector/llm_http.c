/* HTTP for the LLM proposer: one thread drives a libcurl multi handle
 * with up to cfg->concurrency transfers in flight; callers on any thread
 * hand it a request and sleep until it has succeeded or given up.
 * Retries (429, 5xx, timeouts, resets) wait with exponential back-off and
 * jitter, or at least as long as the server's Retry-After. */
#include "llm.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/log.h"
#include "core/utf8.h"
#include "core/termsafe.h"
#include "core/xalloc.h"

struct http_req {
	const char *body;
	size_t len;
	struct llm_http_result *res;
	const struct llm_config *cfg;
	CURL *easy;
	struct buf resp;
	char errbuf[CURL_ERROR_SIZE];
	int attempt;            /* attempts started */
	int overflow;
	int too_slow;
	int cancelled;
	size_t cap;
	double t0, att_t0;      /* monotonic seconds: call start, attempt start */
	double window_at;       /* slow-trickle check: window start (0: no body yet) */
	size_t window_len;      /* body bytes at window start */
	int done;
	double next_at;         /* monotonic seconds: when it may start again */
	struct http_req *next;     /* in incoming or waiting */
	struct http_req *next_live; /* in flight */
};

struct llm_http {
	const struct llm_config *cfg;
	CURLM *multi;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t done_cv;
	struct http_req *incoming, *incoming_tail; /* under mu */
	int stop;                                  /* under mu */
	struct curl_slist *headers;
	char *url;
	unsigned long long rng;
	/* thread-only state */
	struct http_req *waiting, *waiting_tail;
	struct http_req *live;
	int active;
};

static volatile sig_atomic_t cancel_flag;

void llm_cancel(void)
{
	cancel_flag = 1;
}

int llm_cancel_requested(void)
{
	return cancel_flag != 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_global(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

void llm_http_result_init(struct llm_http_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->body);
	buf_init(&r->error);
	r->attempts = json_array();
}

void llm_http_result_release(struct llm_http_result *r)
{
	buf_release(&r->body);
	buf_release(&r->error);
	json_decref(r->attempts);
	r->attempts = NULL;
}

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
	struct http_req *r = ud;
	size_t len = size * n;
	if (r->resp.len + len > r->cap) {
		r->overflow = 1;
		return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
	}
	if (!r->window_at && len) {
		r->window_at = now_s();
		r->window_len = 0;
	}
	buf_add(&r->resp, p, len);
	return len;
}

/* Slow trickle: once the body has begun, fewer than low_speed_bytes per
 * second over a window of low_speed_time_s aborts the attempt. The wait
 * for the first byte is not counted: a reasoning model may think for
 * minutes before it answers (timeout_s bounds that). */
static int on_progress(void *ud, curl_off_t dlt, curl_off_t dln, curl_off_t ult, curl_off_t uln)
{
	struct http_req *r = ud;
	const struct llm_config *c = r->cfg;
	double t;
	(void)dlt, (void)dln, (void)ult, (void)uln;
	if (cancel_flag) {
		r->cancelled = 1;
		return 1;
	}
	if (!r->window_at || c->low_speed_bytes <= 0)
		return 0;
	t = now_s();
	if (t - r->window_at < (double)c->low_speed_time_s)
		return 0;
	if ((double)(r->resp.len - r->window_len) <
	    (double)c->low_speed_bytes * (t - r->window_at)) {
		r->too_slow = 1;
		return 1; /* CURLE_ABORTED_BY_CALLBACK */
	}
	r->window_at = t;
	r->window_len = r->resp.len;
	return 0;
}

static int start_attempt(struct llm_http *h, struct http_req *r)
{
	const struct llm_config *c = h->cfg;
	CURL *e = curl_easy_init();
	if (!e)
		return -1;
	r->attempt++;
	r->overflow = 0;
	r->too_slow = 0;
	r->window_at = 0;
	r->att_t0 = now_s();
	r->errbuf[0] = '\0';
	buf_reset(&r->resp);
	curl_easy_setopt(e, CURLOPT_URL, h->url);
	curl_easy_setopt(e, CURLOPT_POST, 1L);
	curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, h->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(e, CURLOPT_PRIVATE, r);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(c->timeout_s * 1000));
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->connect_timeout_s * 1000));
	curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(e, CURLOPT_XFERINFODATA, r);
	curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)r->cap);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
	r->easy = e;
	if (curl_multi_add_handle(h->multi, e) != CURLM_OK) {
		curl_easy_cleanup(e);
		r->easy = NULL;
		return -1;
	}
	h->active++;
	r->next_live = h->live;
	h->live = r;
	return 0;
}

static void finish(struct llm_http *h, struct http_req *r)
{
	buf_reset(&r->res->body);
	buf_add(&r->res->body, r->resp.s, r->resp.len);
	r->res->retries = r->attempt > 0 ? r->attempt - 1 : 0;
	pthread_mutex_lock(&h->mu);
	r->done = 1;
	pthread_cond_broadcast(&h->done_cv);
	pthread_mutex_unlock(&h->mu);
}

static void push_waiting(struct llm_http *h, struct http_req *r)
{
	r->next = NULL;
	if (h->waiting_tail)
		h->waiting_tail->next = r;
	else
		h->waiting = r;
	h->waiting_tail = r;
}

static int retryable_curl(CURLcode cc)
{
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_COULDNT_CONNECT:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return 1;
	default:
		return 0;
	}
}

static double jitter(struct llm_http *h)
{
	/* xorshift64*: only the transfer thread draws */
	h->rng ^= h->rng >> 12;
	h->rng ^= h->rng << 25;
	h->rng ^= h->rng >> 27;
	return (double)((h->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

/* What ended an attempt, for its record: ok, http (a non-2xx status),
 * timeout, too_slow, too_large, connect, reset (TCP RST), closed (the
 * server closed without a reply), network (other transport errors),
 * cancelled. */
static const char *attempt_class(const struct http_req *r, CURLcode cc, long status,
				 long os_errno)
{
	if (r->cancelled)
		return "cancelled";
	if (r->overflow || cc == CURLE_FILESIZE_EXCEEDED)
		return "too_large";
	if (r->too_slow)
		return "too_slow";
	if (os_errno == ECONNRESET)
		return "reset";
	switch (cc) {
	case CURLE_OK:
		return status >= 200 && status < 300 ? "ok" : "http";
	case CURLE_OPERATION_TIMEDOUT:
		return "timeout";
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return "connect";
	case CURLE_GOT_NOTHING:
		return "closed";
	default:
		return "network";
	}
}

/* Appends one attempt to the call's record; t: when it ended. */
static void note_attempt(struct http_req *r, const char *cls, long status, double t)
{
	json_t *a = json_pack("{s:i, s:s, s:f, s:f}", "n", r->attempt, "class", cls, "start_ms",
			      (r->att_t0 - r->t0) * 1000, "ms", (t - r->att_t0) * 1000);
	json_object_set_new(a, "http_status", status ? json_integer(status) : json_null());
	/* the error may quote the server's bytes: kept valid UTF-8 */
	json_object_set_new(a, "error", strcmp(cls, "ok") ? json_utf8(r->res->error.s, r->res->error.len)
							   : json_null());
	json_array_append_new(r->res->attempts, a);
}

/* An attempt ended: success, retry later, or give up. */
static void attempt_done(struct llm_http *h, struct http_req *r, CURLcode cc)
{
	const struct llm_config *c = h->cfg;
	long status = 0, os_errno = 0;
	curl_off_t ra = -1;
	int retry = 0;
	struct llm_http_result *res = r->res;

	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(r->easy, CURLINFO_RETRY_AFTER, &ra);
	curl_easy_getinfo(r->easy, CURLINFO_OS_ERRNO, &os_errno);
	curl_multi_remove_handle(h->multi, r->easy);
	curl_easy_cleanup(r->easy);
	r->easy = NULL;
	h->active--;
	for (struct http_req **pp = &h->live; *pp; pp = &(*pp)->next_live)
		if (*pp == r) {
			*pp = r->next_live;
			break;
		}
	res->http_status = (int)status;
	buf_reset(&res->error);
	/* a server may echo what it was sent: the key goes no further */
	llm_redact(&r->resp, c->api_key);
	if (r->cancelled) {
		buf_setf(&res->error, LLM_CANCELLED);
	} else if (r->overflow || cc == CURLE_FILESIZE_EXCEEDED) {
		/* counted in decoded bytes (gzip too); a cut body is kept nowhere */
		explicit_bzero(r->resp.s, r->resp.len);
		buf_release(&r->resp);
		buf_setf(&res->error, "response_too_large: response larger than max_response_bytes (%zu)",
			 r->cap);
	} else if (r->too_slow) {
		buf_setf(&res->error, "response too slow: under %ld bytes/s for %ld s", c->low_speed_bytes,
			 c->low_speed_time_s);
		retry = 1;
	} else if (cc != CURLE_OK) {
		buf_setf(&res->error, "%s%s%s", curl_easy_strerror(cc), r->errbuf[0] ? ": " : "",
			 r->errbuf);
		llm_redact(&res->error, c->api_key);
		retry = retryable_curl(cc);
	} else if (status >= 200 && status < 300) {
		note_attempt(r, "ok", status, now_s());
		finish(h, r);
		return;
	} else {
		size_t n = r->resp.len < 300 ? r->resp.len : 300;
		buf_setf(&res->error, "HTTP %ld: ", status);
		termsafe_add(&res->error, r->resp.s, n, 0); /* the server's text, inert */
		retry = status == 429 || status == 408 || status >= 500;
	}
	note_attempt(r, attempt_class(r, cc, status, os_errno), status, now_s());
	if (retry && r->attempt <= c->retries) {
		double d = llm_backoff_delay(r->attempt, c->backoff_base_s, c->backoff_max_s,
					     ra >= 0 ? (double)ra : -1, jitter(h));
		log_warn("LLM request: %s; retry %d of %d in %.2f s", res->error.s, r->attempt,
			 c->retries, d);
		r->next_at = now_s() + d;
		push_waiting(h, r);
		return;
	}
	finish(h, r);
}

/* Starts waiting requests whose time has come, up to the concurrency. */
static void start_due(struct llm_http *h)
{
	double t = now_s();
	struct http_req **pp = &h->waiting, *prev = NULL;

	while (*pp) {
		struct http_req *r = *pp;
		if (h->active < h->cfg->concurrency && r->next_at <= t) {
			*pp = r->next;
			if (h->waiting_tail == r)
				h->waiting_tail = prev;
			if (start_attempt(h, r) < 0) {
				buf_setf(&r->res->error, "could not start an HTTP transfer");
				finish(h, r);
			}
			continue;
		}
		prev = r;
		pp = &r->next;
	}
}

/* ms until the first waiting request may start (0: now, or 1000). */
static long next_due_ms(struct llm_http *h)
{
	double t = now_s(), next = t + 1.0;
	if (h->active >= h->cfg->concurrency)
		return 1000;
	for (struct http_req *r = h->waiting; r; r = r->next)
		if (r->next_at < next)
			next = r->next_at;
	return next <= t ? 0 : (long)((next - t) * 1000) + 1;
}

/* Ends every request in flight or waiting with error `why`. */
/* Ends every call: why is the error, cls the class of the attempts in
 * flight ("cancelled" by a signal, "stopped" when the client shuts down). */
static void end_all(struct llm_http *h, const char *why, const char *cls)
{
	double t = now_s();
	while (h->waiting) {
		struct http_req *r = h->waiting;
		h->waiting = r->next;
		buf_setf(&r->res->error, "%s", why);
		finish(h, r);
	}
	h->waiting_tail = NULL;
	while (h->live) {
		struct http_req *r = h->live;
		h->live = r->next_live;
		curl_multi_remove_handle(h->multi, r->easy);
		curl_easy_cleanup(r->easy);
		r->easy = NULL;
		h->active--;
		buf_setf(&r->res->error, "%s", why);
		note_attempt(r, cls, 0, t);
		finish(h, r);
	}
}

static void *run(void *arg)
{
	struct llm_http *h = arg;

	for (;;) {
		struct http_req *in;
		int stop, running = 0, left;
		long wait_ms;
		CURLMsg *m;

		pthread_mutex_lock(&h->mu);
		in = h->incoming;
		h->incoming = h->incoming_tail = NULL;
		stop = h->stop;
		pthread_mutex_unlock(&h->mu);
		while (in) {
			struct http_req *nx = in->next;
			push_waiting(h, in);
			in = nx;
		}
		if (stop)
			break;
		if (cancel_flag)
			end_all(h, LLM_CANCELLED, "cancelled");
		start_due(h);
		curl_multi_perform(h->multi, &running);
		while ((m = curl_multi_info_read(h->multi, &left))) {
			struct http_req *r = NULL;
			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
			attempt_done(h, r, m->data.result);
		}
		/* retries due now (or freed slots) start at once, others wake us */
		wait_ms = next_due_ms(h);
		if (wait_ms == 0)
			continue;
		if (wait_ms > 1000)
			wait_ms = 1000;
		curl_multi_poll(h->multi, NULL, 0, (int)wait_ms, NULL);
	}
	/* stopping: everything in flight or waiting fails */
	end_all(h, "LLM client stopped", "stopped");
	return NULL;
}

int llm_http_start(struct llm_http **hp, const struct llm_config *cfg, struct buf *err)
{
	struct llm_http *h;
	struct buf hdr = BUF_INIT;
	size_t n;

	pthread_once(&curl_once, curl_global);
	if (!cfg->base_url || !*cfg->base_url)
		return kf_err(err, "no LLM base URL");
	h = xcalloc(1, sizeof(*h));
	h->cfg = cfg;
	n = strlen(cfg->base_url);
	while (n && cfg->base_url[n - 1] == '/')
		n--;
	if (n >= 17 && !strncmp(cfg->base_url + n - 17, "/chat/completions", 17))
		buf_add(&hdr, cfg->base_url, n);
	else
		buf_addf(&hdr, "%.*s/chat/completions", (int)n, cfg->base_url);
	h->url = buf_detach(&hdr, NULL);
	h->headers = curl_slist_append(NULL, "Content-Type: application/json");
	h->headers = curl_slist_append(h->headers, "Expect:");
	if (cfg->api_key) {
		buf_addf(&hdr, "Authorization: Bearer %s", cfg->api_key);
		h->headers = curl_slist_append(h->headers, hdr.s);
		explicit_bzero(hdr.s, hdr.len);
		buf_release(&hdr);
	}
	h->rng = cfg->jitter_seed ? cfg->jitter_seed : (unsigned long long)(now_s() * 1e9);
	h->rng |= 1;
	h->multi = curl_multi_init();
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->done_cv, NULL);
	if (!h->multi || !h->headers || pthread_create(&h->th, NULL, run, h) != 0) {
		if (h->multi)
			curl_multi_cleanup(h->multi);
		curl_slist_free_all(h->headers);
		pthread_mutex_destroy(&h->mu);
		pthread_cond_destroy(&h->done_cv);
		free(h->url);
		free(h);
		return kf_err(err, "could not start the LLM HTTP client");
	}
	curl_multi_setopt(h->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)cfg->concurrency);
	*hp = h;
	return 0;
}

int llm_http_post(struct llm_http *h, const char *body, size_t len, struct llm_http_result *res)
{
	struct http_req r;
	double t0 = now_s();

	memset(&r, 0, sizeof(r));
	buf_init(&r.resp);
	r.body = body;
	r.len = len;
	r.res = res;
	r.cap = h->cfg->max_response_bytes;
	r.cfg = h->cfg;
	r.next_at = t0;
	r.t0 = t0;
	res->http_status = 0;
	res->retries = 0;
	buf_reset(&res->body);
	buf_reset(&res->error);
	if (!res->attempts)
		res->attempts = json_array();
	json_array_clear(res->attempts);
	if (cancel_flag) {
		buf_setf(&res->error, LLM_CANCELLED);
		return -1;
	}
	pthread_mutex_lock(&h->mu);
	if (h->stop) {
		pthread_mutex_unlock(&h->mu);
		buf_setf(&res->error, "LLM client stopped");
		return -1;
	}
	if (h->incoming_tail)
		h->incoming_tail->next = &r;
	else
		h->incoming = &r;
	h->incoming_tail = &r;
	pthread_mutex_unlock(&h->mu);
	curl_multi_wakeup(h->multi);
	pthread_mutex_lock(&h->mu);
	while (!r.done)
		pthread_cond_wait(&h->done_cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
	buf_release(&r.resp);
	res->latency_ms = (now_s() - t0) * 1000;
	return res->error.len ? -1 : 0;
}

void llm_http_stop(struct llm_http *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->stop = 1;
	pthread_mutex_unlock(&h->mu);
	curl_multi_wakeup(h->multi);
	pthread_join(h->th, NULL);
	curl_multi_cleanup(h->multi);
	/* the header list holds the key: wipe it before freeing */
	for (struct curl_slist *s = h->headers; s; s = s->next)
		explicit_bzero(s->data, strlen(s->data));
	curl_slist_free_all(h->headers);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->done_cv);
	free(h->url);
	free(h);
}
