/* NVRTC through dlopen: kforge starts (and reports clearly) without it. */
#include "nvrtc.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef KF_CUDA_HOME
#define KF_CUDA_HOME "/usr/local/cuda"
#endif

void nvrtc_init(struct nvrtc *n)
{
	memset(n, 0, sizeof(*n));
}

/* The library stays mapped: unloading it frees nothing worth having, and
 * its C++ runtime's emergency pool, lost on dlclose, reads as a leak to
 * LeakSanitizer (which then fails whatever loaded NVRTC once and let go).
 * A later nvrtc_load gets the same mapping back. */
void nvrtc_release(struct nvrtc *n)
{
	nvrtc_init(n);
}

static void *try_open(struct nvrtc *n, const char *path, struct buf *tried)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h)
		snprintf(n->path, sizeof(n->path), "%s", path);
	else
		buf_addf(tried, "%s%s", tried->len ? ", " : "", path);
	return h;
}

int nvrtc_load(struct nvrtc *n, struct buf *err)
{
	struct buf tried = BUF_INIT, p = BUF_INIT;
	const char *env = getenv("KFORGE_NVRTC"), *home = getenv("CUDA_HOME");
	static const char *const names[] = { "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12" };
	void *h = NULL;
	int ret = -1;

	nvrtc_release(n);
	/* An explicit KFORGE_NVRTC is the only place looked at. */
	if (env && *env)
		h = try_open(n, env, &tried);
	for (int d = 0; !h && !(env && *env) && d < 2; d++) {
		const char *dir = d == 0 ? home : KF_CUDA_HOME;
		if (!dir || !*dir)
			continue;
		for (size_t k = 0; !h && k < sizeof(names) / sizeof(names[0]); k++) {
			buf_setf(&p, "%s/lib64/%s", dir, names[k]);
			if (access(p.s, R_OK) == 0)
				h = try_open(n, p.s, &tried);
		}
	}
	for (size_t k = 0; !h && !(env && *env) && k < sizeof(names) / sizeof(names[0]); k++)
		h = try_open(n, names[k], &tried);
	if (!h) {
		kf_err(err, "NVRTC not found (tried %s); install the CUDA toolkit or set CUDA_HOME "
		       "or KFORGE_NVRTC", tried.s);
		goto out;
	}
	n->lib = h;
#define SYM(f)                                                                   \
	do {                                                                     \
		*(void **)(&n->f) = dlsym(h, "nvrtc" #f);                        \
		if (!n->f) {                                                     \
			kf_err(err, "%s lacks nvrtc" #f, n->path);               \
			goto out;                                                \
		}                                                                \
	} while (0)
	SYM(Version);
	SYM(GetErrorString);
	SYM(CreateProgram);
	SYM(DestroyProgram);
	SYM(CompileProgram);
	SYM(GetProgramLogSize);
	SYM(GetProgramLog);
	SYM(GetCUBINSize);
	SYM(GetCUBIN);
#undef SYM
	if (n->Version(&n->major, &n->minor) != 0) {
		kf_err(err, "nvrtcVersion failed (%s)", n->path);
		goto out;
	}
	ret = 0;
out:
	if (ret < 0 && n->lib)
		nvrtc_release(n);
	buf_release(&tried);
	buf_release(&p);
	return ret;
}

int nvrtc_include_dir(struct buf *out)
{
	const char *home = getenv("CUDA_HOME");
	struct buf p = BUF_INIT;
	for (int d = 0; d < 2; d++) {
		const char *dir = d == 0 ? home : KF_CUDA_HOME;
		if (!dir || !*dir)
			continue;
		buf_setf(&p, "%s/include/cuda_fp16.h", dir);
		if (access(p.s, R_OK) == 0) {
			buf_setf(out, "%s/include", dir);
			buf_release(&p);
			return 0;
		}
	}
	buf_release(&p);
	return -1;
}
