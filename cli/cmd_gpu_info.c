#include "cmds.h"
#include "core/cudadrv.h"
#include "core/json.h"
#include "engine/engine.h"

#include <string.h>

/* --models: each GPU model once, device 0's first (what --gpu-model takes);
 * with --json, [{"name", "devices"}]. */
static int list_models(int as_json)
{
	struct buf err = BUF_INIT, out = BUF_INIT;
	json_t *models = NULL, *m;
	size_t i;
	int r = engine_gpu_models(&models, &err);

	if (r < 0) {
		r = cli_fail(r == KF_ENOGPU ? EXIT_NOGPU : EXIT_FAIL, "%s", err.s);
		buf_release(&err);
		return r;
	}
	if (as_json) {
		json_add_pretty(&out, models);
		printf("%s\n", out.s);
	} else {
		json_array_foreach(models, i, m)
			printf("%s\n", jget_str(m, "name", ""));
	}
	json_decref(models);
	buf_release(&out);
	buf_release(&err);
	return EXIT_OK;
}

/* On a host with several models: which GPUs are which (one engine runs on
 * one model). */
static void print_mixed(const json_t *arr)
{
	json_t *models = json_object(), *g, *v;
	const char *k;
	size_t i;

	json_array_foreach(arr, i, g) {
		const char *name = jget_str(g, "name", "");
		if (!json_object_get(models, name))
			json_object_set_new(models, name, json_array());
		json_array_append(json_object_get(models, name), json_object_get(g, "index"));
	}
	if (json_object_size(models) > 1) {
		int first = 1;
		printf("%zu GPU models:", json_object_size(models));
		/* in the order of their first GPU (jansson keeps insertion order) */
		json_object_foreach(models, k, v) {
			size_t j;
			json_t *x;
			printf("%s '%s' (GPU%s", first ? "" : ",", k, json_array_size(v) > 1 ? "s" : "");
			json_array_foreach(v, j, x)
				printf("%s%lld", j ? ", " : " ", (long long)json_integer_value(x));
			printf(")");
			first = 0;
		}
		printf("; a search or eval runs on one (--gpu-model NAME, default GPU 0's), "
		       "verify on each\n");
	}
	json_decref(models);
}

int cmd_gpu_info(int argc, char **argv, struct cli_ctx *ctx)
{
	struct cudadrv d;
	struct buf err = BUF_INIT;
	int c, as_json = 0, models = 0, n = 0, ver = 0, nargs;
	json_t *arr;
	struct cli_opt opts[] = {
		OPT_FLAG("json", 0, &as_json, "print them as JSON"),
		OPT_FLAG("models", 0, &models,
			 "print each GPU model once, one a line, GPU 0's first: the names "
			 "--gpu-model takes (with --json: their GPUs too)"),
		OPT_END,
	};
	struct cli_spec spec = { "gpu-info", "[--models] [--json]",
		"Lists the visible GPUs: name (the GPU model), memory, SMs, architecture,\n"
		"driver. A host with GPUs of several models gets a line saying which are\n"
		"which: evaluations are recorded per model, and a search or an eval runs on\n"
		"the GPUs of one model (--gpu-model), while verify verifies on each.\n", opts,
		"Exit status 3 when there is no CUDA driver or no GPU.\n", 0, NULL, NULL };

	if ((c = cli_parse(&spec, argc, argv, ctx, &nargs)) != CLI_GO)
		return c;
	if (nargs > 0)
		return cli_fail(EXIT_USAGE, "gpu-info: unexpected argument '%s'", argv[1]);
	if (models)
		return list_models(as_json);
	if (cudadrv_load(&d, &err) < 0) {
		c = cli_fail(EXIT_NOGPU, "%s", err.s);
		buf_release(&err);
		return c;
	}
	d.cuDriverGetVersion(&ver);
	d.cuDeviceGetCount(&n);
	arr = json_array();
	for (int i = 0; i < n; i++) {
		CUdevice dev;
		char name[256] = "";
		size_t mem = 0;
		int sm = 0, maj = 0, min = 0, clk = 0;
		d.cuDeviceGet(&dev, i);
		d.cuDeviceGetName(name, sizeof(name), dev);
		d.cuDeviceTotalMem(&mem, dev);
		d.cuDeviceGetAttribute(&sm, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
		d.cuDeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
		d.cuDeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
		d.cuDeviceGetAttribute(&clk, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
		json_array_append_new(arr, json_pack("{s:i,s:s,s:I,s:i,s:s+,s:i}", "index", i,
			"name", name, "memory_bytes", (json_int_t)mem, "sm_count", sm,
			"arch", "sm_", maj == 0 ? "0" : (char[3]){ (char)('0' + maj), (char)('0' + min), 0 },
			"driver_version", ver));
		if (!as_json)
			printf("%d: %s, %.1f GiB, %d SMs, sm_%d%d, driver %d.%d\n", i, name,
			       (double)mem / (1u << 30), sm, maj, min, ver / 1000, (ver % 1000) / 10);
	}
	if (as_json) {
		struct buf out = BUF_INIT;
		json_add_pretty(&out, arr);
		printf("%s\n", out.s);
		buf_release(&out);
	} else {
		print_mixed(arr);
	}
	json_decref(arr);
	cudadrv_release(&d);
	return EXIT_OK;
}
