/* Shard assignment: deterministic, balanced (LPT), independent of input
 * order, and bad arguments refused; sbatch scripts carry what Slurm needs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "collector/shard.h"
#include "collector/slurm.h"

static void lpt_balances(void **state)
{
	/* 7,5,4,3,2,1 over 2 shards: LPT gives 7+3+1=11 and 5+4+2=11. */
	struct shard_item it[] = { { "a", 1 }, { "b", 2 }, { "c", 3 }, { "d", 4 }, { "e", 5 },
				   { "f", 7 } };
	int as[6];
	double load[2];
	struct buf err = BUF_INIT;

	(void)state;
	assert_int_equal(shard_assign(it, 6, 2, as, load, &err), 0);
	assert_true(load[0] == 11 && load[1] == 11);
	assert_int_equal(as[5], 0);   /* the largest goes first to shard 0 */
	assert_int_equal(as[4], 1);
	buf_release(&err);
}

static void order_independent(void **state)
{
	struct shard_item a[] = { { "p1", 3 }, { "p2", 3 }, { "p3", 1 }, { "p4", 2 }, { "p5", 3 } };
	struct shard_item b[] = { { "p5", 3 }, { "p3", 1 }, { "p1", 3 }, { "p4", 2 }, { "p2", 3 } };
	int as[5], bs[5], i, j;

	(void)state;
	assert_int_equal(shard_assign(a, 5, 3, as, NULL, NULL), 0);
	assert_int_equal(shard_assign(b, 5, 3, bs, NULL, NULL), 0);
	for (i = 0; i < 5; i++)
		for (j = 0; j < 5; j++)
			if (!strcmp(a[i].id, b[j].id))
				assert_int_equal(as[i], bs[j]);
}

static void every_shard_used_and_bad_args(void **state)
{
	struct shard_item it[] = { { "x", 0 }, { "y", 0 }, { "z", 0 } };
	struct shard_item bad[] = { { "x", -1 } };
	int as[3], seen[3] = { 0 }, i;
	struct buf err = BUF_INIT;

	(void)state;
	assert_int_equal(shard_assign(it, 3, 3, as, NULL, &err), 0);
	for (i = 0; i < 3; i++)
		seen[as[i]]++;
	assert_true(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
	assert_int_equal(shard_assign(it, 3, 0, as, NULL, &err), -1);
	assert_non_null(strstr(err.s, "shards"));
	assert_int_equal(shard_assign(bad, 1, 1, as, NULL, &err), -1);
	buf_release(&err);
}

static void scripts(void **state)
{
	const char *lists[] = { "level1/019_ReLU,level1/020_LeakyReLU", "level1/023_Softmax" };
	struct slurm_plan p;
	struct buf out = BUF_INIT, err = BUF_INIT;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.kforge = "/opt/kf/kforge";
	p.root = "/opt/kf";
	p.workdir = "/shared/run it";
	p.n_shards = 2;
	p.shard_problems = lists;
	p.partition = "h100";
	p.gres = "gpu:1";
	p.verify_partitions[0] = "h100";
	p.verify_partitions[1] = "h200";
	p.n_verify = 2;
	p.search_args = "'--rounds' '3'";
	p.pack_version = "0.1.0";
	p.site = 1;
	assert_int_equal(slurm_render(&p, &out, &err), 0);
	assert_non_null(strstr(out.s, "#SBATCH --array=0-1\n"));
	assert_non_null(strstr(out.s, "#SBATCH --requeue\n"));
	assert_non_null(strstr(out.s, "#SBATCH --gres=gpu:1\n"));
	assert_non_null(strstr(out.s, "WORK='/shared/run it'"));   /* quoted */
	assert_non_null(strstr(out.s, "'--rounds' '3'"));
	assert_non_null(strstr(out.s, "verify-h200.db verify"));
	assert_non_null(strstr(out.s, "merge merged.db verify-h100.db verify-h200.db"));
	assert_non_null(strstr(out.s, "pack --version '0.1.0'"));
	/* hostile names never reach a script */
	p.partition = "h100\n#SBATCH --wrap=rm";
	buf_reset(&out);
	assert_int_equal(slurm_render(&p, &out, &err), -1);
	p.partition = "h100";
	lists[1] = "level1/023_Softmax;$(reboot)";
	assert_int_equal(slurm_render(&p, &out, &err), -1);
	buf_release(&out);
	buf_release(&err);
}

static void quoting(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	shell_quote(&b, "it's");
	assert_string_equal(b.s, "'it'\\''s'");
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lpt_balances),
		cmocka_unit_test(order_independent),
		cmocka_unit_test(every_shard_used_and_bad_args),
		cmocka_unit_test(scripts),
		cmocka_unit_test(quoting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
