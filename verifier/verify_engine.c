/* The verifier's real backend: the engine under protocol verify-v3, and
 * compute-sanitizer (memcheck, racecheck) over `kforge eval --quick` in a
 * child, with a throwaway store so sanitizer-slowed runs never reach the
 * real one. */
#include "verifier/verify.h"

#include <errno.h>
#include <sys/random.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/json.h"
#include "core/proc.h"

#define SANITIZER_WALL_S 600.0

struct vctx {
	struct engine *e;          /* NULL after vrelease until the next eval */
	char sanitizer[PATH_MAX];  /* "" when absent */
	char launches[16];         /* launch blocks of a sanitizer run, drawn per run */
	char kforge[PATH_MAX];
	char root[PATH_MAX];
	char db[PATH_MAX];
	char gpu[128];
	char model[128];           /* the model asked for ("": the default) */
	double san_wall_s;
	double max_timing_s;
	int profile;
};

static int vopen(struct vctx *c, struct buf *err)
{
	struct engine_config ec;

	memset(&ec, 0, sizeof(ec));
	ec.root = c->root;
	ec.store_path = c->db;
	eval_protocol_verify(&ec.protocol);
	ec.protocol.max_timing_s = c->max_timing_s;
	ec.profile = c->profile;
	/* Reopened after each sanitizer run: on the model verified first. */
	ec.gpu_model = c->gpu[0] ? c->gpu : c->model[0] ? c->model : NULL;
	return engine_open(&c->e, &ec, err);
}

static int veval(void *ctx, const char *problem_id, const char *candidate,
		 struct eval_outcome *out, struct buf *err)
{
	struct vctx *c = ctx;
	struct eval_request rq = { .problem_id = problem_id, .candidate = candidate };

	if (!c->e && vopen(c, err) < 0)
		return -1;
	return engine_eval(c->e, &rq, out, err);
}

/* Called just before the current kernel's eval, which would open the engine
 * anyway (first kernel, or after a sanitizer run); an error is its to report. */
static void vprefetch(void *ctx, const char *candidate)
{
	struct vctx *c = ctx;
	struct buf err = BUF_INIT;

	if (c->e || vopen(c, &err) == 0)
		engine_prefetch(c->e, candidate);
	buf_release(&err);
}

static const char *vgpu(void *ctx)
{
	return ((struct vctx *)ctx)->gpu;
}

/* Closing the engine stops its GPU worker: all of its device memory (inputs,
 * kept references) is freed for the sanitized child. */
static void vrelease(void *ctx)
{
	struct vctx *c = ctx;

	engine_close(c->e);
	c->e = NULL;
}

static int find_sanitizer(const char *given, char *out, size_t n)
{
	const char *cuda = getenv("CUDA_HOME");
	const char *path = getenv("PATH");
	char cand[PATH_MAX];

	if (given) {
		snprintf(out, n, "%s", given);
		return access(out, X_OK) == 0 ? 0 : -1;
	}
	snprintf(cand, sizeof(cand), "%s/bin/compute-sanitizer", cuda && *cuda ? cuda :
		 "/usr/local/cuda");
	if (access(cand, X_OK) == 0) {
		snprintf(out, n, "%s", cand);
		return 0;
	}
	while (path && *path) {
		size_t l = strcspn(path, ":");
		snprintf(cand, sizeof(cand), "%.*s/compute-sanitizer", (int)l, path);
		if (l && access(cand, X_OK) == 0) {
			snprintf(out, n, "%s", cand);
			return 0;
		}
		path += l + (path[l] == ':');
	}
	return -1;
}

/* Last lines of the tool's report, for the record (bounded). */
static void tail_lines(const struct buf *b, struct buf *out, int max_lines)
{
	size_t i = b->len;
	int lines = 0;

	while (i > 0 && lines <= max_lines)
		if (b->s[--i] == '\n')
			lines++;
	buf_add(out, b->s + i, b->len - i > 4000 ? 4000 : b->len - i);
}

/* A compute-sanitizer report line about device code (memcheck, racecheck),
 * as opposed to "Program hit CUDA_ERROR_..." on a host API call. */
int verify_sanitizer_kernel_errors(const char *report)
{
	static const char *const pat[] = { "Invalid __", "Race reported", "Barrier error",
					   "Misaligned", "Out-of-range", "hazard detected",
					   "Illegal", "Uninitialized __", "Leaked", "Malloc/Free",
					   "Stack overflow", "Device-side assert", NULL };
	if (!report)
		return 0;
	for (int i = 0; pat[i]; i++)
		if (strstr(report, pat[i]))
			return 1;
	return 0;
}

int verify_sanitizer_launches(void)
{
	unsigned r = 0;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (unsigned)getpid() * 2654435761u;
	return VERIFY_SAN_LAUNCHES_MIN + (int)(r % (VERIFY_SAN_LAUNCHES_MAX - VERIFY_SAN_LAUNCHES_MIN + 1));
}

static int run_tool(struct vctx *c, const char *tool, const char *problem_id,
		    const char *file, const char *db, json_t *result, struct buf *err)
{
	struct proc_limits lim = { c->san_wall_s, 0, 0, 0, 4 << 20, 1 };
	struct proc_result r;
	struct buf detail = BUF_INIT, how = BUF_INIT;
	const char *argv[24];
	const char *status;
	int n = 0;

	argv[n++] = c->sanitizer;
	argv[n++] = "--tool";
	argv[n++] = tool;
	argv[n++] = "--error-exitcode";
	argv[n++] = "99";
	argv[n++] = "--print-limit";
	argv[n++] = "20";
	argv[n++] = c->kforge;
	argv[n++] = "--db";
	argv[n++] = db;
	argv[n++] = "eval";
	argv[n++] = problem_id;
	argv[n++] = file;
	/* A secret number of launch blocks (tools slow kernels 10-1000x): work
	 * a kernel does only on some launch is not hidden from the tools. */
	argv[n++] = "--quick-launches";
	argv[n++] = c->launches;
	argv[n++] = "--force";
	/* On a GPU of the model verified (the child's default is device 0's). */
	argv[n++] = "--gpu-model";
	argv[n++] = c->gpu;
	argv[n] = NULL;
	proc_result_init(&r);
	if (proc_run(argv, NULL, 0, &lim, &r, err) < 0) {
		proc_result_release(&r);
		return -1;
	}
	proc_describe(&r, &how);
	if (r.timed_out) {
		status = "skipped";
		buf_addf(&detail, "%s did not finish within %.0f s", tool, c->san_wall_s);
	} else if (r.exited && r.status == 99 && !verify_sanitizer_kernel_errors(r.out.s) &&
		   !verify_sanitizer_kernel_errors(r.errout.s)) {
		/* Only host API errors (the harness's cuMemAlloc out of memory
		 * while the verifier's own worker holds the problem): nothing
		 * was found in the kernel, and nothing was checked either. */
		status = "skipped";
		buf_addf(&detail, "%s reported no kernel error, only host API errors: ", tool);
		tail_lines(&r.out, &detail, 12);
	} else if (r.exited && r.status == 99) {
		status = "errors";
		tail_lines(&r.out, &detail, 30);
	} else if (r.exited && r.status == 0) {
		status = "clean";
		tail_lines(&r.out, &detail, 2);
	} else {
		/* The tool could not run the program (no GPU support, a driver
		 * mismatch): no verdict either way, with the reason kept. */
		status = "skipped";
		buf_addf(&detail, "%s: %s: ", tool, how.s);
		tail_lines(&r.errout, &detail, 10);
		tail_lines(&r.out, &detail, 10);
	}
	json_object_set_new(result, tool, json_pack("{s:s,s:s}", "status", status, "detail",
						       detail.s));
	proc_result_release(&r);
	buf_release(&detail);
	buf_release(&how);
	return 0;
}

static int vsanitize(void *ctx, const char *problem_id, const char *candidate, json_t *result,
		     struct buf *err)
{
	struct vctx *c = ctx;
	char dir[] = "/tmp/kforge-san.XXXXXX";
	struct buf file = BUF_INIT, db = BUF_INIT;
	int rc = -1;

	if (!c->sanitizer[0]) {
		for (int t = 0; t < 2; t++)
			json_object_set_new(result, t ? "racecheck" : "memcheck",
					    json_pack("{s:s,s:s}", "status", "skipped", "detail",
						      "compute-sanitizer not found"));
		return 0;
	}
	if (!mkdtemp(dir))
		return kf_err(err, "sanitizer: mkdtemp: %s", strerror(errno));
	snprintf(c->launches, sizeof(c->launches), "%d", verify_sanitizer_launches());
	buf_addf(&file, "%s/candidate.cu", dir);
	buf_addf(&db, "%s/scratch.db", dir);
	if (write_file_atomic(file.s, candidate, strlen(candidate), err))
		goto out;
	/* CUPTI and the sanitizer both want the profiling interface. The
	 * sanitized kforge (and its worker) die with their parent: a verifier
	 * stopped by a time limit leaves nothing running on the GPU. */
	setenv("KFORGE_NO_CUPTI", "1", 1);
	setenv("KFORGE_DIE_WITH_PARENT", "1", 1);
	if (run_tool(c, "memcheck", problem_id, file.s, db.s, result, err) ||
	    run_tool(c, "racecheck", problem_id, file.s, db.s, result, err))
		goto out;
	rc = 0;
out:
	unsetenv("KFORGE_NO_CUPTI");
	unsetenv("KFORGE_DIE_WITH_PARENT");
	{
		struct buf rm = BUF_INIT;
		const char *tails[] = { "candidate.cu", "scratch.db", "scratch.db-wal",
					"scratch.db-shm", "" };
		for (int i = 0; tails[i][0]; i++) {
			buf_setf(&rm, "%s/%s", dir, tails[i]);
			unlink(rm.s);
		}
		rmdir(dir);
		buf_release(&rm);
	}
	buf_release(&file);
	buf_release(&db);
	return rc;
}

int verify_backend_engine(struct verify_backend *be, const struct verify_config *cfg,
			  const char *root, struct buf *err)
{
	struct vctx *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return kf_err(err, "out of memory");
	if (strlen(root) >= sizeof(c->root) || strlen(cfg->db_path) >= sizeof(c->db) ||
	    (cfg->gpu_model && strlen(cfg->gpu_model) >= sizeof(c->model))) {
		free(c);
		return kf_err(err, "verify: path or GPU model name too long");
	}
	snprintf(c->root, sizeof(c->root), "%s", root);
	snprintf(c->db, sizeof(c->db), "%s", cfg->db_path);
	c->max_timing_s = cfg->max_timing_s;
	c->profile = cfg->profile;
	snprintf(c->model, sizeof(c->model), "%s", cfg->gpu_model ? cfg->gpu_model : "");
	if ((rc = vopen(c, err)) < 0) {
		free(c);
		return rc;
	}
	snprintf(c->gpu, sizeof(c->gpu), "%s", engine_gpu_name(c->e));
	if (cfg->sanitizer && find_sanitizer(cfg->sanitizer_path, c->sanitizer,
					     sizeof(c->sanitizer)))
		c->sanitizer[0] = 0;
	snprintf(c->kforge, sizeof(c->kforge), "%s", cfg->kforge_path ? cfg->kforge_path : "kforge");
	c->san_wall_s = cfg->sanitizer_wall_s > 0 ? cfg->sanitizer_wall_s : SANITIZER_WALL_S;
	be->eval = veval;
	be->gpu_name = vgpu;
	be->sanitize = vsanitize;
	be->release = vrelease;
	be->prefetch = vprefetch;
	be->ctx = c;
	return 0;
}

void verify_backend_release(struct verify_backend *be)
{
	struct vctx *c = be->ctx;

	if (!c)
		return;
	engine_close(c->e);
	free(c);
	be->ctx = NULL;
}
