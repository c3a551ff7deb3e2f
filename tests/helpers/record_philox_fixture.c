/* Records tests/fixtures/philox_gpu.json on a GPU: compiles the generator's
 * fill kernels (problem/philox.cuh + engine/cuda/inputs.cuh) with NVRTC, fills
 * every tensor of tests/fixtures/philox_spec.json, and writes sampled
 * elements' bits. test_philox compares the CPU generator against it.
 *   build/tests/record_philox_fixture [SPEC] > tests/fixtures/philox_gpu.json
 *   build/tests/record_philox_fixture --compile-only [FILE.cu...]  (NVRTC only, no GPU)
 * Exit 3 without a GPU. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVRTC_GET_TYPE_NAME 0
#define __DOXYGEN_ONLY__ 0
#include <nvrtc.h>

#include "core/cudadrv.h"
#include "problem/inputs.h"
#include "core/json.h"

struct nvrtc {
	nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
			      const char *const *);
	nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
	nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
	nvrtcResult (*ptx)(nvrtcProgram, char *);
	nvrtcResult (*log_size)(nvrtcProgram, size_t *);
	nvrtcResult (*log)(nvrtcProgram, char *);
	nvrtcResult (*destroy)(nvrtcProgram *);
};

static int die(const char *what, const char *msg)
{
	fprintf(stderr, "record_philox_fixture: %s: %s\n", what, msg);
	return 1;
}

/* src NULL: the generator's fill kernels. */
static char *compile_ptx(int major, int minor, const char *src_text)
{
	const char *libs[] = { "libnvrtc.so.13", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13" };
	void *h = NULL;
	struct nvrtc n;
	nvrtcProgram prog;
	struct buf src = BUF_INIT;
	char arch[64], *ptx, *log;
	size_t sz;

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]) && !h; i++)
		h = dlopen(libs[i], RTLD_NOW);
	if (!h)
		return die("dlopen libnvrtc", dlerror()), NULL;
	*(void **)&n.create = dlsym(h, "nvrtcCreateProgram");
	*(void **)&n.compile = dlsym(h, "nvrtcCompileProgram");
	*(void **)&n.ptx_size = dlsym(h, "nvrtcGetPTXSize");
	*(void **)&n.ptx = dlsym(h, "nvrtcGetPTX");
	*(void **)&n.log_size = dlsym(h, "nvrtcGetProgramLogSize");
	*(void **)&n.log = dlsym(h, "nvrtcGetProgramLog");
	*(void **)&n.destroy = dlsym(h, "nvrtcDestroyProgram");
	if (!n.create || !n.compile || !n.ptx_size || !n.ptx || !n.log_size || !n.log || !n.destroy)
		return die("dlsym", "NVRTC symbols missing"), NULL;
	if (src_text)
		buf_adds(&src, src_text);
	else
		inputs_device_source(&src);
	snprintf(arch, sizeof(arch), "--gpu-architecture=compute_%d%d", major, minor);
	const char *opts[] = { arch, "-default-device" };
	if (n.create(&prog, src.s, "inputs.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
		return die("nvrtc", "create failed"), NULL;
	nvrtcResult r = n.compile(prog, 2, opts);
	n.log_size(prog, &sz);
	log = malloc(sz + 1);
	n.log(prog, log);
	if (r != NVRTC_SUCCESS)
		return die("nvrtc compile", log), NULL;
	free(log);
	n.ptx_size(prog, &sz);
	ptx = malloc(sz);
	n.ptx(prog, ptx);
	n.destroy(&prog);
	buf_release(&src);
	return ptx;
}

#define CK(call, what) do { if (cudadrv_check(&d, (call), (what), &err) < 0) return die("cuda", err.s); } while (0)

int main(int argc, char **argv)
{
	const char *root = getenv("KF_ROOT");
	struct buf path = BUF_INIT, err = BUF_INIT, out = BUF_INIT;
	struct cudadrv d;
	struct problem p;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f_elem, f_soft;
	int major, minor;
	unsigned long long seed = 20261122;
	char name[256];
	json_t *fx, *tensors;
	char *ptx;

	if (argc > 1 && !strcmp(argv[1], "--compile-only")) {
		/* NVRTC only (no GPU needed): the fill kernels compile */
		ptx = compile_ptx(9, 0, NULL);
		if (!ptx)
			return 1;
		printf("ok %zu bytes of PTX\n", strlen(ptx));
		free(ptx);
		/* and any files named after it (reference.cu candidates) */
		for (int i = 2; i < argc; i++) {
			struct buf text = BUF_INIT;
			if (buf_read_file(&text, argv[i], 1 << 20, &err) < 0)
				return die("read", err.s);
			ptx = compile_ptx(9, 0, text.s);
			if (!ptx)
				return die("compile", argv[i]);
			printf("ok %s\n", argv[i]);
			free(ptx);
			buf_release(&text);
		}
		return 0;
	}
	if (argc > 1)
		buf_adds(&path, argv[1]);
	else
		buf_addf(&path, "%s/tests/fixtures/philox_spec.json", root ? root : ".");
	{
		struct buf text = BUF_INIT;
		if (buf_read_file(&text, path.s, 1 << 20, &err) < 0)
			return die("spec", err.s);
		problem_init(&p);
		if (problem_load_json(&p, text.s, path.s, &err) < 0)
			return die("spec", err.s);
		buf_release(&text);
	}
	if (cudadrv_load(&d, &err) < 0) {
		fprintf(stderr, "record_philox_fixture: %s\n", err.s);
		return 3;
	}
	CK(d.cuDeviceGet(&dev, 0), "cuDeviceGet");
	CK(d.cuDeviceGetName(name, sizeof(name), dev), "cuDeviceGetName");
	CK(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), "cc");
	CK(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), "cc");
	CK(d.cuDevicePrimaryCtxRetain(&ctx, dev), "ctx");
	CK(d.cuCtxSetCurrent(ctx), "ctx");
	ptx = compile_ptx(major, minor, NULL);
	if (!ptx)
		return 1;
	CK(d.cuModuleLoadData(&mod, ptx), "cuModuleLoadData");
	CK(d.cuModuleGetFunction(&f_elem, mod, "kf_fill_elementwise"), "kf_fill_elementwise");
	CK(d.cuModuleGetFunction(&f_soft, mod, "kf_fill_softmax_rows"), "kf_fill_softmax_rows");

	fx = json_object();
	json_object_set(fx, "spec", p.spec);
	json_object_set_new(fx, "seed", json_integer((json_int_t)seed));
	json_object_set_new(fx, "device", json_string(name));
	tensors = json_object();
	json_object_set_new(fx, "tensors", tensors);
	for (int t = 0; t < p.n_in; t++) {
		const struct problem_tensor *pt = &p.t[t];
		struct kf_gen_desc g;
		size_t es = kf_dtype_size(pt->dtype);
		CUdeviceptr buf;
		long long numel = pt->numel, nrows;
		unsigned long long rs = 0x1234567ull + (unsigned long long)t;
		json_t *idx = json_array(), *bits = json_array(), *o = json_object();
		unsigned char cell[8];

		inputs_desc(&p, t, seed, &g);
		CK(d.cuMemAlloc(&buf, (size_t)numel * es), "cuMemAlloc");
		CK(d.cuMemsetD8(buf, 0xA5, (size_t)numel * es), "cuMemsetD8");
		nrows = numel / g.cols;
		void *args[] = { &buf, kf_post_is_rowwise(g.post) ? (void *)&nrows : (void *)&numel,
				 &g.seed, &g.t, &g.kind, &g.dtype, &g.post, &g.a, &g.b, &g.rows, &g.cols };
		if (kf_post_is_rowwise(g.post))
			CK(d.cuLaunchKernel(f_soft, (unsigned)(nrows < 65535 ? nrows : 65535), 1, 1, 256, 1, 1,
					    0, NULL, args, NULL), "kf_fill_softmax_rows");
		else
			CK(d.cuLaunchKernel(f_elem, (unsigned)((numel + 255) / 256 < 1048576 ? (numel + 255) / 256 : 1048576),
					    1, 1, 256, 1, 1, 0, NULL, args, NULL), "kf_fill_elementwise");
		CK(d.cuCtxSynchronize(), "fill");
		/* all of a small tensor; else the ends, around 2^32, and random points */
		for (long long k = 0; k < (numel <= 4096 ? numel : 600); k++) {
			long long i;
			if (numel <= 4096)
				i = k;
			else if (k < 100)
				i = k;
			else if (k < 200)
				i = numel - 200 + k;
			else if (k < 300 && numel > (1LL << 32) + 100)
				i = (1LL << 32) - 250 + k;
			else {
				rs = rs * 6364136223846793005ull + 1442695040888963407ull;
				i = (long long)((rs >> 11) % (unsigned long long)numel);
			}
			unsigned long long v = 0;
			CK(d.cuMemcpyDtoH(cell, buf + (CUdeviceptr)((size_t)i * es), es), "cuMemcpyDtoH");
			for (size_t j = 0; j < es; j++)
				v |= (unsigned long long)cell[j] << (8 * j);
			char hex[32];
			snprintf(hex, sizeof(hex), "%llx", v);
			json_array_append_new(idx, json_integer(i));
			json_array_append_new(bits, json_string(hex));
		}
		CK(d.cuMemFree(buf), "cuMemFree");
		json_object_set_new(o, "index", idx);
		json_object_set_new(o, "bits", bits);
		json_object_set_new(tensors, pt->name, o);
	}
	json_add_pretty(&out, fx);
	printf("%s\n", out.s);
	json_decref(fx);
	problem_release(&p);
	buf_release(&path);
	buf_release(&err);
	buf_release(&out);
	return 0;
}
