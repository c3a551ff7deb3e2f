/* The CUDA driver API, loaded at run time (dlopen libcuda.so.1), so kforge
 * starts on machines with no GPU or driver. Only commands that run kernels
 * call cudadrv_load; it fails with KF_ENOGPU ("no CUDA driver found", "no
 * GPU visible", ...). Types come from the toolkit's cuda.h; no libcuda link. */
#ifndef KF_CUDADRV_H
#define KF_CUDADRV_H

#include <cuda.h>
#include "buf.h"

struct cudadrv {
	void *lib;
	CUresult (*cuInit)(unsigned int);
	CUresult (*cuDriverGetVersion)(int *);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
	CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuCtxSetLimit)(CUlimit, size_t);
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemGetInfo)(size_t *, size_t *);
	CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*cuMemsetD32)(CUdeviceptr, unsigned int, size_t);
	CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
	CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned int, size_t, CUstream);
	CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*cuMemAllocHost)(void **, size_t);
	CUresult (*cuMemFreeHost)(void *);
	CUresult (*cuModuleLoadData)(CUmodule *, const void *);
	CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned int, CUjit_option *, void **);
	CUresult (*cuModuleUnload)(CUmodule);
	CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*cuModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *);
	CUresult (*cuFuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
	CUresult (*cuFuncSetAttribute)(CUfunction, CUfunction_attribute, int);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
				   unsigned, unsigned, unsigned, CUstream, void **, void **);
	CUresult (*cuStreamCreate)(CUstream *, unsigned int);
	CUresult (*cuStreamDestroy)(CUstream);
	CUresult (*cuStreamSynchronize)(CUstream);
	CUresult (*cuStreamQuery)(CUstream);
	CUresult (*cuEventCreate)(CUevent *, unsigned int);
	CUresult (*cuEventDestroy)(CUevent);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuEventQuery)(CUevent);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*cuGetErrorName)(CUresult, const char **);
	CUresult (*cuGetErrorString)(CUresult, const char **);
};

/* The error class "no usable GPU or CUDA driver": the driver is missing,
 * lacks a function, fails to start, or sees no device. Callers pass it up
 * unchanged (engine_open, verify_backend_engine, ...); the CLI turns it
 * into exit status 3. */
#define KF_ENOGPU (-3)

/* 0 when the driver loaded and cuInit succeeded with >= 1 device, else
 * KF_ENOGPU with err. */
int cudadrv_load(struct cudadrv *d, struct buf *err);
void cudadrv_release(struct cudadrv *d);
/* "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered" */
void cudadrv_describe(const struct cudadrv *d, CUresult r, struct buf *out);
/* Sets err to "<what>: <description>" and returns -1 when r != CUDA_SUCCESS. */
int cudadrv_check(const struct cudadrv *d, CUresult r, const char *what, struct buf *err);

#endif
