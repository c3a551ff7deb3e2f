#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void proc_result_init(struct proc_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->out);
	buf_init(&r->errout);
}

void proc_result_release(struct proc_result *r)
{
	buf_release(&r->out);
	buf_release(&r->errout);
}

static void set_limit(int res, rlim_t v)
{
	struct rlimit rl = { v, v };
	setrlimit(res, &rl);
}

static void child_setup(const struct proc_limits *lim, pid_t parent, int in, int out, int errfd)
{
	setpgid(0, 0);
	if (lim && lim->die_with_parent) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)   /* the parent died before prctl */
			_exit(127);
	}
	dup2(in, 0);
	dup2(out, 1);
	dup2(errfd, 2);
	/* Close everything else: the child inherits no store handles or sockets. */
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	if (lim) {
		if (lim->cpu_s)
			set_limit(RLIMIT_CPU, (rlim_t)lim->cpu_s);
		if (lim->as_bytes)
			set_limit(RLIMIT_AS, (rlim_t)lim->as_bytes);
		if (lim->fsize_bytes)
			set_limit(RLIMIT_FSIZE, (rlim_t)lim->fsize_bytes);
	}
	set_limit(RLIMIT_CORE, 0);
	signal(SIGPIPE, SIG_DFL);
}

static int run(const char *const argv[], int (*fn)(void *), void *arg, const char *input,
	       size_t input_len, const struct proc_limits *lim, struct proc_result *r,
	       struct buf *err)
{
	int pin[2], pout[2], perr[2];
	size_t cap = lim && lim->max_output ? lim->max_output : (1u << 20);
	double t0 = now_s(), deadline = lim && lim->wall_s > 0 ? t0 + lim->wall_s : 0;
	pid_t pid, parent;
	int st = 0;

	buf_reset(&r->out);
	buf_reset(&r->errout);
	r->exited = r->signaled = r->timed_out = r->status = r->out_truncated = 0;
	if (pipe(pin) < 0)
		return kf_err(err, "pipe: %s", strerror(errno));
	if (pipe(pout) < 0) {
		close(pin[0]);
		close(pin[1]);
		return kf_err(err, "pipe: %s", strerror(errno));
	}
	if (pipe(perr) < 0) {
		close(pin[0]);
		close(pin[1]);
		close(pout[0]);
		close(pout[1]);
		return kf_err(err, "pipe: %s", strerror(errno));
	}
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(pin[0]); close(pin[1]); close(pout[0]); close(pout[1]);
		close(perr[0]); close(perr[1]);
		return kf_err(err, "fork: %s", strerror(e));
	}
	if (pid == 0) {
		child_setup(lim, parent, pin[0], pout[1], perr[1]);
		if (argv) {
			execvp(argv[0], (char *const *)argv);
			_exit(127);
		}
		_exit(fn(arg) & 0xff);
	}
	setpgid(pid, pid);
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	fcntl(pin[1], F_SETFL, O_NONBLOCK);
	size_t in_off = 0;
	if (!input || !input_len) {
		close(pin[1]);
		pin[1] = -1;
	}
	int open_out = 1, open_err = 1;
	while (open_out || open_err || pin[1] >= 0) {
		struct pollfd pf[3];
		int n = 0, timeout = -1;
		if (open_out)
			pf[n++] = (struct pollfd){ pout[0], POLLIN, 0 };
		if (open_err)
			pf[n++] = (struct pollfd){ perr[0], POLLIN, 0 };
		if (pin[1] >= 0)
			pf[n++] = (struct pollfd){ pin[1], POLLOUT, 0 };
		if (deadline) {
			double left = deadline - now_s();
			if (left <= 0) {
				r->timed_out = 1;
				kill(-pid, SIGKILL);
				break;
			}
			timeout = (int)(left * 1000) + 1;
		}
		int pr = poll(pf, (nfds_t)n, timeout);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (!pf[i].revents)
				continue;
			if (pf[i].fd == pin[1]) {
				ssize_t w = write(pin[1], input + in_off, input_len - in_off);
				if (w > 0)
					in_off += (size_t)w;
				if (w < 0 && errno != EAGAIN) {
					close(pin[1]);
					pin[1] = -1;
				} else if (in_off == input_len) {
					close(pin[1]);
					pin[1] = -1;
				}
				continue;
			}
			char tmp[8192];
			ssize_t k = read(pf[i].fd, tmp, sizeof(tmp));
			struct buf *dst = pf[i].fd == pout[0] ? &r->out : &r->errout;
			if (k <= 0) {
				if (k < 0 && errno == EINTR)
					continue;
				if (pf[i].fd == pout[0])
					open_out = 0;
				else
					open_err = 0;
				continue;
			}
			size_t room = dst->len < cap ? cap - dst->len : 0;
			if ((size_t)k > room)
				r->out_truncated = 1;
			buf_add(dst, tmp, (size_t)k < room ? (size_t)k : room);
		}
	}
	if (pin[1] >= 0)
		close(pin[1]);
	close(pout[0]);
	close(perr[0]);
	for (;;) {
		pid_t w = waitpid(pid, &st, deadline ? WNOHANG : 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			break;
		if (w == 0) {
			if (now_s() > deadline) {
				r->timed_out = 1;
				kill(-pid, SIGKILL);
				deadline = 0; /* next wait blocks */
			} else {
				struct timespec ts = { 0, 2000000 };
				nanosleep(&ts, NULL);
			}
		}
	}
	kill(-pid, SIGKILL); /* grandchildren left in the group */
	r->wall_s = now_s() - t0;
	if (WIFEXITED(st)) {
		r->exited = 1;
		r->status = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		r->signaled = 1;
		r->status = WTERMSIG(st);
	}
	return 0;
}

int proc_run(const char *const argv[], const char *input, size_t input_len,
	     const struct proc_limits *lim, struct proc_result *r, struct buf *err)
{
	return run(argv, NULL, NULL, input, input_len, lim, r, err);
}

int proc_run_fn(int (*fn)(void *), void *arg, const char *input, size_t input_len,
		const struct proc_limits *lim, struct proc_result *r, struct buf *err)
{
	return run(NULL, fn, arg, input, input_len, lim, r, err);
}

void proc_describe(const struct proc_result *r, struct buf *out)
{
	buf_reset(out);
	if (r->timed_out)
		buf_addf(out, "timed out after %.1f s", r->wall_s);
	else if (r->signaled)
		buf_addf(out, "killed by signal %d (%s)", r->status, strsignal(r->status));
	else if (r->exited)
		buf_addf(out, "exit %d", r->status);
	else
		buf_adds(out, "ended abnormally");
}
