/* The GPUs visible here and their models. An engine serves one model
 * (issue 43): evaluations are keyed by the GPU's name, so two models'
 * timings must never meet under one key. The names come from the driver
 * (cuDeviceGetName, the call a worker's hello answers with), read before
 * any worker starts, so the workers of other models never start; under
 * KFORGE_WORKER_TEST_GPUS (tests with a stand-in worker) from that
 * variable instead: a count N (N devices named "Fake GPU", the stand-in's
 * own name) or the models, comma-separated, one per device. */
#include "engine_int.h"
#include "core/cudadrv.h"
#include "core/json.h"
#include "core/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define TEST_GPUS_MAX 64           /* devices in KFORGE_WORKER_TEST_GPUS */
#define TEST_GPU_NAME "Fake GPU"   /* tests/helpers/fake_worker's default name */

void gpu_list_init(struct gpu_list *l)
{
	l->n = 0;
	l->name = NULL;
}

void gpu_list_release(struct gpu_list *l)
{
	free(l->name);
	gpu_list_init(l);
}

static void add(struct gpu_list *l, const char *name, size_t len)
{
	l->name = xrealloc(l->name, (size_t)(l->n + 1) * sizeof(*l->name));
	if (len >= sizeof(l->name[0]))
		len = sizeof(l->name[0]) - 1;     /* as the hello's name is cut (supervisor.c) */
	memcpy(l->name[l->n], name, len);
	l->name[l->n][len] = '\0';
	l->n++;
}

/* KFORGE_WORKER_TEST_GPUS: "N" or "Model A,Model B,Model A". */
static int test_list(struct gpu_list *l, const char *v, struct buf *err)
{
	const char *p = v;

	while (isdigit((unsigned char)*p))
		p++;
	if (*v && !*p) {
		int n = atoi(v);
		for (int i = 0; i < n && i < TEST_GPUS_MAX; i++)
			add(l, TEST_GPU_NAME, strlen(TEST_GPU_NAME));
	} else {
		for (p = v;; p++) {
			size_t len = strcspn(p, ",");
			if (!len || len >= sizeof(l->name[0]) || l->n >= TEST_GPUS_MAX)
				return kf_err(err, "KFORGE_WORKER_TEST_GPUS: a count or up to %d names "
					      "(each 1-%zu bytes), comma-separated", TEST_GPUS_MAX,
					      sizeof(l->name[0]) - 1);
			add(l, p, len);
			p += len;
			if (!*p)
				break;
		}
	}
	if (l->n == 0) {
		kf_err(err, "no GPU visible");
		return KF_ENOGPU;
	}
	return 0;
}

int gpu_list_probe(struct gpu_list *l, struct buf *err)
{
	const char *t = getenv("KFORGE_WORKER_TEST_GPUS");
	struct cudadrv d;
	int n = 0, r;

	gpu_list_release(l);
	if (t) {
		if ((r = test_list(l, t, err)) < 0)
			gpu_list_release(l);
		return r;
	}
	if ((r = cudadrv_load(&d, err)) < 0)
		return r;
	d.cuDeviceGetCount(&n);
	for (int i = 0; i < n; i++) {
		CUdevice dev;
		char name[256] = "";
		if (d.cuDeviceGet(&dev, i) == CUDA_SUCCESS)
			d.cuDeviceGetName(name, sizeof(name), dev);
		add(l, name, strlen(name));
	}
	cudadrv_release(&d);
	if (l->n == 0) {
		kf_err(err, "no GPU visible");
		return KF_ENOGPU;
	}
	return 0;
}

/* 'A' (GPUs 0, 2), 'B' (GPU 1): each model once, device 0's first;
 * skip: a model left out (NULL: none). */
void gpu_list_describe(const struct gpu_list *l, const char *skip, struct buf *out)
{
	int first = 1;

	for (int i = 0; i < l->n; i++) {
		int seen = 0, k = 0;
		for (int j = 0; j < i && !seen; j++)
			seen = !strcmp(l->name[j], l->name[i]);
		if (seen || (skip && !strcmp(skip, l->name[i])))
			continue;
		for (int j = i; j < l->n; j++)
			k += !strcmp(l->name[j], l->name[i]);
		buf_addf(out, "%s'%s' (GPU%s ", first ? "" : ", ", l->name[i], k > 1 ? "s" : "");
		for (int j = i, m = 0; j < l->n; j++)
			if (!strcmp(l->name[j], l->name[i]))
				buf_addf(out, "%s%d", m++ ? ", " : "", j);
		buf_adds(out, ")");
		first = 0;
	}
}

int gpu_list_select(const struct gpu_list *l, const char *model, int max, int *dev,
		    struct buf *err)
{
	int n = 0;

	if (!model || !*model)
		model = l->n ? l->name[0] : "";
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->name[i], model) && (max <= 0 || n < max))
			dev[n++] = i;
	if (n == 0) {
		struct buf m = BUF_INIT;
		gpu_list_describe(l, NULL, &m);
		kf_err(err, "no GPU of model '%s' here; this host has %s", model, m.s);
		buf_release(&m);
		return KF_ENOMODEL;
	}
	return n;
}

const char *engine_gpu_model_wanted(const char *gpu_model)
{
	const char *env = getenv("KFORGE_GPU_MODEL");

	if (gpu_model && *gpu_model)
		return gpu_model;
	return env && *env ? env : NULL;
}

int engine_gpu_model(const char *gpu_model, char *name, size_t cap, struct buf *err)
{
	struct gpu_list l;
	int *dev, r;

	gpu_list_init(&l);
	if ((r = gpu_list_probe(&l, err)) < 0)
		return r;
	dev = xcalloc((size_t)l.n, sizeof(*dev));
	r = gpu_list_select(&l, engine_gpu_model_wanted(gpu_model), 0, dev, err);
	if (r > 0) {
		snprintf(name, cap, "%s", l.name[dev[0]]);
		r = 0;
	}
	free(dev);
	gpu_list_release(&l);
	return r;
}

int engine_gpu_models(json_t **models, struct buf *err)
{
	struct gpu_list l;
	int r;

	*models = NULL;
	gpu_list_init(&l);
	if ((r = gpu_list_probe(&l, err)) < 0)
		return r;
	*models = json_array();
	for (int i = 0; i < l.n; i++) {
		json_t *devs = json_array();
		int seen = 0;
		for (int j = 0; j < i && !seen; j++)
			seen = !strcmp(l.name[j], l.name[i]);
		if (seen) {
			json_decref(devs);
			continue;
		}
		for (int j = i; j < l.n; j++)
			if (!strcmp(l.name[j], l.name[i]))
				json_array_append_new(devs, json_integer(j));
		json_array_append_new(*models, json_pack("{s:s,s:o}", "name", l.name[i], "devices",
							 devs));
	}
	gpu_list_release(&l);
	return 0;
}
