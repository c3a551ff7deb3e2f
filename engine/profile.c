/* Profiles: the limiter rule and the JSON form (engine/profile.h). */
#include "profile.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void prof_kernel_init(struct prof_kernel *k)
{
	memset(k, 0, sizeof(*k));
	k->duration_ms = k->dram_read_bytes = k->dram_write_bytes = NAN;
	k->dram_pct = k->l2_hit_pct = k->sm_pct = k->tensor_pct = k->occupancy_pct = NAN;
	k->registers = k->shared_bytes = k->block_threads = k->grid_blocks = -1;
}

static double z(double v)
{
	return isfinite(v) ? v : 0;
}

const char *prof_limiter(double dram_pct, double sm_pct, double tensor_pct, int launches,
			 double kernel_ms, double timed_mean_ms)
{
	/* Launch count: many tiny kernels, or the block's time mostly between
	 * its kernels (a single kernel has no gaps to remove). */
	if (launches >= 2 && isfinite(kernel_ms) &&
	    ((launches >= PROF_LAUNCH_MIN && kernel_ms / launches < PROF_TINY_MS) ||
	     (timed_mean_ms > 0 && kernel_ms < PROF_GAP_SHARE * timed_mean_ms)))
		return "launch";
	if (z(dram_pct) >= PROF_BUSY_PCT && z(dram_pct) >= z(sm_pct))
		return "memory";
	if (z(sm_pct) >= PROF_BUSY_PCT || z(tensor_pct) >= PROF_TENSOR_PCT)
		return "compute";
	return "latency";
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *bytes(double v)
{
	return isfinite(v) && v >= 0 && v < 9e18 ? json_integer((json_int_t)llround(v)) : json_null();
}

static json_t *count(int v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

/* Duration-weighted mean of the field at off over the kernels that have
 * it (a plain mean when no duration is known); NAN when none has it. */
static double weighted(const struct prof_kernel *k, int n, size_t off)
{
	double sw = 0, s = 0, plain = 0;
	int np = 0;

	for (int i = 0; i < n; i++) {
		double v = *(const double *)(const void *)((const char *)&k[i] + off);
		if (!isfinite(v))
			continue;
		plain += v;
		np++;
		if (isfinite(k[i].duration_ms) && k[i].duration_ms > 0) {
			s += v * k[i].duration_ms;
			sw += k[i].duration_ms;
		}
	}
	if (sw > 0)
		return s / sw;
	return np ? plain / np : NAN;
}

static double summed(const struct prof_kernel *k, int n, size_t off)
{
	double s = 0;
	int have = 0;

	for (int i = 0; i < n; i++) {
		double v = *(const double *)(const void *)((const char *)&k[i] + off);
		if (isfinite(v)) {
			s += v;
			have = 1;
		}
	}
	return have ? s : NAN;
}

json_t *prof_to_json(const struct prof_kernel *k, int n, double timed_mean_ms, double cost_ms,
		     const char *tool)
{
	json_t *o = json_object(), *ks = json_array();
	double kms = summed(k, n, offsetof(struct prof_kernel, duration_ms));
	double dram = weighted(k, n, offsetof(struct prof_kernel, dram_pct));
	double sm = weighted(k, n, offsetof(struct prof_kernel, sm_pct));
	double tensor = weighted(k, n, offsetof(struct prof_kernel, tensor_pct));

	for (int i = 0; i < n; i++) {
		json_t *j = json_object();
		json_object_set_new(j, "idx", json_integer(i));
		json_object_set_new(j, "name", json_string(k[i].name));
		json_object_set_new(j, "duration_ms", num(k[i].duration_ms));
		json_object_set_new(j, "dram_read_bytes", bytes(k[i].dram_read_bytes));
		json_object_set_new(j, "dram_write_bytes", bytes(k[i].dram_write_bytes));
		json_object_set_new(j, "dram_pct", num(k[i].dram_pct));
		json_object_set_new(j, "l2_hit_pct", num(k[i].l2_hit_pct));
		json_object_set_new(j, "sm_pct", num(k[i].sm_pct));
		json_object_set_new(j, "tensor_pct", num(k[i].tensor_pct));
		json_object_set_new(j, "occupancy_pct", num(k[i].occupancy_pct));
		json_object_set_new(j, "registers", count(k[i].registers));
		json_object_set_new(j, "shared_bytes", count(k[i].shared_bytes));
		json_object_set_new(j, "block_threads", count(k[i].block_threads));
		json_object_set_new(j, "grid_blocks", count(k[i].grid_blocks));
		json_object_set_new(j, "limiter", json_string(prof_limiter(k[i].dram_pct, k[i].sm_pct,
						k[i].tensor_pct, 1, k[i].duration_ms, 0)));
		json_array_append_new(ks, j);
	}
	json_object_set_new(o, "limiter", json_string(prof_limiter(dram, sm, tensor, n, kms, timed_mean_ms)));
	json_object_set_new(o, "launches", json_integer(n));
	json_object_set_new(o, "kernel_ms", num(kms));
	json_object_set_new(o, "dram_read_bytes", bytes(summed(k, n, offsetof(struct prof_kernel, dram_read_bytes))));
	json_object_set_new(o, "dram_write_bytes", bytes(summed(k, n, offsetof(struct prof_kernel, dram_write_bytes))));
	json_object_set_new(o, "dram_pct", num(dram));
	json_object_set_new(o, "l2_hit_pct", num(weighted(k, n, offsetof(struct prof_kernel, l2_hit_pct))));
	json_object_set_new(o, "sm_pct", num(sm));
	json_object_set_new(o, "tensor_pct", num(tensor));
	json_object_set_new(o, "occupancy_pct", num(weighted(k, n, offsetof(struct prof_kernel, occupancy_pct))));
	json_object_set_new(o, "cost_ms", json_real(isfinite(cost_ms) ? cost_ms : 0));
	json_object_set_new(o, "tool", json_string(tool ? tool : ""));
	json_object_set_new(o, "kernels", ks);
	return o;
}
