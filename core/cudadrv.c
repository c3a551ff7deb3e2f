#include "cudadrv.h"

#include <dlfcn.h>
#include <string.h>

#define SYM(name, ver)                                                         \
	do {                                                                   \
		*(void **)&d->name = dlsym(d->lib, ver);                       \
		if (!d->name)                                                  \
			*(void **)&d->name = dlsym(d->lib, #name);             \
		if (!d->name) {                                                \
			kf_err(err, "CUDA driver lacks %s", #name);            \
			goto fail;                                             \
		}                                                              \
	} while (0)

int cudadrv_load(struct cudadrv *d, struct buf *err)
{
	int n = 0, ver = 0;
	CUresult r;

	memset(d, 0, sizeof(*d));
	d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!d->lib) {
		kf_err(err, "no CUDA driver found (libcuda.so.1 could not be loaded)");
		return KF_ENOGPU;
	}
	SYM(cuInit, "cuInit");
	SYM(cuDriverGetVersion, "cuDriverGetVersion");
	SYM(cuDeviceGetCount, "cuDeviceGetCount");
	SYM(cuDeviceGet, "cuDeviceGet");
	SYM(cuDeviceGetName, "cuDeviceGetName");
	SYM(cuDeviceGetAttribute, "cuDeviceGetAttribute");
	SYM(cuDeviceTotalMem, "cuDeviceTotalMem_v2");
	SYM(cuDeviceGetUuid, "cuDeviceGetUuid_v2");
	SYM(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
	SYM(cuCtxSetCurrent, "cuCtxSetCurrent");
	SYM(cuCtxSynchronize, "cuCtxSynchronize");
	SYM(cuCtxSetLimit, "cuCtxSetLimit");
	SYM(cuMemAlloc, "cuMemAlloc_v2");
	SYM(cuMemFree, "cuMemFree_v2");
	SYM(cuMemGetInfo, "cuMemGetInfo_v2");
	SYM(cuMemcpyHtoD, "cuMemcpyHtoD_v2");
	SYM(cuMemcpyDtoH, "cuMemcpyDtoH_v2");
	SYM(cuMemcpyDtoD, "cuMemcpyDtoD_v2");
	SYM(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
	SYM(cuMemsetD8, "cuMemsetD8_v2");
	SYM(cuMemsetD32, "cuMemsetD32_v2");
	SYM(cuMemsetD8Async, "cuMemsetD8Async");
	SYM(cuMemsetD16Async, "cuMemsetD16Async");
	SYM(cuMemsetD32Async, "cuMemsetD32Async");
	SYM(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
	SYM(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
	SYM(cuMemAllocHost, "cuMemAllocHost_v2");
	SYM(cuMemFreeHost, "cuMemFreeHost");
	SYM(cuModuleLoadData, "cuModuleLoadData");
	SYM(cuModuleLoadDataEx, "cuModuleLoadDataEx");
	SYM(cuModuleUnload, "cuModuleUnload");
	SYM(cuModuleGetFunction, "cuModuleGetFunction");
	SYM(cuModuleGetGlobal, "cuModuleGetGlobal_v2");
	SYM(cuFuncGetAttribute, "cuFuncGetAttribute");
	SYM(cuFuncSetAttribute, "cuFuncSetAttribute");
	SYM(cuLaunchKernel, "cuLaunchKernel");
	SYM(cuStreamCreate, "cuStreamCreate");
	SYM(cuStreamDestroy, "cuStreamDestroy_v2");
	SYM(cuStreamSynchronize, "cuStreamSynchronize");
	SYM(cuStreamQuery, "cuStreamQuery");
	SYM(cuEventCreate, "cuEventCreate");
	SYM(cuEventDestroy, "cuEventDestroy_v2");
	SYM(cuEventRecord, "cuEventRecord");
	SYM(cuEventSynchronize, "cuEventSynchronize");
	SYM(cuEventQuery, "cuEventQuery");
	SYM(cuEventElapsedTime, "cuEventElapsedTime_v2");
	SYM(cuGetErrorName, "cuGetErrorName");
	SYM(cuGetErrorString, "cuGetErrorString");

	r = d->cuInit(0);
	if (r != CUDA_SUCCESS) {
		struct buf m = BUF_INIT;
		cudadrv_describe(d, r, &m);
		if (r == CUDA_ERROR_NO_DEVICE)
			kf_err(err, "no GPU visible (cuInit: %s)", m.s);
		else
			kf_err(err, "CUDA driver failed to start (cuInit: %s)", m.s);
		buf_release(&m);
		goto fail;
	}
	d->cuDriverGetVersion(&ver);
	if (d->cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 1) {
		kf_err(err, "no GPU visible");
		goto fail;
	}
	return 0;
fail:
	cudadrv_release(d);
	return KF_ENOGPU;
}

void cudadrv_release(struct cudadrv *d)
{
	if (d->lib)
		dlclose(d->lib);
	memset(d, 0, sizeof(*d));
}

void cudadrv_describe(const struct cudadrv *d, CUresult r, struct buf *out)
{
	const char *name = NULL, *str = NULL;
	buf_reset(out);
	if (d->cuGetErrorName)
		d->cuGetErrorName(r, &name);
	if (d->cuGetErrorString)
		d->cuGetErrorString(r, &str);
	buf_addf(out, "%s: %s", name ? name : "CUDA error", str ? str : "unknown");
	if (!name)
		buf_addf(out, " (%d)", (int)r);
}

int cudadrv_check(const struct cudadrv *d, CUresult r, const char *what, struct buf *err)
{
	struct buf m = BUF_INIT;
	if (r == CUDA_SUCCESS)
		return 0;
	cudadrv_describe(d, r, &m);
	kf_err(err, "%s: %s", what, m.s);
	buf_release(&m);
	return -1;
}
