#include "cmds.h"
#include "core/cudadrv.h"
#include "core/json.h"

#include <string.h>

int cmd_gpu_info(int argc, char **argv, struct cli_ctx *ctx)
{
	struct cudadrv d;
	struct buf err = BUF_INIT;
	int c, as_json = 0, n = 0, ver = 0, nargs;
	json_t *arr;
	struct cli_opt opts[] = {
		OPT_FLAG("json", 0, &as_json, "print them as JSON"),
		OPT_END,
	};
	struct cli_spec spec = { "gpu-info", "[--json]",
		"Lists the visible GPUs: name, memory, SMs, architecture, driver.\n", opts,
		"Exit status 3 when there is no CUDA driver or no GPU.\n", 0, NULL, NULL };

	if ((c = cli_parse(&spec, argc, argv, ctx, &nargs)) != CLI_GO)
		return c;
	if (nargs > 0)
		return cli_fail(EXIT_USAGE, "gpu-info: unexpected argument '%s'", argv[1]);
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
	}
	json_decref(arr);
	cudadrv_release(&d);
	return EXIT_OK;
}
