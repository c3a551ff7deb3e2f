#include "collector/slurm.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fsutil.h"
#include "core/proc.h"

void shell_quote(struct buf *out, const char *s)
{
	buf_addc(out, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			buf_adds(out, "'\\''");
		else
			buf_addc(out, *s);
	}
	buf_addc(out, '\'');
}

static void q(struct buf *b, const char *s)
{
	shell_quote(b, s);
}

static int bad_name(const char *s)
{
	/* partition names end up in file names and #SBATCH lines */
	if (!s || !*s || strlen(s) > 64)
		return 1;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.' ||
		      *s == ':'))
			return 1;
	return 0;
}

static void header(struct buf *b, const struct slurm_plan *p, const char *name,
		   const char *partition, const char *log)
{
	buf_addf(b, "#!/bin/sh\n#SBATCH --job-name=kforge-%s\n", name);
	buf_addf(b, "#SBATCH --output=%s/logs/%s\n", p->workdir, log);
	buf_adds(b, "#SBATCH --open-mode=append\n");
	if (partition)
		buf_addf(b, "#SBATCH --partition=%s\n", partition);
	if (p->time_limit)
		buf_addf(b, "#SBATCH --time=%s\n", p->time_limit);
	if (p->account)
		buf_addf(b, "#SBATCH --account=%s\n", p->account);
	if (p->cpus_per_task > 0)
		buf_addf(b, "#SBATCH --cpus-per-task=%d\n", p->cpus_per_task);
}

static void prologue(struct buf *b, const struct slurm_plan *p)
{
	buf_adds(b, "set -eu\nKFORGE=");
	q(b, p->kforge);
	buf_adds(b, "\nWORK=");
	q(b, p->workdir);
	buf_adds(b, "\nexport KFORGE_ROOT=");
	q(b, p->root);
	buf_adds(b, "\ncd \"$WORK\"\n");
}

static void render_search(struct buf *b, const struct slurm_plan *p)
{
	header(b, p, "search", p->partition, "search_%a.log");
	buf_addf(b, "#SBATCH --array=0-%d\n", p->n_shards - 1);
	/* A task lost with its node is requeued; the search resumes its store. */
	buf_adds(b, "#SBATCH --requeue\n");
	if (p->gres && !p->compile_only)
		buf_addf(b, "#SBATCH --gres=%s\n", p->gres);
	prologue(b, p);
	buf_adds(b, "ID=${SLURM_ARRAY_TASK_ID:?not a job array task}\n"
		    "PROBS=$(sed -n \"$((ID + 1))p\" shards.txt)\n"
		    "echo \"kforge shard $ID (restart ${SLURM_RESTART_COUNT:-0}) on "
		    "$(hostname): $PROBS\"\n"
		    "exec \"$KFORGE\" --db \"shards/shard_$ID.db\" search --problems \"$PROBS\"");
	if (p->compile_only) {
		buf_adds(b, " --compile-only --arch ");
		q(b, p->arch ? p->arch : "sm_90a");
	}
	if (p->search_args && *p->search_args)
		buf_addf(b, " %s", p->search_args);
	buf_adds(b, "\n");
}

static void render_merge(struct buf *b, const struct slurm_plan *p)
{
	int i;

	header(b, p, "merge", p->partition, "merge.log");
	prologue(b, p);
	buf_adds(b, "rm -f merged.db.tmp\n\"$KFORGE\" merge");
	for (i = 0; i < p->n_shards; i++)
		buf_addf(b, " shards/shard_%d.db", i);
	buf_adds(b, " -o merged.db.tmp\nmv merged.db.tmp merged.db\n");
}

static void render_verify(struct buf *b, const struct slurm_plan *p, const char *part)
{
	header(b, p, "verify", part, "verify-%j.log");
	buf_adds(b, "#SBATCH --requeue\n");
	if (p->gres)
		buf_addf(b, "#SBATCH --gres=%s\n", p->gres);
	prologue(b, p);
	/* Each partition verifies its own copy; finish merges the copies. */
	buf_addf(b, "[ -f verify-%s.db ] || { cp merged.db verify-%s.db.tmp && "
		    "mv verify-%s.db.tmp verify-%s.db; }\n", part, part, part, part);
	buf_addf(b, "exec \"$KFORGE\" --db verify-%s.db verify\n", part);
}

static void render_finish(struct buf *b, const struct slurm_plan *p)
{
	int i;

	header(b, p, "finish", p->partition, "finish.log");
	prologue(b, p);
	buf_adds(b, "rm -f final.db.tmp\n\"$KFORGE\" merge merged.db");
	for (i = 0; i < p->n_verify; i++)
		buf_addf(b, " verify-%s.db", p->verify_partitions[i]);
	buf_adds(b, " -o final.db.tmp\nmv final.db.tmp final.db\n");
	if (p->pack_version) {
		buf_adds(b, "\"$KFORGE\" --db final.db pack --version ");
		q(b, p->pack_version);
		buf_adds(b, " -o dist\n");
	}
	if (p->site)
		buf_adds(b, "\"$KFORGE\" --db final.db site -o public\n");
	buf_adds(b, "echo \"kforge: finished: $WORK/final.db\"\n");
}

static int check_plan(const struct slurm_plan *p, struct buf *err)
{
	int i;

	if (!p->kforge || p->kforge[0] != '/' || !p->workdir || p->workdir[0] != '/')
		return kf_err(err, "slurm: the kforge binary and the work directory need absolute paths");
	if (p->n_shards < 1 || p->n_shards > 10000)
		return kf_err(err, "slurm: need 1..10000 shards (got %d)", p->n_shards);
	for (i = 0; i < p->n_shards; i++)
		if (!p->shard_problems[i] || !*p->shard_problems[i] ||
		    strpbrk(p->shard_problems[i], "\n'\"$`\\ "))
			return kf_err(err, "slurm: shard %d has no problems or odd characters", i);
	if (p->partition && bad_name(p->partition))
		return kf_err(err, "slurm: bad partition name '%s'", p->partition);
	if (p->gres && bad_name(p->gres))
		return kf_err(err, "slurm: bad gres '%s'", p->gres);
	if (p->time_limit && bad_name(p->time_limit))
		return kf_err(err, "slurm: bad time limit '%s'", p->time_limit);
	if (p->account && bad_name(p->account))
		return kf_err(err, "slurm: bad account '%s'", p->account);
	if (p->n_verify < 0 || p->n_verify > SLURM_MAX_VERIFY)
		return kf_err(err, "slurm: at most %d verify partitions", SLURM_MAX_VERIFY);
	for (i = 0; i < p->n_verify; i++)
		if (bad_name(p->verify_partitions[i]) || strchr(p->verify_partitions[i], ':'))
			return kf_err(err, "slurm: bad verify partition '%s'",
				      p->verify_partitions[i]);
	return 0;
}

int slurm_render(const struct slurm_plan *p, struct buf *out, struct buf *err)
{
	int i;

	if (check_plan(p, err))
		return -1;
	buf_adds(out, "==> shards.txt <==\n");
	for (i = 0; i < p->n_shards; i++)
		buf_addf(out, "%s\n", p->shard_problems[i]);
	buf_adds(out, "\n==> search.sbatch <==\n");
	render_search(out, p);
	buf_adds(out, "\n==> merge.sbatch <==\n");
	render_merge(out, p);
	for (i = 0; i < p->n_verify; i++) {
		buf_addf(out, "\n==> verify-%s.sbatch <==\n", p->verify_partitions[i]);
		render_verify(out, p, p->verify_partitions[i]);
	}
	buf_adds(out, "\n==> finish.sbatch <==\n");
	render_finish(out, p);
	return 0;
}

static int put(const struct slurm_plan *p, const char *name, const struct buf *b,
	       struct buf *err)
{
	struct buf path = BUF_INIT;
	int rc;

	buf_addf(&path, "%s/%s", p->workdir, name);
	rc = write_file_atomic(path.s, b->s, b->len, err);
	if (!rc && strstr(name, ".sbatch") && chmod(path.s, 0755))
		rc = kf_err(err, "chmod %s: %s", path.s, strerror(errno));
	buf_release(&path);
	return rc;
}

int slurm_write_scripts(const struct slurm_plan *p, struct buf *err)
{
	struct buf b = BUF_INIT, dir = BUF_INIT;
	int i, rc = -1;

	if (check_plan(p, err))
		return -1;
	for (i = 0; i < 3; i++) {
		static const char *const sub[] = { "", "/logs", "/shards" };
		buf_setf(&dir, "%s%s", p->workdir, sub[i]);
		if (mkdir_p(dir.s, err))
			goto out;
	}
	for (i = 0; i < p->n_shards; i++)
		buf_addf(&b, "%s\n", p->shard_problems[i]);
	if (put(p, "shards.txt", &b, err))
		goto out;
	buf_reset(&b);
	render_search(&b, p);
	if (put(p, "search.sbatch", &b, err))
		goto out;
	buf_reset(&b);
	render_merge(&b, p);
	if (put(p, "merge.sbatch", &b, err))
		goto out;
	for (i = 0; i < p->n_verify; i++) {
		struct buf name = BUF_INIT;
		buf_reset(&b);
		render_verify(&b, p, p->verify_partitions[i]);
		buf_addf(&name, "verify-%s.sbatch", p->verify_partitions[i]);
		rc = put(p, name.s, &b, err);
		buf_release(&name);
		if (rc)
			goto out;
		rc = -1;
	}
	buf_reset(&b);
	render_finish(&b, p);
	if (put(p, "finish.sbatch", &b, err))
		goto out;
	rc = 0;
out:
	buf_release(&b);
	buf_release(&dir);
	return rc;
}

/* sbatch --parsable [--dependency=afterok:DEPS] SCRIPT -> job id */
static int sbatch(const struct slurm_plan *p, const char *script, const char *deps,
		  struct buf *id, struct buf *err)
{
	struct buf path = BUF_INIT, dep = BUF_INIT;
	struct proc_limits lim = { 120, 0, 0, 0, 0 };
	struct proc_result r;
	const char *argv[6];
	int n = 0, rc = -1;

	proc_result_init(&r);
	buf_addf(&path, "%s/%s", p->workdir, script);
	argv[n++] = "sbatch";
	argv[n++] = "--parsable";
	if (deps && *deps) {
		buf_addf(&dep, "--dependency=afterok:%s", deps);
		argv[n++] = dep.s;
	}
	argv[n++] = path.s;
	argv[n] = NULL;
	if (proc_run(argv, NULL, 0, &lim, &r, err))
		goto out;
	if (!r.exited || r.status != 0) {
		struct buf how = BUF_INIT;
		proc_describe(&r, &how);
		buf_trim(&r.errout);
		kf_err(err, "sbatch %s: %s: %s", script, how.s, r.errout.s);
		buf_release(&how);
		goto out;
	}
	buf_trim(&r.out);
	/* --parsable prints "jobid[;cluster]" */
	r.out.len = strcspn(r.out.s, ";\n");
	r.out.s[r.out.len] = 0;
	if (!r.out.len || strspn(r.out.s, "0123456789") != r.out.len) {
		kf_err(err, "sbatch %s: unexpected reply '%s'", script, r.out.s);
		goto out;
	}
	buf_setf(id, "%s", r.out.s);
	rc = 0;
out:
	proc_result_release(&r);
	buf_release(&path);
	buf_release(&dep);
	return rc;
}

int slurm_submit(const struct slurm_plan *p, struct buf *jobs, struct buf *err)
{
	struct buf search = BUF_INIT, merge = BUF_INIT, v = BUF_INIT, fin = BUF_INIT;
	struct buf deps = BUF_INIT;
	int i, rc = -1;

	if (slurm_write_scripts(p, err))
		return -1;
	if (sbatch(p, "search.sbatch", NULL, &search, err))
		goto out;
	buf_addf(jobs, "search=%s", search.s);
	if (sbatch(p, "merge.sbatch", search.s, &merge, err))
		goto out;
	buf_addf(jobs, " merge=%s", merge.s);
	buf_adds(&deps, merge.s);
	for (i = 0; i < p->n_verify; i++) {
		struct buf name = BUF_INIT;
		buf_addf(&name, "verify-%s.sbatch", p->verify_partitions[i]);
		rc = sbatch(p, name.s, merge.s, &v, err);
		buf_release(&name);
		if (rc)
			goto out;
		rc = -1;
		buf_addf(jobs, " verify-%s=%s", p->verify_partitions[i], v.s);
		buf_addf(&deps, ":%s", v.s);
	}
	if (sbatch(p, "finish.sbatch", deps.s, &fin, err))
		goto out;
	buf_addf(jobs, " finish=%s", fin.s);
	rc = 0;
out:
	buf_release(&search);
	buf_release(&merge);
	buf_release(&v);
	buf_release(&fin);
	buf_release(&deps);
	return rc;
}
