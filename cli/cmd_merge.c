#include "cmds.h"
#include "core/fsutil.h"
#include "store/store.h"
#include "store/store_merge.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_merge(int argc, char **argv, struct cli_ctx *ctx)
{
	const char *outp = NULL;
	struct buf err = BUF_INIT, conf = BUF_INIT, tmp = BUF_INIT, notes = BUF_INIT;
	struct merge_stats st = { 0, 0, 0, 0, 0, 0 };
	struct store s;
	int force = 0, ret = EXIT_FAIL, fd, n;
	struct cli_opt opts[] = {
		OPT_STR("output", 'o', &outp, "OUT.db", "the merged store (required)"),
		OPT_FLAG("force", 0, &force, "replace OUT.db when it exists"),
		OPT_END,
	};
	struct cli_spec spec = { "merge", "A.db B.db ... -o OUT.db [--force]",
		"Unions stores made on several machines or GPUs into OUT.db: kernels deduplicated by\n"
		"content, runs, evaluations and verifications kept per GPU, baselines per GPU.\n"
		"Honest differences are settled by rule, whatever the order of the inputs: the same\n"
		"kernel measured in two stores keeps one evaluation (a failure over 'correct', then the\n"
		"earliest; a status disagreement is listed); the latest verification; the faster\n"
		"baseline; the earliest date of a kernel or compile; two executions of one run\n"
		"configuration both kept, the later renamed RUN~H with its rows. Anything else that\n"
		"differs (a problem's spec, an idea's text) is a conflict: it is listed and the merge\n"
		"fails (exit 4) without writing OUT.db. Idempotent and order-independent.\n",
		opts, NULL, 0, NULL, NULL };

	if ((ret = cli_parse(&spec, argc, argv, ctx, &n)) != CLI_GO)
		return ret;
	ret = EXIT_FAIL;
	if (!outp || n < 1) {
		fprintf(stderr, "kforge merge: needs at least one input store and -o OUT.db\n");
		return cli_usage(&spec);
	}
	if (file_exists(outp) && !force)
		return cli_fail(EXIT_FAIL, "%s exists (use --force to replace it)", outp);
	for (int i = 1; i <= n; i++)
		if (!strcmp(argv[i], outp))
			return cli_fail(EXIT_USAGE, "the output %s is also an input", outp);
	buf_addf(&tmp, "%s.tmp.XXXXXX", outp);
	fd = mkstemp(tmp.s);
	if (fd < 0) {
		ret = cli_fail(EXIT_FAIL, "cannot create %s", tmp.s);
		goto out;
	}
	close(fd);
	unlink(tmp.s);
	if (store_open(&s, tmp.s, STORE_CREATE, &err) < 0) {
		ret = cli_fail(EXIT_FAIL, "%s", err.s);
		goto out;
	}
	for (int i = 1; i <= n; i++) {
		int r = store_merge_from(&s, argv[i], &st, &conf, &notes, &err);
		if (r == -2) {
			fprintf(stderr, "kforge merge: conflicts with %s (same key, different content):\n", argv[i]);
			cli_eputs(conf.s);
			ret = EXIT_CHECK;
			store_close(&s);
			goto cleanup;
		}
		if (r < 0) {
			ret = cli_fail(EXIT_FAIL, "%s", err.s);
			store_close(&s);
			goto cleanup;
		}
	}
	store_close(&s);
	if (rename(tmp.s, outp) < 0) {
		ret = cli_fail(EXIT_FAIL, "cannot rename %s to %s", tmp.s, outp);
		goto cleanup;
	}
	printf("merged %d store(s) into %s: %lld rows added, %lld identical rows deduplicated, "
	       "%lld settled by rule (%lld later execution(s) of a run renamed, %lld evaluation(s) correct "
	       "in one store only)\n",
	       n, outp, st.rows_added, st.rows_same, st.resolved, st.runs_renamed, st.status_disagree);
	if (notes.len) {
		fputs("kforge merge: settled by rule (see 'kforge merge --help'):\n", stderr);
		cli_eputs(notes.s);
	}
	ret = EXIT_OK;
	goto out;
cleanup:
	unlink(tmp.s);
	{
		struct buf side = BUF_INIT;
		buf_addf(&side, "%s-wal", tmp.s);
		unlink(side.s);
		buf_setf(&side, "%s-shm", tmp.s);
		unlink(side.s);
		buf_release(&side);
	}
out:
	buf_release(&err);
	buf_release(&conf);
	buf_release(&notes);
	buf_release(&tmp);
	return ret;
}
