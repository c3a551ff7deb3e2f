/* NVRTC loaded at run time (dlopen), so kforge builds and starts without
 * it. Search order: $KFORGE_NVRTC (a file), $CUDA_HOME/lib64, the
 * toolkit found at build time, then the system's loader paths. Types come
 * from the toolkit's nvrtc.h when present; otherwise minimal ones here. */
#ifndef KF_NVRTC_H
#define KF_NVRTC_H

#include <stddef.h>
#include "core/buf.h"

typedef struct _nvrtcProgram *kf_nvrtcProgram;

struct nvrtc {
	void *lib;
	char path[512];          /* the library loaded */
	int major, minor;
	int (*Version)(int *, int *);
	const char *(*GetErrorString)(int);
	int (*CreateProgram)(kf_nvrtcProgram *, const char *, const char *, int,
			     const char *const *, const char *const *);
	int (*DestroyProgram)(kf_nvrtcProgram *);
	int (*CompileProgram)(kf_nvrtcProgram, int, const char *const *);
	int (*GetProgramLogSize)(kf_nvrtcProgram, size_t *);
	int (*GetProgramLog)(kf_nvrtcProgram, char *);
	int (*GetCUBINSize)(kf_nvrtcProgram, size_t *);
	int (*GetCUBIN)(kf_nvrtcProgram, char *);
};

void nvrtc_init(struct nvrtc *n);
/* 0, or -1 with "NVRTC not found (looked in ...)" or the missing symbol. */
int nvrtc_load(struct nvrtc *n, struct buf *err);
void nvrtc_release(struct nvrtc *n);

/* The toolkit's include directory for NVRTC's own headers (cuda_fp16.h
 * and friends): $CUDA_HOME/include, else the build-time toolkit. Returns
 * 0 and the path, -1 when none exists. */
int nvrtc_include_dir(struct buf *out);

#endif
