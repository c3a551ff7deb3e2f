#!/bin/sh
# scripts/dataset.sh (make dataset): the first line says which proposer,
# overrides reach the search, steps this build lacks are reported as
# skipped, a failing step stops it. A stub stands in for kforge.
. "$KF_ROOT/tests/lib.sh"
REAL_KFORGE=$KFORGE
cat >stub <<'STUB'
#!/bin/sh
echo "$*" >>"$STUB_LOG"
for a in "$@"; do
	case "$a" in
	search)
		case " $* " in *" --check "*)
			# search --check: options, PROBLEMS and the GPU, before anything is written
			[ -n "${STUB_BAD_PROBLEMS:-}" ] && { echo "kforge: PROBLEMS: no problems in level9 (PROBLEMS takes ...)" >&2; exit 2; }
			[ -n "${STUB_NOGPU:-}" ] && exit 3
			exit 0 ;;
		esac
		[ -n "${STUB_FAIL_SEARCH:-}" ] && exit 1; exit 0 ;;
	verify) [ -n "${STUB_VERIFY_FAILED:-}" ] && exit 4
	        echo "kforge $a: not yet implemented" >&2; exit 2 ;;
	pack) echo "kforge $a: not yet implemented" >&2; exit 2 ;;
	site) [ -n "${STUB_FAIL_SITE:-}" ] && { echo "site broke" >&2; exit 1; }
	      [ -n "${STUB_SITE_USAGE:-}" ] && { echo "kforge site: unknown option '-o'" >&2; exit 2; }; exit 0 ;;
	report) exit 0 ;;
	esac
done
STUB
chmod +x stub
export KFORGE="$T_TMP/stub" STUB_LOG="$T_TMP/log" DB="$T_TMP/d.db" OUT="$T_TMP/dist"
unset KFORGE_LLM_BASE_URL PROPOSER MODEL COMPILE_ONLY

expect_exit 0 "dataset with every step" sh "$KF_ROOT/scripts/dataset.sh" level1
check "first line: no endpoint, built-in proposer" sh -c "head -n 1 '$T_TMP/out' | grep -q 'no LLM endpoint configured.*built-in proposer'"
contains "verify reported as skipped" "$T_TMP/out" "verify: SKIPPED: 'kforge verify' is not implemented"
contains "pack reported as skipped" "$T_TMP/out" "pack: SKIPPED"
contains "level 1's dataset is kernelbench, of PROBLEMS only" "$T_TMP/log" "pack --name kernelbench --version 0.1.0 --problems level1 -o $T_TMP/dist$"
contains "search got the defaults" "$T_TMP/log" "search --problems level1 --strategy branch --rounds 3 --ideas 4 --impls 2 --seed 1 --proposer builtin"
lacks "  no --jobs: the search's own default (4, or twice the GPUs)" "$T_TMP/log" "search .*--jobs"
contains "site ran, listing the tarballs, of PROBLEMS only" "$T_TMP/log" "site -o $T_TMP/dist/site --dist $T_TMP/dist --problems level1$"
contains "no store, no release page" "$T_TMP/out" "results: SKIPPED: no store"

: >log
expect_exit 0 "overrides" env ROUNDS=5 K=2 M=3 STRATEGY=revise BUDGET_TOKENS=1000 COMPILE_ONLY=1 JOBS=2 \
	KFORGE_LLM_BASE_URL=http://127.0.0.1:9/v1 MODEL=m1 sh "$KF_ROOT/scripts/dataset.sh" 1-10
check "first line names the LLM and model" sh -c "head -n 1 '$T_TMP/out' | grep -q 'LLM proposer at http://127.0.0.1:9/v1 (model m1)'"
contains "overrides reach the search" "$T_TMP/log" "search --problems 1-10 --strategy revise --rounds 5 --ideas 2 --impls 3 .* --proposer llm --jobs 2 --model m1 --max-tokens 1000 --compile-only"
contains "compile-only skips verification, saying why" "$T_TMP/out" "verify: SKIPPED: COMPILE_ONLY=1"
lacks "verify not called" "$T_TMP/log" " verify "
contains "a list of problems packs kernelbench-custom" "$T_TMP/log" "pack --name kernelbench-custom "
: >log
expect_exit 0 "NAME names the dataset" env NAME=mine COMPILE_ONLY=1 sh "$KF_ROOT/scripts/dataset.sh" level2
contains "  in the pack" "$T_TMP/log" "pack --name mine --version 0.1.0 "

expect_exit 0 "a step refusing the options is skipped, saying so" env STUB_SITE_USAGE=1 sh "$KF_ROOT/scripts/dataset.sh" 1
contains "site skipped as a usage error" "$T_TMP/out" "site: SKIPPED: this build's 'kforge site' refused the options"
contains "the pipeline went on to the report" "$T_TMP/out" "dataset: report"
expect_exit 1 "a failing search stops the pipeline" env STUB_FAIL_SEARCH=1 sh "$KF_ROOT/scripts/dataset.sh" 1
contains "and says how to resume" "$T_TMP/err" "run 'make dataset' again to resume"
expect_exit 3 "a search without a GPU stops the pipeline with its exit 3" env STUB_NOGPU=1 sh "$KF_ROOT/scripts/dataset.sh" 1
contains "and says what to do instead of resuming" "$T_TMP/err" "no GPU or CUDA driver here .*COMPILE_ONLY=1"
lacks "no pack after it" "$T_TMP/out" "dataset: pack"
lacks "  nor any baselines import before it (the store stays as it was)" "$T_TMP/out" "dataset: baselines"
: >log
expect_exit 2 "a bad PROBLEMS stops it with the usage exit" env STUB_BAD_PROBLEMS=1 sh "$KF_ROOT/scripts/dataset.sh" level9
check "  one error line: kforge's" test "$(wc -l <err)" -eq 1
lacks "  no 'run again to resume'" "$T_TMP/err" "again to resume"
lacks "  nothing imported" "$T_TMP/log" "baselines import"
expect_exit 1 "a failing step stops the pipeline" env STUB_FAIL_SITE=1 sh "$KF_ROOT/scripts/dataset.sh" 1
lacks "no report after the failure" "$T_TMP/out" "dataset: report"

: >log
expect_exit 0 "kernels failing verification do not stop the pipeline" env STUB_VERIFY_FAILED=1 \
	MAX_TIMING=5 VERIFY_ARGS="--no-category --sanitizer-timeout 60" KFORGE_ROOT="$KF_ROOT" \
	sh "$KF_ROOT/scripts/dataset.sh" 1
contains "and it says so" "$T_TMP/out" "some kernels failed verification"
contains "the site still ran" "$T_TMP/log" "site -o"
contains "MAX_TIMING reaches the search" "$T_TMP/log" "search .* --max-timing 5"
contains "VERIFY_ARGS reach verify" "$T_TMP/log" "verify --top 3 --problems 1 --no-category --sanitizer-timeout 60"
first=$(grep -E 'baselines import| search ' log | head -n 1)
check "the search's check comes before anything is written ($first)" sh -c "echo '$first' | grep -q ' search .* --check$'"
first=$(grep -E 'baselines import| search ' log | grep -v -- '--check$' | head -n 1)
check "baselines are imported before the search ($first)" sh -c "echo '$first' | grep -q 'baselines import'"

# Each baseline file is imported as its variant (tools/torch_baseline.py's names).
mkdir -p blroot/problems/baselines/G
for f in baseline_time_torch.json baseline_time_torch_notf32.json \
	baseline_time_torch_compile_inductor_default.json; do
	echo '{"level1": {}, "x": {"hardware": "GPU G"}}' >"blroot/problems/baselines/G/$f"
done
: >log
expect_exit 0 "dataset with three baseline files" env KFORGE_ROOT="$T_TMP/blroot" sh "$KF_ROOT/scripts/dataset.sh" 1
contains "eager imported as eager" "$T_TMP/log" "baselines import .*/baseline_time_torch.json --gpu GPU G --variant eager --problems 1$"
contains "TF32-off imported as eager_notf32" "$T_TMP/log" "baselines import .*/baseline_time_torch_notf32.json --gpu GPU G --variant eager_notf32 --problems 1$"
contains "compile imported as compile" "$T_TMP/log" "baselines import .*_compile_inductor_default.json --gpu GPU G --variant compile --problems 1$"

# The release page: scripts/results_md.py on the store, a section per level.
"$REAL_KFORGE" --db lv.db store init >/dev/null
python3 "$KF_ROOT/tests/tools/levelstore.py" lv.db kb
: >log
expect_exit 0 "dataset with a store writes the release page" env DB="$T_TMP/lv.db" KFORGE_ROOT="$KF_ROOT" \
	VERSION=1.2.3 sh "$KF_ROOT/scripts/dataset.sh" all
contains "the search got PROBLEMS=all" "$T_TMP/log" "search --problems all "
contains "and packed kernelbench-all" "$T_TMP/log" "pack --name kernelbench-all --version 1.2.3 "
check "OUT/results.md written" test -s dist/results.md
contains "the release page reads the tarball with this kforge, not zstd(1)" "$T_TMP/out" "results_md.py .* --kforge $T_TMP/stub"
contains "it is the release page of that version" dist/results.md '^# kforge levels 1-3 dataset v1\.2\.3: built-in proposer$'
contains "with a section per level" dist/results.md '^## Level 3$'
# Throughput per level from the store's search sessions, no --search-seconds (issue 42).
lacks "dataset.sh passes no --search-seconds" "$T_TMP/out" "results_md.py .*--search-seconds"
contains "the page has level 2's throughput from the sessions" dist/results.md \
	'^\| level 2 \| NVIDIA H100 80GB HBM3 \| 1 \| 60 s \| 60 \| \*\*60\.0\*\* \| 10 \| 48\.0 s \| \*\*80\.0%\*\* \|$'
# KernelBench's published times only where given (KERNELBENCH=DIR, an input:
# no fallback to a copy beside the checkout).
lacks "no KernelBench column without KERNELBENCH" dist/results.md "KernelBench H100 eager"
: >log
expect_exit 0 "dataset with KERNELBENCH=DIR" env DB="$T_TMP/lv.db" KFORGE_ROOT="$KF_ROOT" KERNELBENCH="$T_TMP/kb" \
	VERSION=1.2.3 sh "$KF_ROOT/scripts/dataset.sh" all
contains "passes it to the release page" "$T_TMP/out" "results_md.py .* --kernelbench $T_TMP/kb"

contains "which puts KernelBench's times beside" dist/results.md "KernelBench H100 eager"
lacks "no goals without GOALS" dist/results.md '^## Goals$'
printf '{"levels": {"2": {"fast_1": 0.9}}}' >"$T_TMP/goals.json"
expect_exit 0 "dataset with GOALS=FILE" env DB="$T_TMP/lv.db" KFORGE_ROOT="$KF_ROOT" GOALS="$T_TMP/goals.json" \
	VERSION=1.2.3 sh "$KF_ROOT/scripts/dataset.sh" all
contains "passes it to the release page" "$T_TMP/out" "results_md.py .* --goals $T_TMP/goals.json"
contains "which shows the goal, unmet" dist/results.md '^\| level 2 \| fast_1 against eager .* \| 90% \| .* \| \*\*no\*\* \|$'
