/* Scale-out over Slurm: sbatch scripts for a sharded search (a job array,
 * one store per task, requeueable: a restarted task resumes its shard) and
 * the dependent jobs that merge the shards, verify per GPU partition, pack
 * and render. Everything is written under plan->workdir:
 *   shards.txt            one line per shard: comma-separated problem ids
 *   search.sbatch         the array job
 *   merge.sbatch          merge the shard stores into merged.db
 *   verify-PART.sbatch    per verify partition: verify a copy of merged.db
 *   finish.sbatch         merge merged.db + verify stores -> final.db, pack, site
 *   logs/                 one log per task and job */
#ifndef KF_SLURM_H
#define KF_SLURM_H

#include "core/buf.h"

#define SLURM_MAX_VERIFY 8

struct slurm_plan {
	const char *kforge;        /* absolute path of the kforge binary (shared filesystem) */
	const char *root;          /* kforge data root (problems/, templates/) */
	const char *workdir;       /* absolute; on a shared filesystem */
	int n_shards;
	const char *const *shard_problems;   /* n_shards comma-separated lists (borrowed) */
	const char *partition;     /* search partition, may be NULL */
	const char *gres;          /* e.g. "gpu:1", may be NULL */
	const char *time_limit;    /* e.g. "24:00:00", may be NULL */
	const char *account;       /* may be NULL */
	int cpus_per_task;         /* 0: default */
	const char *verify_partitions[SLURM_MAX_VERIFY];
	int n_verify;
	int compile_only;          /* search --compile-only (no GPU needed) */
	const char *arch;          /* with compile_only, e.g. "sm_90" */
	const char *search_args;   /* extra search arguments, already shell-quoted; may be NULL */
	const char *pack_version;  /* NULL: no pack */
	int site;                  /* render public/ */
};

/* Writes every script; 0 or -1 with err. */
int slurm_write_scripts(const struct slurm_plan *p, struct buf *err);
/* Appends the scripts' text (for --dry-run). */
int slurm_render(const struct slurm_plan *p, struct buf *out, struct buf *err);
/* Submits with sbatch --parsable, chaining dependencies; appends
 * "search=ID merge=ID verify-P=ID finish=ID" to jobs. */
int slurm_submit(const struct slurm_plan *p, struct buf *jobs, struct buf *err);
/* Single-quotes s for a POSIX shell. */
void shell_quote(struct buf *out, const char *s);

#endif
