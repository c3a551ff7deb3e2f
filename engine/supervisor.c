/* The supervisor: one worker process per visible GPU of one model (an
 * engine's results are keyed by its GPU model: gpus.c), each owning its
 * CUDA context. Requests go to a free worker; a worker that dies, reports
 * a fatal error or stays silent past the deadline it announced (+2 s) is
 * killed and restarted before the next request, so one candidate's fault
 * or hang never affects the next. Waiting requests are served first come,
 * first served, except that a worker takes a request for the problem it
 * just ran first: it has that problem's inputs and reference module
 * loaded (reference outputs it keeps for several problems).
 * A worker that fails to start MAX_START_FAILS times in a row (context
 * creation, hello) is retired: its GPU leaves the pool with a warning and
 * the others go on; a worker killed by candidates restarts forever. An
 * evaluation whose worker died is run again on another GPU of the pool,
 * where there is one: if it lives there, the first GPU gets a strike (its
 * result stands: a kernel is judged by its worst run), and MAX_STRIKES in a
 * row retire that GPU too. */
#include "engine_int.h"
#include "engine/rt.h"
#include "core/json.h"
#include "core/log.h"
#include "core/proc.h"
#include "core/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define HELLO_TIMEOUT_S 120.0      /* context + harness compile (first start) */
#define FIRST_FRAME_S 30.0         /* until the worker's first PROGRESS */
#define GRACE_S 2.0
#define MAX_START_FAILS 3          /* failed starts in a row that retire a worker */
#define MAX_STRIKES 3              /* deaths in a row, each survived on another GPU */
#define AFFINITY_MAX_STREAK 32     /* then the oldest waiter, whatever its problem;
				    * KFORGE_AFFINITY_STREAK (0-1000) overrides, 0 = first come,
				    * first served (tests make concurrent problems alternate) */

struct worker {
	int device;
	pid_t pid;
	int to, from;              /* pipe ends in the supervisor */
	int busy, alive;
	int restarts;
	int fails;                 /* failed starts in a row */
	int strikes;               /* deaths in a row that another GPU survived (under mu) */
	int retired;               /* out of the pool for good (written under mu) */
	char name[128];            /* its GPU's name, once known */
	char last_key[512];        /* problem of its last request */
	int streak;                /* requests in a row for last_key */
};

struct waiter {
	const char *key;
	int not;                   /* a worker index it must not get (-1: any) */
	int granted;               /* worker index, -1 while waiting */
	struct waiter *next;
};

struct supervisor {
	char *exe;
	char model[GPU_NAME_MAX];  /* every worker's GPU model (the driver's name) */
	struct worker *w;
	int n;
	int live;                  /* workers not retired (under mu) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct waiter *wq;         /* oldest first */
	int max_streak;
	struct buf harness;        /* cubin from the first worker */
	json_t *info;
};

/* Kills and reaps, but waits at most a few seconds: a process stuck in the
 * driver's teardown of a hung kernel must not hang the engine (it is left
 * to init, the next worker starts anyway). */
static void worker_kill(struct worker *w)
{
	if (w->pid > 0) {
		int st;
		kill(w->pid, SIGKILL);
		for (int i = 0; i < 500; i++) {
			pid_t r = waitpid(w->pid, &st, WNOHANG);
			if (r == w->pid || (r < 0 && errno != EINTR))
				break;
			usleep(10000);
		}
	}
	if (w->to >= 0)
		close(w->to);
	if (w->from >= 0)
		close(w->from);
	w->pid = -1;
	w->to = w->from = -1;
	w->alive = 0;
}

/* Reaps a worker that closed its pipe (waiting at most 5 s) and says how
 * it ended into how; 0 when it did, -1 when it is still running. */
static int worker_reap(struct worker *w, struct buf *how)
{
	int st = 0;
	pid_t got = 0;
	struct proc_result pr;

	for (int i = 0; w->pid > 0 && i < 500 && got == 0; i++) {
		got = waitpid(w->pid, &st, WNOHANG);
		if (got == 0)
			usleep(10000);
	}
	if (w->pid <= 0 || got != w->pid)
		return -1;
	proc_result_init(&pr);
	pr.exited = WIFEXITED(st);
	pr.status = WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st);
	pr.signaled = WIFSIGNALED(st);
	proc_describe(&pr, how);
	proc_result_release(&pr);
	w->pid = -1;
	return 0;
}

/* Moves fd to a number >= 10 (so dup2 onto 3/4 never collides). */
static int high_fd(int fd)
{
	int n = fcntl(fd, F_DUPFD, 10);
	close(fd);
	return n;
}

static int worker_start(struct supervisor *s, struct worker *w, struct buf *err)
{
	int a[2], b[2];          /* a: supervisor → worker; b: worker → supervisor */
	char dev[16];
	pid_t pid;
	json_t *hello;
	struct rt_msg m;
	int r;

	if (pipe2(a, O_CLOEXEC) < 0)
		return kf_err(err, "pipe: %s", strerror(errno));
	if (pipe2(b, O_CLOEXEC) < 0) {
		close(a[0]);
		close(a[1]);
		return kf_err(err, "pipe: %s", strerror(errno));
	}
	snprintf(dev, sizeof(dev), "%d", w->device);
	pid = fork();
	if (pid < 0) {
		close(a[0]); close(a[1]); close(b[0]); close(b[1]);
		return kf_err(err, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int in = high_fd(a[0]), out = high_fd(b[1]);
		/* The candidate's device printf goes to the worker's stdout when
		 * the driver flushes it: never onto kforge's (eval --json). */
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (in < 0 || out < 0 || null < 0 || dup2(in, 3) < 0 || dup2(out, 4) < 0 ||
		    dup2(null, 1) < 0)
			_exit(127);
		setpgid(0, 0);
		execl(s->exe, s->exe, "__worker", "--device", dev, (char *)NULL);
		_exit(127);
	}
	close(a[0]);
	close(b[1]);
	w->pid = pid;
	w->to = a[1];
	w->from = b[0];
	w->alive = 1;
	hello = json_pack("{s:i,s:b}", "version", RT_PROTOCOL_VERSION, "have_harness",
			  s->harness.len > 0);
	r = rt_send(w->to, RT_HELLO, hello, s->harness.s, s->harness.len, err);
	json_decref(hello);
	rt_msg_init(&m);
	if (!r)
		r = rt_recv(w->from, &m, now_s() + HELLO_TIMEOUT_S, err);
	if (r == -1) {
		/* The pipe closed: it exited before its hello (say how). */
		struct buf how = BUF_INIT;
		if (worker_reap(w, &how) == 0)
			kf_err(err, "GPU worker %d exited before answering hello (%s)", w->device, how.s);
		buf_release(&how);
	}
	if (r == -2)
		r = kf_err(err, "GPU worker %d did not start within %.0f s", w->device, HELLO_TIMEOUT_S);
	if (!r && m.type != RT_INFO)
		r = kf_err(err, "GPU worker %d: %s", w->device,
			   jget_str(m.json, "error", "unexpected reply to hello"));
	if (!r && !jget_bool(m.json, "ok", 0))
		r = kf_err(err, "%s", jget_str(m.json, "error", "GPU worker failed to start"));
	if (!r && *jget_str(m.json, "name", ""))
		snprintf(w->name, sizeof(w->name), "%s", jget_str(m.json, "name", ""));
	/* Its results are recorded under the pool's model: it must be one. */
	if (!r && strcmp(w->name, s->model))
		r = kf_err(err, "GPU worker %d reports model '%s', not '%s' as the driver said",
			   w->device, w->name, s->model);
	if (!r && !s->harness.len && m.bin.len)
		buf_add(&s->harness, m.bin.s, m.bin.len);
	if (!r && !s->info)
		s->info = json_incref(m.json);
	rt_msg_release(&m);
	if (r) {
		worker_kill(w);
		return -1;
	}
	return 0;
}

/* Starts w (it is the caller's: busy, or during open) and counts failed
 * starts in a row; the MAX_START_FAILS-th retires it with a warning. */
static int worker_restart(struct supervisor *s, struct worker *w, struct buf *err)
{
	int left;

	if (worker_start(s, w, err) == 0) {
		w->fails = 0;
		return 0;
	}
	if (++w->fails < MAX_START_FAILS)
		return -1;
	pthread_mutex_lock(&s->mu);
	w->retired = 1;
	left = --s->live;
	pthread_mutex_unlock(&s->mu);
	log_warn("GPU %d%s%s%s taken out of the pool after %d failed starts in a row "
		 "(%d GPU%s left): %s", w->device, w->name[0] ? " (" : "", w->name,
		 w->name[0] ? ")" : "", w->fails, left, left == 1 ? "" : "s", err->s);
	return -1;
}

/* One info line for the GPUs this engine leaves alone (other models). */
static void log_unused(const struct gpu_list *l, const char *model, int n_used)
{
	struct buf m = BUF_INIT;
	int other = 0;

	for (int i = 0; i < l->n; i++)
		other += strcmp(l->name[i], model) != 0;
	if (other) {
		gpu_list_describe(l, model, &m);
		log_info("running on %d GPU%s of model '%s' only; not used: %s (one model per run: "
			 "--gpu-model NAME or KFORGE_GPU_MODEL chooses; kforge verify verifies on "
			 "each model)", n_used, n_used == 1 ? "" : "s", model, m.s);
	}
	buf_release(&m);
}

int supervisor_open(struct supervisor **sp, const char *exe, const char *model, int max_gpus,
		    json_t **info, struct buf *err)
{
	struct supervisor *s;
	struct gpu_list gl;
	int *dev = NULL, n, streak = AFFINITY_MAX_STREAK;

	*sp = NULL;
	if (!exe)
		return kf_err(err, "cannot find the kforge executable for the GPU worker");
	/* Tests of the CLI with a stand-in worker (only with the stand-in GPUs). */
	if (getenv("KFORGE_WORKER_TEST_GPUS") && getenv("KFORGE_WORKER_EXE") &&
	    *getenv("KFORGE_WORKER_EXE"))
		exe = getenv("KFORGE_WORKER_EXE");
	gpu_list_init(&gl);
	if ((n = gpu_list_probe(&gl, err)) < 0)
		return n;
	dev = xcalloc((size_t)gl.n, sizeof(*dev));
	if ((n = gpu_list_select(&gl, model, max_gpus, dev, err)) < 0)
		goto fail;
	if (getenv("KFORGE_AFFINITY_STREAK")) {
		const char *v = getenv("KFORGE_AFFINITY_STREAK");
		char *end;
		long l = strtol(v, &end, 10);
		if (!*v || *end || l < 0 || l > 1000) {
			n = kf_err(err, "KFORGE_AFFINITY_STREAK must be an integer in 0..1000");
			goto fail;
		}
		streak = (int)l;
	}
	/* A dead worker must not kill the engine through SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	s = xcalloc(1, sizeof(*s));
	s->exe = xstrdup(exe);
	snprintf(s->model, sizeof(s->model), "%s", gl.name[dev[0]]);
	log_unused(&gl, s->model, n);
	s->n = n;
	s->live = n;
	s->max_streak = streak;
	s->w = xcalloc((size_t)n, sizeof(*s->w));
	buf_init(&s->harness);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	for (int i = 0; i < n; i++) {
		s->w[i].device = dev[i];
		s->w[i].pid = -1;
		s->w[i].to = s->w[i].from = -1;
	}
	free(dev);
	gpu_list_release(&gl);
	/* A GPU that cannot start is retired, as long as another one can. */
	for (int i = 0; i < n; i++) {
		struct buf e = BUF_INIT;
		while (worker_restart(s, &s->w[i], &e) < 0 && !s->w[i].retired)
			buf_reset(&e);
		if (s->w[i].retired)
			kf_err(err, "every GPU worker failed to start (%d tries each); last: %s",
			       MAX_START_FAILS, e.s);
		buf_release(&e);
	}
	if (s->live == 0) {
		supervisor_close(s);
		return -1;
	}
	*info = json_incref(s->info);
	*sp = s;
	return 0;
fail:
	free(dev);
	gpu_list_release(&gl);
	return n;
}

int supervisor_devices(struct supervisor *s, int *dev, int n)
{
	for (int i = 0; i < s->n && i < n; i++)
		dev[i] = s->w[i].device;
	return s->n;
}

int supervisor_n_workers(struct supervisor *s)
{
	int n;

	pthread_mutex_lock(&s->mu);
	n = s->live;
	pthread_mutex_unlock(&s->mu);
	return n;
}

static void grant(struct supervisor *s, struct waiter *q, int i)
{
	struct worker *w = &s->w[i];
	struct waiter **p = &s->wq;

	while (*p != q)
		p = &(*p)->next;
	*p = q->next;
	q->granted = i;
	w->busy = 1;
	if (!strcmp(w->last_key, q->key)) {
		w->streak++;
	} else {
		snprintf(w->last_key, sizeof(w->last_key), "%s", q->key);
		w->streak = 1;
	}
}

/* Under s->mu: hands free workers to waiters. First each free worker's
 * own problem (the oldest such waiter), then the oldest waiters. */
static void dispatch(struct supervisor *s)
{
	/* Running workers before ones that must start again first. */
	for (int pass = 0; pass < 3; pass++)
		for (int i = 0; i < s->n && s->wq; i++) {
			struct worker *w = &s->w[i];
			struct waiter *q = s->wq;
			if (w->busy || w->retired || (pass < 2) != w->alive)
				continue;
			if (pass == 0 && (!w->last_key[0] || w->streak >= s->max_streak))
				continue;
			while (q && (q->not == i || (pass == 0 && strcmp(q->key, w->last_key))))
				q = q->next;
			if (q)
				grant(s, q, i);
		}
	pthread_cond_broadcast(&s->cv);
}

/* A free worker for key, or NULL once every worker is retired. again:
 * a request whose worker failed to start, which goes first. */
static struct worker *acquire(struct supervisor *s, const char *key, int not, int again)
{
	struct waiter me = { key ? key : "", not, -1, NULL }, **t;

	pthread_mutex_lock(&s->mu);
	if (again) {
		me.next = s->wq;
		s->wq = &me;
	} else {
		for (t = &s->wq; *t; t = &(*t)->next)
			;
		*t = &me;
	}
	dispatch(s);
	while (me.granted < 0 && s->live > (not >= 0 && !s->w[not].retired))
		pthread_cond_wait(&s->cv, &s->mu);
	if (me.granted < 0) {
		for (t = &s->wq; *t != &me; t = &(*t)->next)
			;
		*t = me.next;
	}
	pthread_mutex_unlock(&s->mu);
	return me.granted < 0 ? NULL : &s->w[me.granted];
}

/* A retired worker stays claimed (busy), so nobody takes it again, and
 * goes here: strike() leaves one in use to its holder. */
static void release(struct supervisor *s, struct worker *w)
{
	int gone;

	pthread_mutex_lock(&s->mu);
	gone = w->retired;
	w->busy = gone;
	dispatch(s);
	pthread_mutex_unlock(&s->mu);
	if (gone)
		worker_kill(w);
}

/* A worker for the request, started: one that fails to start gives the
 * request back to the queue (first in it), so another worker takes it. */
static struct worker *acquire_started(struct supervisor *s, const char *key, int not,
					struct buf *err)
{
	for (int again = 0;; again = 1) {
		struct worker *w = acquire(s, key, not, again);
		if (!w) {
			struct buf last = BUF_INIT;
			buf_adds(&last, err->s);
			kf_err(err, "%s%s%s", not >= 0 ? "no other GPU left in the pool" :
			       "every GPU was taken out of the pool (failed starts)",
			       last.len ? "; last: " : "", last.s);
			buf_release(&last);
			return NULL;
		}
		if (w->alive) {
			buf_reset(err);
			return w;
		}
		buf_reset(err);
		if (worker_restart(s, w, err) == 0)
			return w;
		release(s, w);
	}
}

int supervisor_waiting(struct supervisor *s, int *busy)
{
	int n = 0;

	pthread_mutex_lock(&s->mu);
	for (struct waiter *q = s->wq; q; q = q->next)
		n++;
	*busy = 0;
	for (int i = 0; i < s->n; i++)
		*busy += s->w[i].busy && !s->w[i].retired;
	pthread_mutex_unlock(&s->mu);
	return n;
}

static json_t *dead_reply(const char *status, const char *detail)
{
	return json_pack("{s:s,s:s,s:b}", "status", status, "detail", detail, "fatal", 1);
}

/* One request on a worker (any but index not): its reply (a dead worker's
 * or a timeout's made here), the worker that ran it and whether that worker
 * died on it (pipe closed or garbage: not a timeout, nor a fatal error it
 * reported). 0, or -1 with err when no worker could take it. */
static int request_once(struct supervisor *s, int type, const json_t *req, const void *bin,
			size_t bin_len, int not, json_t **reply, int *ran, int *died, struct buf *err)
{
	const char *key = type == RT_EVAL ? jget_str(req, "problem_dir", "") : "";
	struct worker *w;
	struct rt_msg m;
	struct buf e2 = BUF_INIT;
	double deadline;
	int ret = -1, r;

	*reply = NULL;
	*died = 0;
	rt_msg_init(&m);
	for (int tries = 0;; tries++) {
		if (!(w = acquire_started(s, key, not, err)))
			goto out;
		if (rt_send(w->to, type, req, bin, bin_len, &e2) == 0)
			break;
		/* Died between requests: start it again (or another) and retry. */
		worker_kill(w);
		release(s, w);
		if (tries + 1 >= MAX_START_FAILS) {
			kf_err(err, "GPU worker %d: %s", w->device, e2.s);
			goto out;
		}
		buf_reset(&e2);
	}
	deadline = now_s() + FIRST_FRAME_S;
	for (;;) {
		buf_reset(&e2);
		r = rt_recv(w->from, &m, deadline, &e2);
		if (r == 0 && m.type == RT_PROGRESS) {
			deadline = now_s() + jget_num(m.json, "next_s", FIRST_FRAME_S) + GRACE_S;
			continue;
		}
		if (r == 0 && m.type == RT_RESULT) {
			*reply = json_incref(m.json);
			if (jget_bool(m.json, "fatal", 0))
				worker_kill(w);
			break;
		}
		if (r == -2) {
			log_warn("GPU worker %d silent past its deadline: killed", w->device);
			worker_kill(w);
			*reply = dead_reply("timeout", "the launch did not finish in time; the GPU worker was killed and restarted");
			break;
		}
		{
			/* EOF or garbage: the worker died (a crash in the driver). */
			struct buf how = BUF_INIT;
			if (worker_reap(w, &how) < 0)
				buf_adds(&how, e2.s);
			worker_kill(w);
			{
				struct buf d = BUF_INIT;
				buf_addf(&d, "the GPU worker died (%s) and was restarted", how.s);
				*reply = dead_reply("runtime_error", d.s);
				buf_release(&d);
			}
			buf_release(&how);
			*died = 1;
			break;
		}
	}
	/* Which GPU of the pool ran it (several GPUs of one model): its env says. */
	if (type == RT_EVAL && json_is_object(*reply)) {
		json_t *env = json_object_get(*reply, "env");
		if (!json_is_object(env)) {
			env = json_object();
			json_object_set_new(*reply, "env", env);
		}
		json_object_set_new(env, "device", json_integer(w->device));
	}
	/* Restart now, so the next candidate finds a ready context. */
	if (!w->alive) {
		w->restarts++;
		buf_reset(&e2);
		if (worker_restart(s, w, &e2) < 0 && !w->retired)
			log_warn("GPU worker %d restart failed: %s (retried at its next request)",
				 w->device, e2.s);
	}
	*ran = (int)(w - s->w);
	ret = 0;
	release(s, w);
out:
	rt_msg_release(&m);
	buf_release(&e2);
	return ret;
}

/* Worker i died on a request that worker j then ran without dying: a
 * strike; MAX_STRIKES in a row take its GPU out of the pool (never the
 * last one). A worker in use goes when its holder releases it. */
static void strike(struct supervisor *s, int i, int j)
{
	struct worker *w = &s->w[i];
	int gone = 0, left;

	pthread_mutex_lock(&s->mu);
	if (++w->strikes >= MAX_STRIKES && !w->retired && s->live > 1) {
		w->retired = 1;
		left = --s->live;
		gone = !w->busy;
		w->busy = 1;
		log_warn("GPU %d%s%s%s taken out of the pool: its worker died on %d evaluations in a "
			 "row that GPU %d then ran without dying (%d GPU%s left)", w->device,
			 w->name[0] ? " (" : "", w->name, w->name[0] ? ")" : "", w->strikes,
			 s->w[j].device, left, left == 1 ? "" : "s");
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	if (gone)
		worker_kill(w);
}

int supervisor_request(struct supervisor *s, int type, const json_t *req, const void *bin,
		       size_t bin_len, json_t **reply, struct buf *err)
{
	json_t *again = NULL;
	struct buf e2 = BUF_INIT;
	int i, j, k, died, died2;   /* i: the worker that ran it, k: the rerun's; j: others live */

	if (request_once(s, type, req, bin, bin_len, -1, reply, &i, &died, err) < 0)
		return -1;
	if (!died || type != RT_EVAL) {
		pthread_mutex_lock(&s->mu);
		s->w[i].strikes = died ? s->w[i].strikes : 0;
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	/* Its worker died and started again: the GPU's fault or the kernel's?
	 * The same request on another GPU of the pool tells (none there:
	 * nothing to tell; a GPU that cannot start again is MAX_START_FAILS'
	 * business). */
	pthread_mutex_lock(&s->mu);
	j = s->w[i].retired || !s->w[i].alive ? 0 : s->live - 1;
	pthread_mutex_unlock(&s->mu);
	if (j > 0 && request_once(s, type, req, bin, bin_len, i, &again, &k, &died2, &e2) < 0) {
		log_info("GPU worker %d died on an evaluation that no other GPU could run again: %s",
			 s->w[i].device, e2.s);
	} else if (j > 0) {
		json_t *env = json_object_get(*reply, "env");
		json_object_set_new(env, "rerun", json_pack("{s:i,s:s,s:b}", "device", s->w[k].device,
			"status", jget_str(again, "status", ""), "worker_died", died2));
		if (!died2)
			strike(s, i, k);
		json_decref(again);
	}
	buf_release(&e2);
	return 0;
}

void supervisor_close(struct supervisor *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		struct worker *w = &s->w[i];
		if (w->alive) {
			struct buf e = BUF_INIT;
			rt_send(w->to, RT_QUIT, NULL, NULL, 0, &e);
			buf_release(&e);
			close(w->to);
			w->to = -1;
			/* Give it a moment to release the context cleanly. */
			for (int k = 0; k < 200; k++) {
				int st;
				if (waitpid(w->pid, &st, WNOHANG) == w->pid) {
					w->pid = -1;
					break;
				}
				usleep(10000);
			}
		}
		worker_kill(w);
	}
	free(s->w);
	free(s->exe);
	buf_release(&s->harness);
	json_decref(s->info);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}
