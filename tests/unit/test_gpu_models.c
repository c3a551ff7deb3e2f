/* A host whose GPUs are of several models (issue 43): the device list and
 * the choice of a model (engine/gpus.c), the supervisor's pool of one
 * model with tests/helpers/fake_worker standing in for the workers
 * (KFORGE_WORKER_TEST_GPUS names the devices' models, FAKE_WORKER_NAMES
 * what each worker's hello says), and evaluations keyed by the model they
 * ran on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cudadrv.h"
#include "core/json.h"
#include "core/log.h"
#include "engine/engine_int.h"
#include "engine/rt.h"
#include "tests/unit/stderr_capture.h"

#define ABA "Fake A,Fake B,Fake A"
#define ABA_MODELS "'Fake A' (GPUs 0, 2), 'Fake B' (GPU 1)"

static const char *fake_exe(struct buf *exe)
{
	const char *kb = getenv("KF_BUILD");

	buf_reset(exe);
	buf_addf(exe, "%s/tests/fake_worker", kb ? kb : "build");
	return access(exe->s, X_OK) == 0 ? exe->s : NULL;
}

/* Skips the test where the stand-in worker was not built. */
static void need_fake_worker(void)
{
	struct buf exe = BUF_INIT;
	int have = fake_exe(&exe) != NULL;

	buf_release(&exe);
	if (!have)
		skip();
}

static void env_clear(void)
{
	unsetenv("KFORGE_WORKER_TEST_GPUS");
	unsetenv("KFORGE_WORKER_EXE");
	unsetenv("KFORGE_GPU_MODEL");
	unsetenv("FAKE_WORKER_NAMES");
	unsetenv("FAKE_WORKER_DEAD_DEVICE");
	unsetenv("FAKE_WORKER_CRASH_DEVICE");
}

/* ---- the device list ------------------------------------------------------- */

static void test_list_from_env(void **state)
{
	static const char *const bad[] = { "Fake A,,Fake B", ",Fake A", "x,", NULL };
	struct gpu_list l;
	struct buf err = BUF_INIT, long_name = BUF_INIT, many = BUF_INIT;

	(void)state;
	gpu_list_init(&l);
	setenv("KFORGE_WORKER_TEST_GPUS", "3", 1);        /* a count: the stand-in's name */
	assert_int_equal(gpu_list_probe(&l, &err), 0);
	assert_int_equal(l.n, 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(l.name[i], "Fake GPU");
	setenv("KFORGE_WORKER_TEST_GPUS", ABA, 1);
	assert_int_equal(gpu_list_probe(&l, &err), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.name[0], "Fake A");
	assert_string_equal(l.name[1], "Fake B");
	assert_string_equal(l.name[2], "Fake A");
	setenv("KFORGE_WORKER_TEST_GPUS", "0", 1);
	assert_int_equal(gpu_list_probe(&l, &err), KF_ENOGPU);
	assert_string_equal(err.s, "no GPU visible");
	for (int i = 0; bad[i]; i++) {
		buf_reset(&err);
		setenv("KFORGE_WORKER_TEST_GPUS", bad[i], 1);
		assert_int_equal(gpu_list_probe(&l, &err), -1);
		assert_non_null(strstr(err.s, "KFORGE_WORKER_TEST_GPUS"));
		assert_int_equal(l.n, 0);
	}
	/* Bounds: a name of GPU_NAME_MAX bytes, 65 devices. */
	for (int i = 0; i < GPU_NAME_MAX; i++)
		buf_adds(&long_name, "x");
	setenv("KFORGE_WORKER_TEST_GPUS", long_name.s, 1);
	assert_int_equal(gpu_list_probe(&l, &err), -1);
	for (int i = 0; i < 65; i++)
		buf_addf(&many, "%sG", i ? "," : "");
	setenv("KFORGE_WORKER_TEST_GPUS", many.s, 1);
	assert_int_equal(gpu_list_probe(&l, &err), -1);
	env_clear();
	gpu_list_release(&l);
	buf_release(&err);
	buf_release(&long_name);
	buf_release(&many);
}

/* The default is device 0's model; max counts within the model; an unknown
 * model is an error naming those present. */
static void test_select(void **state)
{
	struct gpu_list l;
	struct buf err = BUF_INIT;
	int dev[3] = { -1, -1, -1 };

	(void)state;
	gpu_list_init(&l);
	setenv("KFORGE_WORKER_TEST_GPUS", ABA, 1);
	assert_int_equal(gpu_list_probe(&l, &err), 0);
	assert_int_equal(gpu_list_select(&l, NULL, 0, dev, &err), 2);
	assert_int_equal(dev[0], 0);
	assert_int_equal(dev[1], 2);
	assert_int_equal(gpu_list_select(&l, "", 0, dev, &err), 2);
	assert_int_equal(gpu_list_select(&l, "Fake B", 0, dev, &err), 1);
	assert_int_equal(dev[0], 1);
	assert_int_equal(gpu_list_select(&l, "Fake A", 1, dev, &err), 1);
	assert_int_equal(dev[0], 0);
	assert_int_equal(gpu_list_select(&l, "Fake", 0, dev, &err), KF_ENOMODEL);
	assert_string_equal(err.s, "no GPU of model 'Fake' here; this host has " ABA_MODELS);
	/* The device 0 of another host is B. */
	setenv("KFORGE_WORKER_TEST_GPUS", "Fake B,Fake A", 1);
	assert_int_equal(gpu_list_probe(&l, &err), 0);
	assert_int_equal(gpu_list_select(&l, NULL, 0, dev, &err), 1);
	assert_int_equal(dev[0], 0);
	assert_string_equal(l.name[dev[0]], "Fake B");
	env_clear();
	gpu_list_release(&l);
	buf_release(&err);
}

/* The public side: the models listed once each, and the choice (the
 * argument over KFORGE_GPU_MODEL over device 0's). */
static void test_public_models(void **state)
{
	struct buf err = BUF_INIT;
	json_t *m = NULL;
	char name[GPU_NAME_MAX];
	char *s;

	(void)state;
	setenv("KFORGE_WORKER_TEST_GPUS", ABA, 1);
	assert_int_equal(engine_gpu_models(&m, &err), 0);
	s = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "[{\"devices\":[0,2],\"name\":\"Fake A\"},"
			       "{\"devices\":[1],\"name\":\"Fake B\"}]");
	free(s);
	json_decref(m);
	assert_int_equal(engine_gpu_model(NULL, name, sizeof(name), &err), 0);
	assert_string_equal(name, "Fake A");
	setenv("KFORGE_GPU_MODEL", "Fake B", 1);
	assert_int_equal(engine_gpu_model(NULL, name, sizeof(name), &err), 0);
	assert_string_equal(name, "Fake B");
	assert_int_equal(engine_gpu_model("Fake A", name, sizeof(name), &err), 0);
	assert_string_equal(name, "Fake A");
	setenv("KFORGE_GPU_MODEL", "", 1);                /* empty: unset */
	assert_null(engine_gpu_model_wanted(NULL));
	assert_int_equal(engine_gpu_model(NULL, name, sizeof(name), &err), 0);
	assert_string_equal(name, "Fake A");
	buf_reset(&err);
	assert_int_equal(engine_gpu_model("H100", name, sizeof(name), &err), KF_ENOMODEL);
	assert_non_null(strstr(err.s, ABA_MODELS));
	env_clear();
	buf_release(&err);
}

/* ---- the supervisor's pool: one model ------------------------------------- */

struct req_arg {
	struct supervisor *s;
	const char *mode, *file;
	int rc, device, pid, env_device;   /* env_device: the supervisor's note in env */
	char name[64];
	char status[32];
	int rerun_device, rerun_died;      /* env.rerun: -1 without one */
};

static void *req_thread(void *p)
{
	struct req_arg *a = p;
	json_t *req = json_pack("{s:s,s:s}", "mode", a->mode, "file", a->file ? a->file : ""),
	       *rep = NULL;
	struct buf err = BUF_INIT;

	a->rc = supervisor_request(a->s, RT_EVAL, req, NULL, 0, &rep, &err);
	a->device = (int)jget_int(rep, "device", -1);
	a->env_device = (int)jget_int(json_object_get(rep, "env"), "device", -2);
	snprintf(a->status, sizeof(a->status), "%s", jget_str(rep, "status", ""));
	{
		json_t *re = json_object_get(json_object_get(rep, "env"), "rerun");
		a->rerun_device = re ? (int)jget_int(re, "device", -2) : -1;
		a->rerun_died = re ? jget_bool(re, "worker_died", 0) : -1;
	}
	a->pid = (int)jget_int(rep, "pid", -1);
	snprintf(a->name, sizeof(a->name), "%s", jget_str(rep, "name", ""));
	json_decref(req);
	json_decref(rep);
	buf_release(&err);
	return NULL;
}

static int in(int v, const int *set, int n)
{
	for (int i = 0; i < n; i++)
		if (set[i] == v)
			return 1;
	return 0;
}

/* Every worker of the pool serves requests (one is held while the others
 * take 6 requests), and every reply comes from a worker of model, on one of
 * the pool's devices. */
static void requests_stay_in_model(struct supervisor *s, const char *model)
{
	int dev[8], n = supervisor_devices(s, dev, 8), seen[8] = { 0 }, busy = 0;
	char go[] = "/tmp/kf-gm-go-XXXXXX";
	struct req_arg hold = { s, "wait_file", go, -1, -1, -1, -2, "" }, a[6];
	pthread_t th, ta[6];
	int fd;

	fd = mkstemp(go);
	assert_true(fd >= 0);
	close(fd);
	unlink(go);
	assert_int_equal(pthread_create(&th, NULL, req_thread, &hold), 0);
	for (int i = 0; i < 500 && (supervisor_waiting(s, &busy), busy) != 1; i++)
		usleep(5000);
	assert_int_equal(busy, 1);
	for (int i = 0; i < 6; i++) {
		a[i] = (struct req_arg){ s, "pid", NULL, -1, -1, -1, -2, "" };
		assert_int_equal(pthread_create(&ta[i], NULL, req_thread, &a[i]), 0);
	}
	for (int i = 0; i < 6 && n > 1; i++)   /* served by the others meanwhile */
		pthread_join(ta[i], NULL);
	fd = open(go, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	pthread_join(th, NULL);
	for (int i = 0; i < 6 && n == 1; i++)
		pthread_join(ta[i], NULL);
	unlink(go);
	for (int i = -1; i < 6; i++) {
		struct req_arg *r = i < 0 ? &hold : &a[i];
		assert_int_equal(r->rc, 0);
		assert_string_equal(r->name, model);
		if (!in(r->device, dev, n))
			fail_msg("a reply from device %d, not of the pool", r->device);
		/* the evaluation's env names the GPU that ran it */
		assert_int_equal(r->env_device, r->device);
		for (int k = 0; k < n; k++)
			seen[k] |= dev[k] == r->device;
	}
	for (int k = 0; k < n; k++)
		if (!seen[k])
			fail_msg("device %d of the pool served nothing", dev[k]);
}

/* The pool of model (NULL: the default, whose name is want). */
static struct supervisor *open_pool(const char *model, const char *want, int max,
				    struct buf *log)
{
	struct supervisor *s = NULL;
	struct buf err = BUF_INIT, exe = BUF_INIT;
	struct capture c;
	json_t *info = NULL;
	int r;

	if (!fake_exe(&exe)) {
		buf_release(&exe);
		return NULL;
	}
	capture_start(&c);
	r = supervisor_open(&s, exe.s, model, max, &info, &err);
	capture_end(&c, log);
	if (r < 0)
		fail_msg("%s", err.s);
	assert_string_equal(jget_str(info, "name", ""), want);
	json_decref(info);
	buf_release(&err);
	buf_release(&exe);
	return s;
}

/* Names A, B, A: the pool of A has GPUs 0 and 2 (the default: device 0's
 * model), the pool of B GPU 1; the other model's worker never starts (a
 * dead GPU 1 is not noticed by A's pool); requests stay in the model. */
static void test_pool_per_model(void **state)
{
	struct supervisor *s;
	struct buf log = BUF_INIT;
	int dev[4];

	(void)state;
	need_fake_worker();
	setenv("KFORGE_WORKER_TEST_GPUS", ABA, 1);
	setenv("FAKE_WORKER_NAMES", ABA, 1);
	setenv("FAKE_WORKER_DEAD_DEVICE", "1", 1);
	s = open_pool(NULL, "Fake A", 0, &log);
	assert_int_equal(supervisor_n_workers(s), 2);
	assert_int_equal(supervisor_devices(s, dev, 4), 2);
	assert_int_equal(dev[0], 0);
	assert_int_equal(dev[1], 2);
	if (strstr(log.s, "taken out") || strstr(log.s, "GPU worker 1"))
		fail_msg("GPU 1 was started: %s", log.s);
	if (!strstr(log.s, "running on 2 GPUs of model 'Fake A' only; not used: 'Fake B' (GPU 1)") ||
	    !strstr(log.s, "--gpu-model NAME or KFORGE_GPU_MODEL"))
		fail_msg("log: %s", log.s);
	requests_stay_in_model(s, "Fake A");
	assert_int_equal(supervisor_n_workers(s), 2);
	supervisor_close(s);

	unsetenv("FAKE_WORKER_DEAD_DEVICE");
	s = open_pool("Fake B", "Fake B", 0, &log);
	assert_int_equal(supervisor_n_workers(s), 1);
	assert_int_equal(supervisor_devices(s, dev, 4), 1);
	assert_int_equal(dev[0], 1);
	if (!strstr(log.s, "not used: 'Fake A' (GPUs 0, 2)"))
		fail_msg("log: %s", log.s);
	requests_stay_in_model(s, "Fake B");
	supervisor_close(s);

	/* max_gpus counts within the model. */
	s = open_pool("Fake A", "Fake A", 1, &log);
	assert_int_equal(supervisor_n_workers(s), 1);
	assert_int_equal(supervisor_devices(s, dev, 4), 1);
	assert_int_equal(dev[0], 0);
	supervisor_close(s);

	/* One model: no line about GPUs left alone. */
	setenv("KFORGE_WORKER_TEST_GPUS", "2", 1);
	unsetenv("FAKE_WORKER_NAMES");
	setenv("KFORGE_GPU_MODEL", "Fake A", 1);   /* not the supervisor's business */
	s = open_pool(NULL, "Fake GPU", 0, &log);
	assert_int_equal(supervisor_n_workers(s), 2);
	if (strstr(log.s, "not used"))
		fail_msg("log: %s", log.s);
	requests_stay_in_model(s, "Fake GPU");
	supervisor_close(s);
	env_clear();
	buf_release(&log);
}

/* An unknown model: no pool, nothing started, the models named. */
static void test_pool_unknown_model(void **state)
{
	struct supervisor *s = NULL;
	struct buf err = BUF_INIT, exe = BUF_INIT, log = BUF_INIT;
	struct capture c;
	json_t *info = NULL;
	int r;

	(void)state;
	if (!fake_exe(&exe)) {
		buf_release(&exe);
		skip();
	}
	setenv("KFORGE_WORKER_TEST_GPUS", ABA, 1);
	setenv("FAKE_WORKER_NAMES", ABA, 1);
	setenv("FAKE_WORKER_DEAD_DEVICE", "all", 1);
	capture_start(&c);
	r = supervisor_open(&s, exe.s, "Fake C", 0, &info, &err);
	capture_end(&c, &log);
	assert_int_equal(r, KF_ENOMODEL);
	assert_null(s);
	assert_null(info);
	assert_string_equal(err.s, "no GPU of model 'Fake C' here; this host has " ABA_MODELS);
	if (strstr(log.s, "taken out"))
		fail_msg("a worker was started: %s", log.s);
	env_clear();
	buf_release(&err);
	buf_release(&exe);
	buf_release(&log);
}

/* A worker whose hello names another model than the driver did never
 * serves: its GPU leaves the pool, the requests go to the other. */
static void test_pool_hello_mismatch(void **state)
{
	struct supervisor *s;
	struct buf log = BUF_INIT;

	(void)state;
	need_fake_worker();
	setenv("KFORGE_WORKER_TEST_GPUS", "Fake A,Fake A", 1);
	setenv("FAKE_WORKER_NAMES", "Fake A,Fake B", 1);
	s = open_pool(NULL, "Fake A", 0, &log);
	assert_int_equal(supervisor_n_workers(s), 1);
	if (!strstr(log.s, "GPU 1 (Fake B) taken out of the pool after 3 failed starts") ||
	    !strstr(log.s, "GPU worker 1 reports model 'Fake B', not 'Fake A' as the driver said"))
		fail_msg("log: %s", log.s);
	for (int i = 0; i < 4; i++) {
		struct req_arg a = { s, "pid", NULL, -1, -1, -1, -2, "" };
		req_thread(&a);
		assert_int_equal(a.rc, 0);
		assert_int_equal(a.device, 0);
		assert_string_equal(a.name, "Fake A");
	}
	supervisor_close(s);
	env_clear();
	buf_release(&log);
}

/* ---- evaluations keyed by the model they ran on --------------------------- */

static const char relu[] =
	"extern \"C\" __global__ void k(const float* x, float* y, long long n)\n"
	"{ long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f; }\n"
	"/*@launch\nk<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);\n@*/\n";

/* An engine on model (cfg NULL: the default) evaluates relu: 0, 1 when
 * NVRTC is missing; the outcome in o. */
static int eval_on(const char *db, const char *model, struct eval_outcome *o, char *gpu,
		   struct buf *err)
{
	struct engine_config cfg;
	struct engine *e = NULL;
	struct eval_request req = { .problem_id = "level1/019_ReLU", .candidate = relu };
	int r;

	memset(&cfg, 0, sizeof(cfg));
	eval_protocol_default(&cfg.protocol);
	cfg.root = getenv("KF_ROOT");
	cfg.store_path = db;
	cfg.exe = getenv("KFORGE");      /* compiles; the worker is KFORGE_WORKER_EXE */
	cfg.n_compile = 1;
	cfg.gpu_model = model;
	if ((r = engine_open(&e, &cfg, err)) < 0)
		return r;
	snprintf(gpu, GPU_NAME_MAX, "%s", engine_gpu_name(e));
	r = engine_eval(e, &req, o, err);
	engine_close(e);
	if (r < 0 && (strstr(err->s, "NVRTC not found") || strstr(err->s, "compile child failed")))
		return 1;
	return r;
}

static void test_engine_keys_per_model(void **state)
{
	const char *root = getenv("KF_ROOT"), *kf = getenv("KFORGE");
	char dir[] = "/tmp/kf-gm-eng-XXXXXX", db[64], gpu[GPU_NAME_MAX];
	struct buf err = BUF_INIT, exe = BUF_INIT;
	struct eval_outcome a, b, a2;
	struct engine_config cfg;
	struct engine *e = NULL;
	int r;

	(void)state;
	if (!root || !kf || !fake_exe(&exe)) {
		buf_release(&exe);
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/k.db", dir);
	setenv("KFORGE_WORKER_TEST_GPUS", ABA, 1);
	setenv("FAKE_WORKER_NAMES", ABA, 1);
	setenv("KFORGE_WORKER_EXE", exe.s, 1);
	eval_outcome_init(&a);
	eval_outcome_init(&b);
	eval_outcome_init(&a2);
	r = eval_on(db, NULL, &a, gpu, &err);
	if (r == 1) {
		env_clear();
		skip();
	}
	if (r < 0)
		fail_msg("%s", err.s);
	assert_string_equal(gpu, "Fake A");
	assert_string_equal(a.gpu_name, "Fake A");
	assert_string_equal(a.status, "correct");
	/* KFORGE_GPU_MODEL chooses B; the same kernel there is another key. */
	setenv("KFORGE_GPU_MODEL", "Fake B", 1);
	if (eval_on(db, NULL, &b, gpu, &err) != 0)
		fail_msg("%s", err.s);
	assert_string_equal(b.gpu_name, "Fake B");
	assert_string_equal(b.kernel_hash, a.kernel_hash);
	assert_string_not_equal(b.eval_id, a.eval_id);
	assert_int_equal(b.cached, 0);
	/* The configuration wins over the environment: A's result, cached. */
	if (eval_on(db, "Fake A", &a2, gpu, &err) != 0)
		fail_msg("%s", err.s);
	assert_string_equal(a2.gpu_name, "Fake A");
	assert_string_equal(a2.eval_id, a.eval_id);
	assert_int_equal(a2.cached, 1);
	/* An unknown model: engine_open says which there are. */
	memset(&cfg, 0, sizeof(cfg));
	eval_protocol_default(&cfg.protocol);
	cfg.root = root;
	cfg.store_path = db;
	cfg.exe = kf;
	cfg.gpu_model = "Fake C";
	buf_reset(&err);
	assert_int_equal(engine_open(&e, &cfg, &err), KF_ENOMODEL);
	assert_null(e);
	assert_non_null(strstr(err.s, ABA_MODELS));
	env_clear();
	{
		struct store s;
		json_t *rows;
		assert_int_equal(store_open(&s, db, STORE_READONLY, &err), 0);
		rows = store_query_all(&s, "SELECT id, gpu_name FROM evals ORDER BY gpu_name", NULL,
				       &err);
		assert_non_null(rows);
		assert_int_equal(json_array_size(rows), 2);
		assert_string_equal(jget_str(json_array_get(rows, 0), "gpu_name", ""), "Fake A");
		assert_string_equal(jget_str(json_array_get(rows, 0), "id", ""), a.eval_id);
		assert_string_equal(jget_str(json_array_get(rows, 1), "gpu_name", ""), "Fake B");
		assert_string_equal(jget_str(json_array_get(rows, 1), "id", ""), b.eval_id);
		json_decref(rows);
		store_close(&s);
	}
	{
		char cmd[96];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
	}
	eval_outcome_release(&a);
	eval_outcome_release(&b);
	eval_outcome_release(&a2);
	buf_release(&err);
	buf_release(&exe);
}

/* ---- a worker that dies: its GPU's fault or the kernel's ------------------ */

static void *hold_thread(void *p)
{
	return req_thread(p);
}

/* GPU 1 of two aborts on every evaluation: each death is run again on
 * GPU 0, which survives it, so GPU 1 gets a strike; the result stands
 * (runtime_error, env.rerun names GPU 0), and the third strike in a row
 * takes GPU 1 out of the pool. GPU 0 is held busy while each request goes
 * out, so that the request lands on GPU 1. */
static void test_pool_strikes(void **state)
{
	struct supervisor *s;
	struct buf log = BUF_INIT;
	struct capture c;
	char go[] = "/tmp/kf-gm-st-XXXXXX";
	int fd, busy = 0;

	(void)state;
	need_fake_worker();
	setenv("KFORGE_WORKER_TEST_GPUS", "Fake A,Fake A", 1);
	setenv("FAKE_WORKER_NAMES", "Fake A,Fake A", 1);
	setenv("FAKE_WORKER_CRASH_DEVICE", "1", 1);
	s = open_pool(NULL, "Fake A", 0, &log);
	assert_int_equal(supervisor_n_workers(s), 2);
	fd = mkstemp(go);
	assert_true(fd >= 0);
	close(fd);
	capture_start(&c);
	for (int k = 0; k < 3; k++) {
		struct req_arg hold = { s, "wait_file", go, -1, -1, -1, -2, "" },
			       r = { s, "pid", NULL, -1, -1, -1, -2, "" };
		pthread_t th, tr;
		unlink(go);
		assert_int_equal(pthread_create(&th, NULL, hold_thread, &hold), 0);
		for (int i = 0; i < 500 && (supervisor_waiting(s, &busy), busy) != 1; i++)
			usleep(5000);
		assert_int_equal(busy, 1);
		assert_int_equal(pthread_create(&tr, NULL, req_thread, &r), 0);
		/* its rerun waits for GPU 0 */
		for (int i = 0; i < 1000 && supervisor_waiting(s, &busy) != 1; i++)
			usleep(5000);
		fd = open(go, O_CREAT | O_WRONLY, 0600);
		assert_true(fd >= 0);
		close(fd);
		pthread_join(th, NULL);
		pthread_join(tr, NULL);
		assert_int_equal(hold.device, 0);
		assert_int_equal(r.rc, 0);
		assert_string_equal(r.status, "runtime_error");
		assert_int_equal(r.env_device, 1);
		assert_int_equal(r.rerun_device, 0);
		assert_int_equal(r.rerun_died, 0);
		assert_int_equal(supervisor_n_workers(s), k < 2 ? 2 : 1);
	}
	capture_end(&c, &log);
	if (!strstr(log.s, "GPU 1 (Fake A) taken out of the pool: its worker died on 3 evaluations "
			   "in a row that GPU 0 then ran without dying (1 GPU left)"))
		fail_msg("log: %s", log.s);
	for (int k = 0; k < 3; k++) {   /* the pool goes on, on GPU 0 */
		struct req_arg a = { s, "pid", NULL, -1, -1, -1, -2, "" };
		req_thread(&a);
		assert_int_equal(a.rc, 0);
		assert_string_equal(a.status, "correct");
		assert_int_equal(a.device, 0);
		assert_int_equal(a.rerun_device, -1);
	}
	unlink(go);
	supervisor_close(s);
	env_clear();
	buf_release(&log);
}

/* A kernel that kills any worker: its rerun on the other GPU dies too, so
 * no GPU gets a strike, however often; alone on one GPU, no rerun. */
static void test_pool_kernel_crash(void **state)
{
	struct supervisor *s;
	struct buf log = BUF_INIT;

	(void)state;
	need_fake_worker();
	setenv("KFORGE_WORKER_TEST_GPUS", "Fake A,Fake A", 1);
	setenv("FAKE_WORKER_NAMES", "Fake A,Fake A", 1);
	s = open_pool(NULL, "Fake A", 0, &log);
	for (int k = 0; k < 4; k++) {
		struct req_arg a = { s, "crash", NULL, -1, -1, -1, -2, "" };
		req_thread(&a);
		assert_int_equal(a.rc, 0);
		assert_string_equal(a.status, "runtime_error");
		assert_true(a.rerun_device >= 0 && a.rerun_device != a.env_device);
		assert_int_equal(a.rerun_died, 1);
	}
	assert_int_equal(supervisor_n_workers(s), 2);
	supervisor_close(s);
	setenv("KFORGE_WORKER_TEST_GPUS", "Fake A", 1);
	setenv("FAKE_WORKER_NAMES", "Fake A", 1);
	s = open_pool(NULL, "Fake A", 0, &log);
	{
		struct req_arg a = { s, "crash", NULL, -1, -1, -1, -2, "" };
		req_thread(&a);
		assert_string_equal(a.status, "runtime_error");
		assert_int_equal(a.rerun_device, -1);
	}
	assert_int_equal(supervisor_n_workers(s), 1);
	supervisor_close(s);
	env_clear();
	buf_release(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_from_env),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_public_models),
		cmocka_unit_test(test_pool_per_model),
		cmocka_unit_test(test_pool_unknown_model),
		cmocka_unit_test(test_pool_hello_mismatch),
		cmocka_unit_test(test_engine_keys_per_model),
		cmocka_unit_test(test_pool_strikes),
		cmocka_unit_test(test_pool_kernel_crash),
	};

	log_setup(LOG_INFO);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
