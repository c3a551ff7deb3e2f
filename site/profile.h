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

/* Where the block's kernel time goes: its kernels grouped by name, the
 * costliest first, at most PROFILE_MAX_KERNELS groups: [{name, launches,
 * time, share}] with time and share formatted (share of the block's kernel
 * time; "—" when the durations could not be read). A model of hundreds of
 * launches is read here, not launch by launch. */
json_t *profile_by_name(const json_t *prof);

/* The template view of a profile: {limiter, rows: [{label, value}],
 * kernels: [{name, time, dram, sm, registers, shared, shape, limiter}],
 * more_kernels, by_name and has_by_name (profile_by_name, when there are several
 * names),
 * tool, created_at}. */
json_t *profile_view(const json_t *prof);

#endif
