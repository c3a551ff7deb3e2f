/* A scripted OpenAI-compatible chat-completions server for tests, on
 * 127.0.0.1 only (ephemeral port). Each request takes the next step of
 * the script; when the steps run out, the default mode answers.
 *
 *   mockllm --port-file F [--log F] [--script S.json] [--mode M]... [--default M]
 *           [--delay-ms N] [--max-seconds N]
 *
 * Modes: ok, 429 (Retry-After), 500, timeout (never answers), reset
 * (connection reset), malformed (invalid JSON), nocode (a reply without a
 * code block), big (a reply of `bytes`), trickle (a valid reply sent one
 * byte every `interval_ms`), unauthorized (401, or `status`, that echoes
 * the bearer token, as careless servers do), badutf8 (an "ok" reply with
 * bytes that are not UTF-8 in its content: not valid JSON), raw (`status`, default 200,
 * with the bytes of `body` or of the file `body_file` and the header lines
 * `headers`, e.g. "Content-Encoding: gzip"). Script: {"steps": [{"mode": "429",
 * "retry_after": 1}, {"mode": "ok", "content": "..."}], "default": {...}}.
 * Any reply step may add "usage" (raw JSON text for the usage object) and
 * "echo_key": true (the bearer token, in every encoding that decodes to it:
 * plain, \u-escaped in lower and upper case hex, %-encoded, base64 at
 * three alignments, put into the idea texts and kernel sources). 
 *
 * "ok" without content answers by the task named in the prompt: ideas
 * (a numbered list, labelled, the last one unlabelled), implementations
 * (ReLU kernels for the fixture problem, as many as asked, one with a
 * separate ```launch fence) or a repair; a request with "n" > 1 gets n
 * choices of one kernel each.
 *
 * The log gets one JSON line per request: method, path, the SHA-256 of
 * the bearer token (never the token), the body, the mode used and how
 * many requests were being served at that moment (inflight). --delay-ms
 * holds every normal reply that long. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/fsutil.h"
#include "core/json.h"
#include "core/sha256.h"

static json_t *steps, *dflt;
static size_t next_step;
static int nreq, inflight, delay_ms;
static FILE *log_fp;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static json_t *mode_obj(const char *m)
{
	return json_pack("{s:s}", "mode", m);
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void reply(int fd, int status, const char *reason, const char *extra, const char *body,
		  size_t len)
{
	struct buf h = BUF_INIT;
	buf_addf(&h, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%s\r\n",
		 status, reason, len, extra ? extra : "");
	send_all(fd, h.s, h.len);
	send_all(fd, body, len);
	buf_release(&h);
}

static void add_kernel(struct buf *c, int v, int separate_launch)
{
	int bs = 128 << (v % 4);
	buf_addf(c, "Variant %d uses blocks of %d threads for coalesced loads.\n\n```cuda\n", v, bs);
	buf_addf(c,
		 "extern \"C\" __global__ void relu_v%d(const float* __restrict__ x, float* __restrict__ y,\n"
		 "                                  long long n)\n"
		 "{\n"
		 "    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
		 "    if (i < n) y[i] = fmaxf(x[i], 0.0f);\n"
		 "}\n", v);
	if (separate_launch) {
		buf_addf(c, "```\n\n```launch\nrelu_v%d<<<ceil_div(batch_size * dim, %d), %d>>>"
			    "(x, y, batch_size * dim);\n```\n\n", v, bs, bs);
	} else {
		buf_addf(c, "\n/*@launch\nrelu_v%d<<<ceil_div(batch_size * dim, %d), %d>>>"
			    "(x, y, batch_size * dim);\n@*/\n```\n\n", v, bs, bs);
	}
}

static int number_after(const char *body, const char *pat, int def)
{
	/* the first occurrence followed by a number */
	for (const char *p = strstr(body, pat); p; p = strstr(p + 1, pat))
		if (p[strlen(pat)] >= '0' && p[strlen(pat)] <= '9')
			return atoi(p + strlen(pat));
	return def;
}

static void auto_content(const char *body, struct buf *c)
{
	if (strstr(body, "Task: propose")) {
		static const char *const ideas[] = {
			"[memory, parallelism] Use float4 vectorized loads and stores so each thread moves 16 bytes.",
			"[control] Unroll the grid-stride loop by four to cut loop overhead.",
			"[compute] Replace the comparison with the fmaxf intrinsic.",
			"[async] Prefetch the next tile with cp.async while computing the current one.",
			"[parallelism, occupancy] Launch exactly enough blocks to fill every SM twice.",
			"Use half precision storage for the intermediate values.",
		};
		int k = number_after(body, "Propose ", 3);
		if (k < 1 || k > 6)
			k = 3;
		buf_adds(c, "Here are the ideas:\n\n");
		for (int i = 0; i < k; i++)
			buf_addf(c, "%d. %s\n", i + 1, i == k - 1 ? ideas[5] : ideas[i]);
	} else if (strstr(body, "Task: implement")) {
		int m = number_after(body, "Write ", 1);
		if (m < 1 || m > 8)
			m = 1;
		for (int i = 0; i < m; i++)
			add_kernel(c, i, i == 1);
	} else if (strstr(body, "Task: repair")) {
		buf_adds(c, "The launch block named the wrong size; fixed.\n\n");
		add_kernel(c, 7, 0);
	} else {
		buf_adds(c, "Hello.");
	}
}

/* n > 1 ("n" in the request): n choices, the i-th with kernel variant i. */
static void completion(const char *content, const char *body, size_t body_len, int n,
		       const char *usage_raw, struct buf *out)
{
	json_t *choices = json_array(), *o;
	size_t clen = 0;
	for (int i = 0; i < n; i++) {
		struct buf alt = BUF_INIT;
		if (n > 1)
			add_kernel(&alt, i + 2, 0);
		else
			buf_adds(&alt, content);
		clen += alt.len;
		json_array_append_new(choices,
				      json_pack("{s:i, s:{s:s, s:s%}, s:s}", "index", i, "message",
						"role", "assistant", "content", alt.s, alt.len,
						"finish_reason", "stop"));
		buf_release(&alt);
	}
	(void)body;
	o = json_pack("{s:s, s:s, s:s, s:o, s:{s:i, s:i, s:i, s:{s:i}}}", "id", "chatcmpl-mock",
		      "object", "chat.completion", "model", "mock", "choices", choices, "usage",
		      "prompt_tokens", (int)(body_len / 4), "completion_tokens", (int)(clen / 4),
		      "total_tokens", (int)(body_len / 4 + clen / 4), "completion_tokens_details",
		      "reasoning_tokens", 5);
	if (usage_raw)
		json_object_del(o, "usage");
	char *s = json_dumps(o, JSON_COMPACT);
	buf_adds(out, s);
	free(s);
	json_decref(o);
	if (usage_raw && out->len) {
		out->s[--out->len] = '\0'; /* the closing brace */
		buf_addf(out, ",\"usage\":%s}", usage_raw);
	}
}

/* s with every `from` replaced by `to`. */
static void replace_all(struct buf *s, const char *from, const char *to)
{
	struct buf t = BUF_INIT;
	size_t fl = strlen(from), i = 0;
	char *hit;
	while ((hit = memmem(s->s + i, s->len - i, from, fl))) {
		buf_add(&t, s->s + i, (size_t)(hit - s->s) - i);
		buf_adds(&t, to);
		i = (size_t)(hit - s->s) + fl;
	}
	buf_add(&t, s->s + i, s->len - i);
	buf_release(s);
	*s = t;
}

static void b64(const char *p, size_t n, struct buf *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)p[i] << 16;
		if (i + 1 < n)
			v |= (unsigned char)p[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)p[i + 2];
		buf_addc(out, a[v >> 18 & 63]);
		buf_addc(out, a[v >> 12 & 63]);
		buf_addc(out, i + 1 < n ? a[v >> 6 & 63] : '=');
		buf_addc(out, i + 2 < n ? a[v & 63] : '=');
	}
}

/* The key in every form that decodes to it, as raw JSON string text. */
static void key_forms(const char *key, struct buf *out)
{
	size_t n = strlen(key);
	struct buf t = BUF_INIT;
	buf_adds(out, key);
	buf_adds(out, " json:");
	for (size_t i = 0; i < n; i++)
		buf_addf(out, "\\u%04x", (unsigned char)key[i]);
	buf_adds(out, " JSON:");
	for (size_t i = 0; i < n; i++)
		buf_addf(out, "\\u%04X", (unsigned char)key[i]);
	buf_adds(out, " url:");
	for (size_t i = 0; i < n; i++)
		buf_addf(out, "%%%02X", (unsigned char)key[i]);
	for (int a = 0; a < 3; a++) {
		buf_reset(&t);
		buf_add(&t, "xx", (size_t)a);
		buf_adds(&t, key);
		buf_addf(out, " b64-%d:", a);
		b64(t.s, t.len, out);
	}
	buf_release(&t);
}

/* Serves one request; returns 0 to keep the connection, -1 to close it. */
static int serve(int fd, const char *method, const char *path, const char *auth,
		 const char *body, size_t blen)
{
	json_t *step, *logl;
	const char *mode;
	char auth_hex[65] = "";
	struct buf out = BUF_INIT, content = BUF_INIT;
	int n, rc = 0;

	pthread_mutex_lock(&mu);
	n = ++nreq;
	inflight++;
	if (next_step < json_array_size(steps))
		step = json_incref(json_array_get(steps, next_step++));
	else
		step = json_incref(dflt);
	pthread_mutex_unlock(&mu);
	mode = json_string_value(json_object_get(step, "mode"));
	if (!mode)
		mode = "ok";
	if (auth && !strncasecmp(auth, "Bearer ", 7))
		sha256_hex(auth + 7, strlen(auth + 7), auth_hex);
	pthread_mutex_lock(&mu);
	logl = json_pack("{s:i, s:s, s:s, s:s, s:b, s:s%, s:s, s:i}", "n", n, "method", method,
			 "path", path, "auth_sha256", auth_hex, "auth", auth != NULL, "body", body,
			 blen, "mode", mode, "inflight", inflight);
	pthread_mutex_unlock(&mu);
	if (!logl) /* body not UTF-8 */
		logl = json_pack("{s:i, s:s, s:s}", "n", n, "method", method, "mode", mode);
	pthread_mutex_lock(&mu);
	if (log_fp) {
		char *s = json_dumps(logl, JSON_COMPACT);
		fprintf(log_fp, "%s\n", s);
		fflush(log_fp);
		free(s);
	}
	pthread_mutex_unlock(&mu);
	json_decref(logl);

	if (strcmp(path, "/v1/chat/completions") || strcmp(method, "POST")) {
		reply(fd, 404, "Not Found", NULL, "{\"error\":{\"message\":\"no such route\"}}", 37);
	} else if (!strcmp(mode, "429")) {
		char ra[64];
		snprintf(ra, sizeof(ra), "Retry-After: %d\r\n",
			 (int)json_integer_value(json_object_get(step, "retry_after")));
		const char *b = "{\"error\":{\"message\":\"rate limited\",\"type\":\"rate_limit\"}}";
		reply(fd, 429, "Too Many Requests", json_object_get(step, "retry_after") ? ra : NULL,
		      b, strlen(b));
	} else if (!strcmp(mode, "500")) {
		const char *b = "{\"error\":{\"message\":\"internal error\"}}";
		reply(fd, 500, "Internal Server Error", NULL, b, strlen(b));
	} else if (!strcmp(mode, "unauthorized")) {
		int st = (int)json_integer_value(json_object_get(step, "status"));
		buf_addf(&out, "{\"error\":{\"message\":\"invalid key %s\"}}", auth ? auth : "none");
		reply(fd, st ? st : 401, st ? "Error" : "Unauthorized", NULL, out.s, out.len);
	} else if (!strcmp(mode, "timeout")) {
		/* never answer: wait for the client to give up */
		struct pollfd p = { fd, POLLIN, 0 };
		char c;
		while (poll(&p, 1, 60000) > 0 && recv(fd, &c, 1, MSG_PEEK) > 0)
			usleep(100000);
		rc = -1;
	} else if (!strcmp(mode, "reset")) {
		struct linger lg = { 1, 0 };
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		rc = -1;
	} else if (!strcmp(mode, "raw")) {
		int st = (int)json_integer_value(json_object_get(step, "status"));
		const char *file = json_string_value(json_object_get(step, "body_file"));
		const char *hd = json_string_value(json_object_get(step, "headers"));
		struct buf extra = BUF_INIT;
		if (hd)
			buf_addf(&extra, "%s\r\n", hd);
		if (file) {
			struct buf e = BUF_INIT;
			if (buf_read_file(&out, file, 64u << 20, &e) < 0)
				fprintf(stderr, "mockllm: %s\n", e.s);
			buf_release(&e);
		} else {
			json_t *b = json_object_get(step, "body");
			buf_add(&out, json_string_value(b), json_string_length(b));
		}
		reply(fd, st ? st : 200, st && st != 200 ? "Error" : "OK", extra.len ? extra.s : NULL,
		      out.s, out.len);
		buf_release(&extra);
	} else if (!strcmp(mode, "malformed")) {
		const char *b = "{\"choices\": [ {\"message\": this is not json";
		reply(fd, 200, "OK", NULL, b, strlen(b));
	} else {
		const char *given = json_string_value(json_object_get(step, "content"));
		if (given)
			buf_adds(&content, given);
		else if (!strcmp(mode, "nocode"))
			buf_adds(&content, "I would use shared memory tiling here, but I will not "
					   "write the code.");
		else
			auto_content(body, &content);
		if (!strcmp(mode, "big")) {
			size_t want = (size_t)json_integer_value(json_object_get(step, "bytes"));
			if (!want)
				want = 2u << 20;
			while (content.len < want)
				buf_adds(&content, "\n// padding padding padding padding padding padding");
		}
		if (json_is_true(json_object_get(step, "echo_key"))) {
			replace_all(&content, ". ", ". @@K@@ ");
			replace_all(&content, "{\n", "{\n    // @@K@@\n");
		}
		{
			json_t *req = json_loads(body, 0, NULL);
			int nc = (int)json_integer_value(json_object_get(req, "n"));
			json_decref(req);
			completion(content.s, body, blen, nc > 1 && nc <= 8 ? nc : 1,
				   json_string_value(json_object_get(step, "usage")), &out);
		}
		if (json_is_true(json_object_get(step, "echo_key"))) {
			struct buf forms = BUF_INIT;
			key_forms(auth && !strncasecmp(auth, "Bearer ", 7) ? auth + 7 : "none", &forms);
			replace_all(&out, "@@K@@", forms.s);
			buf_release(&forms);
		}
		if (!strcmp(mode, "badutf8")) {
			const char *at = strstr(out.s, "\"content\":\"");
			if (at) {
				struct buf b = BUF_INIT;
				size_t off = (size_t)(at - out.s) + 11;
				buf_add(&b, out.s, off);
				buf_adds(&b, "caf\xe9 \xff\xfe\xc3 ");
				buf_add(&b, out.s + off, out.len - off);
				buf_reset(&out);
				buf_add(&out, b.s, b.len);
				buf_release(&b);
			}
		}
		if (!strcmp(mode, "trickle")) {
			long iv = (long)json_integer_value(json_object_get(step, "interval_ms"));
			struct buf h = BUF_INIT;
			if (iv <= 0)
				iv = 500;
			buf_addf(&h, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				     "Content-Length: %zu\r\n\r\n", out.len);
			send_all(fd, h.s, h.len);
			buf_release(&h);
			for (size_t i = 0; i < out.len; i++) {
				if (send_all(fd, out.s + i, 1) < 0)
					break;
				usleep((useconds_t)iv * 1000);
			}
			rc = -1;
		} else {
			if (delay_ms > 0)
				usleep((useconds_t)delay_ms * 1000);
			reply(fd, 200, "OK", NULL, out.s, out.len);
		}
	}
	pthread_mutex_lock(&mu);
	inflight--;
	pthread_mutex_unlock(&mu);
	json_decref(step);
	buf_release(&out);
	buf_release(&content);
	return rc;
}

static void *conn(void *arg)
{
	int fd = (int)(long)arg;
	struct buf in = BUF_INIT;

	for (;;) {
		char tmp[65536], method[16] = "", path[512] = "", *hend, *auth = NULL, *line;
		size_t clen = 0, hlen;
		ssize_t r;

		while (!(hend = memmem(in.s, in.len, "\r\n\r\n", 4))) {
			if (in.len > (64u << 10))
				goto out;
			r = recv(fd, tmp, sizeof(tmp), 0);
			if (r <= 0)
				goto out;
			buf_add(&in, tmp, (size_t)r);
		}
		hlen = (size_t)(hend - in.s) + 4;
		*hend = '\0';
		if (sscanf(in.s, "%15s %511s", method, path) != 2)
			goto out;
		for (line = strstr(in.s, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
			char *l = line + 2;
			if (!strncasecmp(l, "Content-Length:", 15))
				clen = strtoul(l + 15, NULL, 10);
			else if (!strncasecmp(l, "Authorization:", 14)) {
				char *e = strstr(l, "\r\n");
				auth = l + 14;
				while (*auth == ' ')
					auth++;
				auth = e ? strndup(auth, (size_t)(e - auth)) : strdup(auth);
			}
		}
		if (clen > (16u << 20))
			goto out;
		while (in.len < hlen + clen) {
			r = recv(fd, tmp, sizeof(tmp), 0);
			if (r <= 0)
				goto out;
			buf_add(&in, tmp, (size_t)r);
		}
		{
			char *body = strndup(in.s + hlen, clen);
			int keep = serve(fd, method, path, auth, body, clen);
			free(body);
			free(auth);
			auth = NULL;
			if (keep < 0)
				goto out;
		}
		/* keep what follows (a pipelined request) */
		{
			struct buf rest = BUF_INIT;
			buf_add(&rest, in.s + hlen + clen, in.len - hlen - clen);
			buf_release(&in);
			in = rest;
		}
		continue;
out:
		free(auth);
		break;
	}
	close(fd);
	buf_release(&in);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *port_file = NULL, *log_path = NULL;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int s, one = 1, max_s = 120;
	struct buf err = BUF_INIT, port = BUF_INIT;

	steps = json_array();
	dflt = mode_obj("ok");
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) {
			fprintf(stderr, "mockllm: %s needs a value\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--port-file"))
			port_file = v;
		else if (!strcmp(a, "--log"))
			log_path = v;
		else if (!strcmp(a, "--mode"))
			json_array_append_new(steps, mode_obj(v));
		else if (!strcmp(a, "--default")) {
			json_decref(dflt);
			dflt = mode_obj(v);
		} else if (!strcmp(a, "--delay-ms"))
			delay_ms = atoi(v);
		else if (!strcmp(a, "--max-seconds"))
			max_s = atoi(v);
		else if (!strcmp(a, "--script")) {
			json_t *sc = json_load_file_bounded(v, 1u << 20, &err);
			if (!sc) {
				fprintf(stderr, "mockllm: %s\n", err.s);
				return 2;
			}
			json_array_extend(steps, json_object_get(sc, "steps"));
			if (json_object_get(sc, "default")) {
				json_decref(dflt);
				dflt = json_incref(json_object_get(sc, "default"));
			}
			json_decref(sc);
		} else {
			fprintf(stderr, "mockllm: unknown option %s\n", a);
			return 2;
		}
	}
	if (log_path && !(log_fp = fopen(log_path, "a"))) {
		perror(log_path);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	alarm((unsigned)max_s); /* never outlive a test by much */
	s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 64) < 0 ||
	    getsockname(s, (struct sockaddr *)&sa, &sl) < 0) {
		perror("mockllm: bind");
		return 1;
	}
	buf_addf(&port, "%d\n", ntohs(sa.sin_port));
	if (port_file && write_file_atomic(port_file, port.s, port.len, &err) < 0) {
		fprintf(stderr, "mockllm: %s\n", err.s);
		return 1;
	}
	printf("%s", port.s);
	fflush(stdout);
	for (;;) {
		pthread_t th;
		int c = accept(s, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pthread_create(&th, NULL, conn, (void *)(long)c) == 0)
			pthread_detach(th);
		else
			close(c);
	}
	return 0;
}
