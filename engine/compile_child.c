/* The compile child: runs under the parent's limits (CPU, address space,
 * wall clock), reads one request, re-runs the include scan, compiles with
 * NVRTC and writes the reply. Exit codes in compile_int.h. */
#include "compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "candidate.h"
#include "core/fsutil.h"
#include "compile_int.h"
#include "nvrtc.h"

#define MAX_OPTS 32
#define REQ_MAX (CANDIDATE_MAX_BYTES + 64 * 1024)

static int read_all(int fd, struct buf *b, size_t max)
{
	char tmp[65536];
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		if (b->len + (size_t)n > max)
			return -1;
		buf_add(b, tmp, (size_t)n);
	}
}

static int die(int code, const char *msg, const char *detail)
{
	dprintf(2, "%s%s%s\n", msg, detail ? ": " : "", detail ? detail : "");
	return code;
}

/* A stop signal arrived while NVRTC ran: end by it (default action). */
static void die_if_stopped(const sigset_t *stop_set)
{
	sigset_t pend;
	int sig;

	if (sigpending(&pend) < 0)
		return;
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(stop_set, sig) && sigismember(&pend, sig)) {
			signal(sig, SIG_DFL);
			sigprocmask(SIG_UNBLOCK, stop_set, NULL);
			raise(sig);
			_exit(128 + sig); /* not reached */
		}
}

int compile_child_main(int in_fd, int out_fd)
{
	struct buf req = BUF_INIT, err = BUF_INIT, log = BUF_INIT, cubin = BUF_INIT, head = BUF_INIT;
	struct nvrtc nv;
	kf_nvrtcProgram prog = NULL;
	char *opts[MAX_OPTS];
	int n_opts = 0, used = 0, rc, ok = 0, ret;
	size_t src_len, sz = 0;
	const char *p;
	sigset_t stop_set;

	nvrtc_init(&nv);
	{
		/* The parent sets soft == hard CPU limits, where Linux sends
		 * SIGKILL; one second less of soft limit makes the CPU limit a
		 * SIGXCPU, which the parent can tell from other kills. */
		struct rlimit rl;
		if (getrlimit(RLIMIT_CPU, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
		    rl.rlim_max > 1 && rl.rlim_cur >= rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max - 1;
			setrlimit(RLIMIT_CPU, &rl);
		}
		signal(SIGXCPU, SIG_DFL);
	}
	/* NVRTC catches SIGTERM/SIGINT itself and returns a failed compile with
	 * an empty log, which would read as the candidate's verdict. Hold them
	 * while it runs; a pending one then ends this child by the signal, and
	 * the parent records nothing (see compile.c). */
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	sigaddset(&stop_set, SIGHUP);
	sigaddset(&stop_set, SIGQUIT);
	sigprocmask(SIG_BLOCK, &stop_set, NULL);
	if (read_all(in_fd, &req, REQ_MAX) < 0) {
		ret = die(CHILD_EXIT_SANDBOX, "compile child: cannot read the request", NULL);
		goto out;
	}
	if (sscanf(req.s, "KFC1 %d %zu\n%n", &n_opts, &src_len, &used) != 2 || used == 0 ||
	    n_opts < 0 || n_opts > MAX_OPTS) {
		ret = die(CHILD_EXIT_SANDBOX, "compile child: malformed request", NULL);
		goto out;
	}
	p = req.s + used;
	for (int i = 0; i < n_opts; i++) {
		const char *nl = strchr(p, '\n');
		if (!nl) {
			n_opts = i;
			ret = die(CHILD_EXIT_SANDBOX, "compile child: malformed options", NULL);
			goto out;
		}
		opts[i] = strndup(p, (size_t)(nl - p));
		p = nl + 1;
	}
	if ((size_t)(req.s + req.len - p) != src_len || src_len > CANDIDATE_MAX_BYTES) {
		ret = die(CHILD_EXIT_SANDBOX, "compile child: source length mismatch", NULL);
		goto out;
	}
	/* Second line of defence: the parent scanned too. */
	if (candidate_scan_source(p, src_len, 1, &err) < 0) {
		ret = die(CHILD_EXIT_FORMAT, err.s, NULL);
		goto out;
	}
	if (nvrtc_load(&nv, &err) < 0) {
		ret = die(CHILD_EXIT_SANDBOX, err.s, NULL);
		goto out;
	}
	rc = nv.CreateProgram(&prog, p, "candidate.cu", 0, NULL, NULL);
	if (rc != 0) {
		ret = die(rc == 1 ? CHILD_EXIT_OOM : CHILD_EXIT_SANDBOX, "nvrtcCreateProgram",
			  nv.GetErrorString(rc));
		goto out;
	}
	rc = nv.CompileProgram(prog, n_opts, (const char *const *)opts);
	if (rc == 1) {
		ret = die(CHILD_EXIT_OOM, "nvrtcCompileProgram", nv.GetErrorString(rc));
		goto out;
	}
	ok = rc == 0;
	die_if_stopped(&stop_set);
	if (nv.GetProgramLogSize(prog, &sz) == 0 && sz > 1) {
		buf_grow(&log, sz);
		if (nv.GetProgramLog(prog, log.s) == 0) {
			log.len = strnlen(log.s, sz);
			log.s[log.len] = '\0';
		}
		if (log.len > COMPILE_LOG_MAX) {
			buf_truncate(&log, COMPILE_LOG_MAX);
			buf_adds(&log, "\n[log truncated]\n");
		}
	}
	if (!ok && rc != 6)   /* not NVRTC_ERROR_COMPILATION: say what NVRTC said */
		buf_addf(&log, "\nNVRTC: %s\n", nv.GetErrorString(rc));
	if (ok && nv.GetCUBINSize(prog, &sz) == 0 && sz > 0 && sz <= COMPILE_CUBIN_MAX) {
		buf_grow(&cubin, sz);
		if (nv.GetCUBIN(prog, cubin.s) == 0)
			cubin.len = sz;
	}
	if (ok && !cubin.len)
		buf_adds(&log, "\nNVRTC produced no CUBIN\n");
	buf_setf(&head, "KFR1 %d %d %d %zu %zu\n", ok && cubin.len ? 1 : 0, nv.major, nv.minor,
		 log.len, cubin.len);
	if (write_all_fd(out_fd, head.s, head.len) < 0 || write_all_fd(out_fd, log.s, log.len) < 0 ||
	    write_all_fd(out_fd, cubin.s, cubin.len) < 0) {
		ret = die(CHILD_EXIT_SANDBOX, "compile child: cannot write the reply", NULL);
		goto out;
	}
	ret = 0;
out:
	if (prog)
		nv.DestroyProgram(&prog);
	/* NVRTC stays loaded: the process ends now, and unloading it would only
	 * turn its own static allocations into "leaks" for leak checkers. */
	for (int i = 0; i < n_opts; i++)
		free(opts[i]);
	buf_release(&req);
	buf_release(&err);
	buf_release(&log);
	buf_release(&cubin);
	buf_release(&head);
	return ret;
}
