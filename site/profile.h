/* A kernel's hardware-counter profile (store/store_profile.h JSON) as the
 * site's pages and the Markdown reports show it: the same fields, the same
 * formatting ("—" for a metric that could not be read). */
#ifndef KF_SITE_PROFILE_H
#define KF_SITE_PROFILE_H

#include <jansson.h>
#include "core/buf.h"

/* The block-level rows, in order: calls row(ctx, label, value). */
void profile_rows(const json_t *prof, void (*row)(void *ctx, const char *label, const char *value),
		  void *ctx);
/* One kernel's cells, in the order of profile_kernel_heads (NULL-ended):
 * name, time, DRAM %, SM %, registers, shared memory, block x grid, limiter. */
extern const char *const profile_kernel_heads[];
void profile_kernel_cells(const json_t *k, void (*cell)(void *ctx, int i, const char *value),
			  void *ctx);
/* At most this many kernels of a profile are listed. */
#define PROFILE_MAX_KERNELS 64

/* The template view of a profile: {limiter, rows: [{label, value}],
 * kernels: [{name, time, dram, sm, registers, shared, shape, limiter}],
 * more_kernels, tool, created_at}. */
json_t *profile_view(const json_t *prof);

#endif
