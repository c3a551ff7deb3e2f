/* NVML (dlopen libnvidia-ml.so.1 where the driver ships it): SM and memory
 * clocks, temperature and power, recorded with each timing. */
#include "worker_int.h"

#include <dlfcn.h>
#include <string.h>

typedef void *nvml_dev;

static struct {
	void *lib;
	nvml_dev dev;
	int (*init)(void);
	int (*shutdown)(void);
	int (*by_pci)(const char *, nvml_dev *);
	int (*clock)(nvml_dev, int, unsigned *);
	int (*temp)(nvml_dev, int, unsigned *);
	int (*power)(nvml_dev, unsigned *);
	int (*driver)(char *, unsigned);
} N;

void wk_nvml_open(struct worker *w)
{
	char pci[64] = "";
	CUresult (*bus)(char *, int, CUdevice);

	N.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!N.lib)
		return;
	*(void **)&N.init = dlsym(N.lib, "nvmlInit_v2");
	*(void **)&N.shutdown = dlsym(N.lib, "nvmlShutdown");
	*(void **)&N.by_pci = dlsym(N.lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&N.clock = dlsym(N.lib, "nvmlDeviceGetClockInfo");
	*(void **)&N.temp = dlsym(N.lib, "nvmlDeviceGetTemperature");
	*(void **)&N.power = dlsym(N.lib, "nvmlDeviceGetPowerUsage");
	*(void **)&N.driver = dlsym(N.lib, "nvmlSystemGetDriverVersion");
	*(void **)&bus = dlsym(w->d.lib, "cuDeviceGetPCIBusId");
	if (!N.init || !N.by_pci || !N.clock || !N.temp || !bus || N.init() != 0 ||
	    bus(pci, sizeof(pci), w->dev) != CUDA_SUCCESS || N.by_pci(pci, &N.dev) != 0) {
		dlclose(N.lib);
		memset(&N, 0, sizeof(N));
		return;
	}
	w->nvml = N.lib;
	{
		char ver[80] = "";
		/* the driver's release (580.x); cuDriverGetVersion gives only the API */
		if (N.driver && N.driver(ver, sizeof(ver)) == 0 && ver[0])
			json_object_set_new(w->info, "driver", json_string(ver));
	}
}

json_t *wk_nvml_sample(struct worker *w)
{
	unsigned sm = 0, mem = 0, t = 0, mw = 0;
	json_t *o = json_object();

	if (!w->nvml)
		return o;
	if (N.clock(N.dev, 1 /* NVML_CLOCK_SM */, &sm) == 0)
		json_object_set_new(o, "sm_clock_mhz", json_integer(sm));
	if (N.clock(N.dev, 2 /* NVML_CLOCK_MEM */, &mem) == 0)
		json_object_set_new(o, "mem_clock_mhz", json_integer(mem));
	if (N.temp(N.dev, 0 /* NVML_TEMPERATURE_GPU */, &t) == 0)
		json_object_set_new(o, "temperature_c", json_integer(t));
	if (N.power && N.power(N.dev, &mw) == 0)
		json_object_set_new(o, "power_w", json_real(mw / 1000.0));
	return o;
}

void wk_nvml_close(struct worker *w)
{
	if (!w->nvml)
		return;
	if (N.shutdown)
		N.shutdown();
	dlclose(N.lib);
	memset(&N, 0, sizeof(N));
	w->nvml = NULL;
}
