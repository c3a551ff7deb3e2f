/* The GPU worker's process: context, harness module, request loop. The
 * protocol itself is engine/rt.h; what an evaluation does is
 * worker_eval.c (its parts: worker_inputs.c, worker_launch.c,
 * worker_keep.c, worker_check.c). */
#include "worker_int.h"
#include "compile.h"
#include "engine/rt.h"
#include "engine/nvrtc.h"
#include "problem/inputs.h"
#include "core/json.h"
#include "core/log.h"
#include "core/fsutil.h"
#include "core/proc.h"
#include "core/sha256.h"
#include "gen/harness_cuh.h"
#include "core/xalloc.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

int wk_progress(struct worker *w, double next_s)
{
	struct buf e = BUF_INIT;
	json_t *j = json_pack("{s:f}", "next_s", next_s);
	int r = rt_send(w->out_fd, RT_PROGRESS, j, NULL, 0, &e);

	json_decref(j);
	buf_release(&e);
	return r;
}

/* Errors after which the context stays usable (nothing ran). */
static int benign(CUresult r)
{
	switch (r) {
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
	case CUDA_ERROR_INVALID_HANDLE:
	case CUDA_ERROR_NOT_FOUND:
	case CUDA_ERROR_OUT_OF_MEMORY:
	case CUDA_ERROR_INVALID_IMAGE:
	case CUDA_ERROR_NO_BINARY_FOR_GPU:
	case CUDA_ERROR_INVALID_PTX:
	case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
	case CUDA_ERROR_SHARED_OBJECT_INIT_FAILED:
	case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
		return 1;
	default:
		return 0;
	}
}

int wk_cuda_err(struct worker *w, CUresult r, const char *what, struct buf *err)
{
	struct buf m = BUF_INIT;

	cudadrv_describe(&w->d, r, &m);
	kf_err(err, "%s: %s", what, m.s);
	buf_release(&m);
	if (!benign(r))
		w->fatal = 1;
	return -1;
}

int wk_alloc(struct worker *w, struct wk_buf *b, size_t bytes, struct buf *err)
{
	size_t padded = (bytes + 255) & ~(size_t)255;
	CUresult r;

	memset(b, 0, sizeof(*b));
	/* Whole 2 MiB pages (the driver's granularity): no mapped slack past
	 * the trailing guard, which runs to the end and is counted after runs. */
	b->total = (padded + 2 * WK_GUARD + WK_ALLOC_GRAIN - 1) & ~(size_t)(WK_ALLOC_GRAIN - 1);
	r = w->d.cuMemAlloc(&b->base, b->total);
	/* Other problems' kept references give way to the current one's buffers. */
	while (r == CUDA_ERROR_OUT_OF_MEMORY && wk_drop_idle_keep(w))
		r = w->d.cuMemAlloc(&b->base, b->total);
	if (r != CUDA_SUCCESS) {
		struct buf m = BUF_INIT;
		cudadrv_describe(&w->d, r, &m);
		kf_err(err, "allocating %zu bytes: %s", bytes, m.s);
		buf_release(&m);
		memset(b, 0, sizeof(*b));
		return -1;
	}
	b->data = b->base + WK_GUARD;
	b->bytes = bytes;
	/* Guards and padding: the canary byte. */
	w->d.cuMemsetD8Async(b->base, WK_GUARD_BYTE, WK_GUARD, w->st);
	w->d.cuMemsetD8Async(b->data + bytes, WK_GUARD_BYTE, b->total - WK_GUARD - bytes, w->st);
	return 0;
}

void wk_free(struct worker *w, struct wk_buf *b)
{
	if (b->base)
		w->d.cuMemFree(b->base);
	memset(b, 0, sizeof(*b));
}

int wk_wait(struct worker *w, CUevent ev, double timeout_s, struct buf *err)
{
	double t0 = now_s();
	long spins = 0;

	for (;;) {
		CUresult r = w->d.cuEventQuery(ev);
		if (r == CUDA_SUCCESS)
			return 0;
		if (r != CUDA_ERROR_NOT_READY)
			return wk_cuda_err(w, r, "kernel execution", err);
		if (now_s() - t0 > timeout_s)
			return -2;
		if (++spins > 2000) {
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
	}
}

int wk_launch_h(struct worker *w, CUfunction f, unsigned grid, void **args, struct buf *err)
{
	CUresult r = w->d.cuLaunchKernel(f, grid ? grid : 1, 1, 1, 256, 1, 1, 0, w->st, args, NULL);

	return r == CUDA_SUCCESS ? 0 : wk_cuda_err(w, r, "harness kernel launch", err);
}

void wk_module_unload(struct worker *w, struct wk_module *m)
{
	if (m->scratch)
		for (int i = 0; i < m->plan.n_scratch; i++)
			wk_free(w, &m->scratch[i]);
	if (m->loaded && m->mod)
		w->d.cuModuleUnload(m->mod);
	if (m->gimage)
		w->d.cuMemFree(m->gimage);
	free(m->gptr);
	free(m->gsize);
	free(m->fn);
	free(m->scratch);
	launch_plan_release(&m->plan);
	memset(m, 0, sizeof(*m));
	launch_plan_init(&m->plan);
}

#define WK_MAX_GLOBALS 4096

struct glob_ctx {
	struct worker *w;
	struct wk_module *m;
};

static int add_global(const char *name, unsigned long long size, void *ctx)
{
	struct glob_ctx *g = ctx;
	CUdeviceptr p = 0;
	size_t sz = 0;

	(void)size;
	if (g->m->n_glob >= WK_MAX_GLOBALS)
		return -1;
	if (g->w->d.cuModuleGetGlobal(&p, &sz, g->m->mod, name) != CUDA_SUCCESS || !p || !sz) {
		g->m->glob_missing++;
		return 0;
	}
	g->m->gptr[g->m->n_glob] = p;
	g->m->gsize[g->m->n_glob++] = sz;
	return 0;
}

/* The module's variables and a copy of their contents as loaded. */
static int snapshot_globals(struct worker *w, struct wk_module *m, const void *cubin, size_t len,
			    struct buf *err)
{
	struct glob_ctx g = { w, m };
	size_t total = 0, off = 0;
	CUresult r;

	m->gptr = xcalloc(WK_MAX_GLOBALS, sizeof(*m->gptr));
	m->gsize = xcalloc(WK_MAX_GLOBALS, sizeof(*m->gsize));
	if (cubin_globals(cubin, len, add_global, &g) > WK_MAX_GLOBALS)
		return kf_err(err, "more than %d module variables", WK_MAX_GLOBALS);
	for (int i = 0; i < m->n_glob; i++)
		total += (m->gsize[i] + 255) & ~(size_t)255;
	if (!total)
		return 0;
	r = w->d.cuMemAlloc(&m->gimage, total);
	if (r != CUDA_SUCCESS)
		return wk_cuda_err(w, r, "keeping the module variables' image", err);
	for (int i = 0; i < m->n_glob; i++) {
		r = w->d.cuMemcpyDtoDAsync(m->gimage + off, m->gptr[i], m->gsize[i], w->st);
		if (r != CUDA_SUCCESS)
			return wk_cuda_err(w, r, "keeping the module variables' image", err);
		off += (m->gsize[i] + 255) & ~(size_t)255;
	}
	return 0;
}

int wk_module_restore_globals(struct worker *w, struct wk_module *m, struct buf *err)
{
	size_t off = 0;

	for (int i = 0; i < m->n_glob; i++) {
		CUresult r = w->d.cuMemcpyDtoDAsync(m->gptr[i], m->gimage + off, m->gsize[i], w->st);
		if (r != CUDA_SUCCESS)
			return wk_cuda_err(w, r, "restoring the module variables", err);
		off += (m->gsize[i] + 255) & ~(size_t)255;
	}
	return 0;
}

/* The plan's functions from m->mod, with their dynamic shared memory raised. */
static int get_functions(struct worker *w, struct wk_module *m, struct buf *err)
{
	struct buf name = BUF_INIT;
	CUresult r;

	for (int i = 0; i < m->plan.n_steps; i++) {
		const struct launch_step *s = &m->plan.steps[i];
		int maxt = 0, stat = 0;
		unsigned threads = s->block[0] * s->block[1] * s->block[2];
		r = w->d.cuModuleGetFunction(&m->fn[i], m->mod, s->kernel);
		if (r != CUDA_SUCCESS) {
			buf_setf(&name, "line %d: kernel '%s' not found in the module", s->line, s->kernel);
			wk_cuda_err(w, r, name.s, err);
			buf_release(&name);
			return -1;
		}
		w->d.cuFuncGetAttribute(&maxt, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, m->fn[i]);
		w->d.cuFuncGetAttribute(&stat, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, m->fn[i]);
		if (maxt > 0 && threads > (unsigned)maxt) {
			buf_release(&name);
			return kf_err(err, "line %d: %s: block of %u threads, but the compiled kernel allows at most %d (registers)",
				      s->line, s->kernel, threads, maxt);
		}
		/* The default allowance is 48 KiB less the static shared memory:
		 * 48 KiB dynamic beside static arrays needs the opt-in too. */
		if (s->smem > 0) {
			int cur = 0;
			w->d.cuFuncGetAttribute(&cur, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, m->fn[i]);
			if ((int)s->smem > cur) {
				r = w->d.cuFuncSetAttribute(m->fn[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
							    (int)s->smem);
				if (r != CUDA_SUCCESS) {
					buf_setf(&name, "line %d: %s: %u bytes of dynamic shared memory (+%d static)",
						 s->line, s->kernel, s->smem, stat);
					wk_cuda_err(w, r, name.s, err);
					buf_release(&name);
					return -1;
				}
			}
		}
	}
	buf_release(&name);
	return 0;
}

int wk_module_load(struct worker *w, struct wk_module *m, const void *cubin, size_t len,
		   const char *plan_json, struct buf *err)
{
	CUresult r;
	struct buf name = BUF_INIT;

	memset(m, 0, sizeof(*m));
	launch_plan_init(&m->plan);
	if (!len)
		return kf_err(err, "no cubin");
	if (launch_plan_from_json(&m->plan, plan_json, err) < 0)
		return -1;
	r = w->d.cuModuleLoadData(&m->mod, cubin);
	if (r != CUDA_SUCCESS)
		return wk_cuda_err(w, r, "loading the module (cuModuleLoadData)", err);
	m->loaded = 1;
	m->fn = xcalloc((size_t)m->plan.n_steps + 1, sizeof(*m->fn));
	m->scratch = xcalloc((size_t)m->plan.n_scratch + 1, sizeof(*m->scratch));
	if (get_functions(w, m, err) < 0 || snapshot_globals(w, m, cubin, len, err) < 0)
		return -1;
	for (int i = 0; i < m->plan.n_scratch; i++) {
		const struct launch_scratch *sc = &m->plan.scratch[i];
		if (wk_alloc(w, &m->scratch[i], sc->elem_size * (size_t)sc->count, err) < 0) {
			buf_setf(&name, "scratch %s: %s", sc->name, err->s);
			kf_err(err, "%s", name.s);
			buf_release(&name);
			return -1;
		}
	}
	buf_release(&name);
	return 0;
}

/* ---- start ----------------------------------------------------------------- */

/* $KFORGE_CACHE, else $XDG_CACHE_HOME/kforge, else ~/.cache/kforge; "" when none. */
static void cache_path(const char *key, struct buf *out)
{
	const char *c = getenv("KFORGE_CACHE"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");

	buf_reset(out);
	if (c && *c)
		buf_addf(out, "%s/harness-%s.cubin", c, key);
	else if (x && *x)
		buf_addf(out, "%s/kforge/harness-%s.cubin", x, key);
	else if (h && *h)
		buf_addf(out, "%s/.cache/kforge/harness-%s.cubin", h, key);
}

int worker_harness_compile(const char *arch, struct buf *cubin, struct buf *err)
{
	struct nvrtc nv;
	struct buf src = BUF_INIT, inc = BUF_INIT, opt_arch = BUF_INIT, opt_inc = BUF_INIT;
	struct buf cpath = BUF_INIT;
	kf_nvrtcProgram prog = NULL;
	const char *opts[4];
	int n = 0, rc, ret = -1;
	size_t sz = 0;

	nvrtc_init(&nv);
	inputs_device_source(&src);
	buf_adds(&src, "\n");
	buf_adds(&src, harness_cuh);
	if (nvrtc_load(&nv, err) < 0)
		goto out;
	{
		/* Cached by content: source, architecture, NVRTC version. */
		char key[65];
		struct buf k = BUF_INIT;
		buf_addf(&k, "%s|%d.%d|", arch, nv.major, nv.minor);
		buf_add(&k, src.s, src.len);
		sha256_hex(k.s, k.len, key);
		buf_release(&k);
		cache_path(key, &cpath);
		if (cpath.len && buf_read_file(cubin, cpath.s, 64u << 20, NULL) == 0 && cubin->len > 4 &&
		    !memcmp(cubin->s, "\x7f" "ELF", 4)) {
			ret = 0;
			goto out;
		}
		buf_reset(cubin);
	}
	buf_setf(&opt_arch, "--gpu-architecture=%s", arch);
	opts[n++] = opt_arch.s;
	opts[n++] = "-std=c++17";
	if (nvrtc_include_dir(&inc) == 0) {
		buf_setf(&opt_inc, "-I%s", inc.s);
		opts[n++] = opt_inc.s;
	}
	if (nv.CreateProgram(&prog, src.s, "kforge_harness.cu", 0, NULL, NULL) != 0) {
		kf_err(err, "nvrtcCreateProgram failed for the harness");
		goto out;
	}
	rc = nv.CompileProgram(prog, n, opts);
	if (rc != 0) {
		struct buf log = BUF_INIT;
		if (nv.GetProgramLogSize(prog, &sz) == 0 && sz > 1) {
			buf_grow(&log, sz);
			nv.GetProgramLog(prog, log.s);
			log.len = strnlen(log.s, sz);
		}
		kf_err(err, "the harness kernels do not compile (%s):\n%s", nv.GetErrorString(rc), log.s);
		buf_release(&log);
		goto out;
	}
	if (nv.GetCUBINSize(prog, &sz) != 0 || !sz) {
		kf_err(err, "NVRTC gave no harness cubin");
		goto out;
	}
	buf_reset(cubin);
	buf_grow(cubin, sz);
	nv.GetCUBIN(prog, cubin->s);
	cubin->len = sz;
	if (cpath.len) {
		struct buf dir = BUF_INIT, e2 = BUF_INIT;
		buf_add(&dir, cpath.s, (size_t)(strrchr(cpath.s, '/') - cpath.s));
		if (mkdir_p(dir.s, &e2) == 0)
			write_file_atomic(cpath.s, cubin->s, cubin->len, &e2);
		buf_release(&dir);
		buf_release(&e2);
	}
	ret = 0;
out:
	if (prog)
		nv.DestroyProgram(&prog);
	nvrtc_release(&nv);
	buf_release(&src);
	buf_release(&inc);
	buf_release(&opt_arch);
	buf_release(&opt_inc);
	buf_release(&cpath);
	return ret;
}

static int dev_attr(struct worker *w, CUdevice_attribute a)
{
	int v = 0;
	w->d.cuDeviceGetAttribute(&v, a, w->dev);
	return v;
}

static int start(struct worker *w, const struct rt_msg *hello, int *compiled, struct buf *err)
{
	char name[256] = "";
	size_t mem = 0;
	int ver = 0, maj, min;
	CUresult r;

	if (cudadrv_load(&w->d, err) < 0)
		return -1;
	if ((r = w->d.cuDeviceGet(&w->dev, w->device)) != CUDA_SUCCESS)
		return wk_cuda_err(w, r, "cuDeviceGet", err);
	if ((r = w->d.cuDevicePrimaryCtxRetain(&w->ctx, w->dev)) != CUDA_SUCCESS)
		return wk_cuda_err(w, r, "creating the CUDA context", err);
	if ((r = w->d.cuCtxSetCurrent(w->ctx)) != CUDA_SUCCESS)
		return wk_cuda_err(w, r, "cuCtxSetCurrent", err);
	if ((r = w->d.cuStreamCreate(&w->st, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS)
		return wk_cuda_err(w, r, "cuStreamCreate", err);
	if (getrandom(&w->mask_key, sizeof(w->mask_key), 0) != (ssize_t)sizeof(w->mask_key))
		return kf_err(err, "getrandom: %s", strerror(errno));
	w->d.cuDeviceGetName(name, sizeof(name), w->dev);
	w->d.cuDeviceTotalMem(&mem, w->dev);
	w->d.cuDriverGetVersion(&ver);
	maj = dev_attr(w, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
	min = dev_attr(w, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	snprintf(w->arch, sizeof(w->arch), "sm_%d%d", maj, min);
	w->l2_bytes = (size_t)dev_attr(w, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
	{
		char drv[32], cu[16];
		snprintf(cu, sizeof(cu), "%d.%d", ver / 1000, (ver % 1000) / 10);
		snprintf(drv, sizeof(drv), "cuda-driver-api %d", ver);
		w->info = json_pack("{s:b,s:i,s:s,s:s,s:I,s:i,s:I,s:i,s:i,s:i,s:i,s:i,s:s,s:s,s:i}",
				    "ok", 1, "device", w->device, "name", name, "arch", w->arch,
				    "memory_bytes", (json_int_t)mem, "sm_count",
				    dev_attr(w, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), "l2_bytes",
				    (json_int_t)w->l2_bytes, "max_threads",
				    dev_attr(w, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK), "max_grid_x",
				    dev_attr(w, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), "max_grid_y",
				    dev_attr(w, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y), "max_grid_z",
				    dev_attr(w, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z), "smem_optin",
				    dev_attr(w, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
				    "driver", drv, "cuda_version", cu, "clock_khz",
				    dev_attr(w, CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
		/* The memory's peak (the speed-of-light floor). */
		json_object_set_new(w->info, "mem_clock_khz",
				    json_integer(dev_attr(w, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)));
		json_object_set_new(w->info, "mem_bus_bits",
				    json_integer(dev_attr(w, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)));
	}
	*compiled = 0;
	if (hello->bin.len) {
		buf_add(&w->harness_cubin, hello->bin.s, hello->bin.len);
	} else {
		if (worker_harness_compile(w->arch, &w->harness_cubin, err) < 0)
			return -1;
		*compiled = 1;
	}
	if ((r = w->d.cuModuleLoadData(&w->hmod, w->harness_cubin.s)) != CUDA_SUCCESS)
		return wk_cuda_err(w, r, "loading the harness module", err);
	{
		struct { CUfunction *f; const char *n; } fs[] = {
			{ &w->f_compare, "kf_h_compare" }, { &w->f_checksum, "kf_h_checksum" },
			{ &w->f_count_ne, "kf_h_count_ne" }, { &w->f_fma, "kf_h_fma" },
			{ &w->f_copy, "kf_h_copy" }, { &w->f_fill, "kf_fill_elementwise" },
			{ &w->f_fill_softmax, "kf_fill_softmax_rows" }, { &w->f_mask_copy, "kf_h_mask_copy" },
			{ &w->f_scrub, "kf_h_scrub_smem" }, { &w->f_count_far, "kf_h_count_far" },
			{ &w->f_constlike, "kf_h_count_constlike" },
		};
		for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
			if ((r = w->d.cuModuleGetFunction(fs[i].f, w->hmod, fs[i].n)) != CUDA_SUCCESS)
				return wk_cuda_err(w, r, fs[i].n, err);
	}
	/* The scrub kernel takes all the shared memory a block may have. */
	w->scrub_smem = dev_attr(w, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
	if (w->scrub_smem > 0 &&
	    ((r = w->d.cuFuncSetAttribute(w->f_scrub, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
					  w->scrub_smem)) != CUDA_SUCCESS ||
	     (r = w->d.cuFuncSetAttribute(w->f_scrub, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
					  100)) != CUDA_SUCCESS))
		return wk_cuda_err(w, r, "kf_h_scrub_smem attributes", err);
	{
		/* L2 flush buffer: twice the L2, at least 64 MiB. */
		size_t fb = 2 * w->l2_bytes;
		if (fb < (64u << 20))
			fb = 64u << 20;
		if (wk_alloc(w, &w->flush, fb, err) < 0)
			return -1;
	}
	if ((r = w->d.cuMemAlloc(&w->slots, WK_MAX_SLOTS * WK_SLOT_U64 * 8)) != CUDA_SUCCESS)
		return wk_cuda_err(w, r, "allocating stats slots", err);
	{
		size_t fr = 0, tot = 0;
		if (w->d.cuMemGetInfo(&fr, &tot) == CUDA_SUCCESS)
			w->keep_budget = tot / WK_KEEP_SHARE;
	}
	if ((r = w->d.cuMemAllocHost((void **)&w->hslots, WK_MAX_SLOTS * WK_SLOT_U64 * 8)) != CUDA_SUCCESS)
		return wk_cuda_err(w, r, "allocating pinned memory", err);
	for (w->n_ev = 0; w->n_ev < WK_MAX_EVENTS; w->n_ev++)
		if ((r = w->d.cuEventCreate(&w->ev[w->n_ev], CU_EVENT_DEFAULT)) != CUDA_SUCCESS)
			return wk_cuda_err(w, r, "cuEventCreate", err);
	w->in_seed = w->in2_seed = ~0ull;
	if (!getenv("KFORGE_NO_CUPTI") || strcmp(getenv("KFORGE_NO_CUPTI"), "1"))
		wk_cupti_open(w);
	wk_nvml_open(w);
	json_object_set_new(w->info, "cupti", json_boolean(w->cupti != NULL));
	json_object_set_new(w->info, "nvml", json_boolean(w->nvml != NULL));
	return 0;
}

int worker_main(int device, int in_fd, int out_fd)
{
	struct worker *w = xcalloc(1, sizeof(*w));
	struct rt_msg m;
	struct buf err = BUF_INIT;
	int compiled = 0, code = 0;

	w->device = device;
	w->in_fd = in_fd;
	w->out_fd = out_fd;
	buf_init(&w->harness_cubin);
	buf_init(&w->last_err);
	problem_init(&w->p);
	launch_plan_init(&w->ref.plan);
	rt_msg_init(&m);
	if (rt_recv(in_fd, &m, 0, &err) < 0 || m.type != RT_HELLO)
		return 1;
	if (start(w, &m, &compiled, &err) < 0) {
		json_t *j = json_pack("{s:b,s:s}", "ok", 0, "error", err.s);
		struct buf e2 = BUF_INIT;
		rt_send(out_fd, RT_INFO, j, NULL, 0, &e2);
		json_decref(j);
		return 1;
	}
	if (rt_send(out_fd, RT_INFO, w->info, compiled ? w->harness_cubin.s : NULL,
		    compiled ? w->harness_cubin.len : 0, &err) < 0)
		return 1;
	for (;;) {
		json_t *res = NULL;
		int r;
		buf_reset(&err);
		if (rt_recv(in_fd, &m, 0, &err) < 0)
			break;                       /* the supervisor went away */
		if (m.type == RT_QUIT)
			break;
		w->t_req = now_s();
		if (m.type == RT_EVAL)
			r = wk_eval(w, m.json, &m.bin, &res, &err);
		else if (m.type == RT_SAMPLE)
			r = wk_sample(w, m.json, &m.bin, &res, &err);
		else if (m.type == RT_PEAKS)
			r = wk_peaks(w, &res, &err);
		else
			r = kf_err(&err, "unknown request %d", m.type);
		if (r < 0) {
			json_decref(res);
			res = json_pack("{s:s}", "engine_error", err.s);
		}
		if (w->fatal)
			json_object_set_new(res, "fatal", json_true());
		if (rt_send(out_fd, RT_RESULT, res, NULL, 0, &err) < 0) {
			json_decref(res);
			code = 1;
			break;
		}
		json_decref(res);
		if (w->fatal)
			_exit(0);   /* the context is unusable; the supervisor starts a new worker */
	}
	rt_msg_release(&m);
	wk_cupti_close(w);
	wk_nvml_close(w);
	buf_release(&err);
	/* The process exit releases the context and all device memory. */
	return code;
}
