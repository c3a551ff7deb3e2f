#!/bin/sh
# kforge slurm submit --dry-run without a cluster (issue 36): it prints the
# shards and the sbatch scripts it would submit and writes nothing (no
# work directory, no store); problems go by KernelBench's names too, and
# an unknown one is a usage error.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
mkdir empty
cd empty || exit 1
HERE=$(pwd -P)

expect_exit 0 "dry run with --workdir" "$KFORGE" slurm submit --dry-run --problems 19 --shards 1 --workdir w/x
contains "names that directory" "$T_TMP/out" "$HERE/w/x"
check "wrote nothing: the directory stays empty" test -z "$(ls -A)"
check "and no store" test ! -e "$KFORGE_DB"

expect_exit 0 "dry run by KernelBench's names" "$KFORGE" slurm submit --dry-run --shards 2 --compile-only \
	--problems 19_ReLU.py,level2/12_Gemm_Multiply_LeakyReLU.py --verify h100
contains "prints the shards" "$T_TMP/out" "^level1/019_ReLU$|^level2/012_Gemm_Multiply_LeakyReLU$"
contains "prints the job array" "$T_TMP/out" "#SBATCH --array=0-1"
contains "prints the verify job" "$T_TMP/out" "^==> verify-h100.sbatch <==$"
contains "names the work directory it would use" "$T_TMP/out" "$HERE/kforge-slurm"
check "still empty" test -z "$(ls -A)"

expect_exit 2 "an unknown problem is a usage error" "$KFORGE" slurm submit --dry-run --problems 1,19_Softmax
check "one line with a suggestion" test "$(cat "$T_TMP/err")" = \
	"kforge: unknown problem '19_Softmax'; did you mean 'level1/023_Softmax'?"
check "still empty after it" test -z "$(ls -A)"
