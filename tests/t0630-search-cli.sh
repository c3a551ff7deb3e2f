#!/bin/sh
# kforge search's command line: help, usage errors, resume with nothing
# to resume, the proposer choice and what it says about it.
. "$KF_ROOT/tests/lib.sh"
mkdir -p root/templates
fixture_problem root/problems/level1/001_P1
export KFORGE_ROOT="$T_TMP/root"
unset KFORGE_LLM_BASE_URL

expect_exit 0 "search --help" "$KFORGE" search --help
contains "help lists the strategies" "$T_TMP/out" "branch \(default\) or revise"
contains "help lists the budgets" "$T_TMP/out" "--max-tokens"
expect_exit 2 "nothing to resume without --problems" "$KFORGE" search
contains "says there is no unfinished run" "$T_TMP/err" "no unfinished run"
expect_exit 2 "unknown strategy" "$KFORGE" search --problems 1 --strategy sideways
contains "names it" "$T_TMP/err" "unknown strategy 'sideways'"
expect_exit 2 "misspelt problem" "$KFORGE" search --problems P2x
contains "suggests the closest" "$T_TMP/err" "^kforge: unknown problem 'P2x'; did you mean 'level1/001_P1'\?$"
expect_exit 2 "number and name disagree (issue 36)" "$KFORGE" search --problems 1,2_P1.py
contains "names the item" "$T_TMP/err" "^kforge: unknown problem '2_P1.py'; did you mean 'level1/001_P1'\?$"
expect_exit 2 "nothing close: no suggestion" "$KFORGE" search --problems 1,Softmax
check "one line" test "$(cat "$T_TMP/err")" = "kforge: unknown problem 'Softmax'"
expect_exit 2 "bad number" "$KFORGE" search --problems 1 --rounds many
expect_exit 2 "stray argument" "$KFORGE" search 1
contains "points at --problems" "$T_TMP/err" "--problems"
expect_exit 2 "unknown option" "$KFORGE" search --roundz 3
expect_exit 1 "unknown proposer" "$KFORGE" search --problems 1 --proposer gpt
contains "names the proposer" "$T_TMP/err" "unknown proposer 'gpt'"
"$KFORGE" search --problems 1 --proposer builtin --compile-only >"$T_TMP/out" 2>"$T_TMP/err"
contains "without an endpoint the built-in proposer says so on the first line" "$T_TMP/err" \
	"^proposer: built-in \(no LLM endpoint configured"
check "and it is the first line" sh -c "head -n 1 '$T_TMP/err' | grep -q '^proposer: built-in'"
check "a default search records its timing budgets (1 s, 3x eager)" sh -c \
	"sqlite3 '$KFORGE_DB' \"select count(*) from runs where json_extract(config,'\$.max_timing_s')=1 and json_extract(config,'\$.prune_vs_eager')=3\" | grep -qx 1"
expect_exit 2 "a negative --prune-vs-eager is refused" "$KFORGE" search --problems 1 --prune-vs-eager -1
"$KFORGE" search --problems 1 --proposer builtin --compile-only --prune-vs-eager 0 --max-timing 0 >/dev/null 2>&1
check "--prune-vs-eager 0 --max-timing 0: neither in the run's config" sh -c \
	"sqlite3 '$KFORGE_DB' \"select count(*) from runs where json_extract(config,'\$.max_timing_s') is null and json_extract(config,'\$.prune_vs_eager') is null\" | grep -qx 1"
expect_exit 2 "kforge eval: --prune-vs-eager wants a number" "$KFORGE" eval 1 x.cu --prune-vs-eager lots
contains "says so" "$T_TMP/err" "prune-vs-eager wants a number"
check "profile: absent from a run's config unless asked" sh -c \
	"sqlite3 '$KFORGE_DB' \"select count(*) from runs where json_extract(config,'\$.profile') is not null\" | grep -qx 0"
"$KFORGE" search --problems 1 --proposer builtin --compile-only --profile >/dev/null 2>&1
check "--profile is recorded in the run's config (issue 41)" sh -c \
	"sqlite3 '$KFORGE_DB' \"select count(*) from runs where json_extract(config,'\$.profile')=1\" | grep -qx 1"

# Option types (issue 22): fractions are kept, not truncated to integers.
"$KFORGE" search --problems 1 --proposer builtin --compile-only --max-timing 0.5 --prune-vs-eager 2.5 \
	--max-time 0.5 --total-time 1.5 >/dev/null 2>&1
check "--max-timing 0.5 --prune-vs-eager 2.5 --max-time 0.5 --total-time 1.5 are recorded as given" sh -c \
	"sqlite3 '$KFORGE_DB' \"select count(*) from runs where json_extract(config,'\$.max_timing_s')=0.5 and json_extract(config,'\$.prune_vs_eager')=2.5 and json_extract(config,'\$.per_problem.wall_s')=0.5 and json_extract(config,'\$.total.wall_s')=1.5\" | grep -qx 1"
for bad in "--rounds 2.5" "--seed -1" "--max-tokens 1e3" "--ideas 3x" "--max-timing 0.5x" "--max-timing ''" \
	"--top-k 1001" "--max-ideas -1" "--strategy Branch"; do
	# shellcheck disable=SC2086
	eval "set -- $bad"
	expect_exit 2 "search $bad is a usage error" "$KFORGE" search --problems 1 --proposer builtin --compile-only "$@"
done
contains "it says which option and what it wants" "$T_TMP/err" "unknown strategy 'Branch' \(--strategy takes branch or revise\)"
expect_exit 2 "search --rounds 2.5 names the type" "$KFORGE" search --problems 1 --compile-only --rounds 2.5
contains "an integer" "$T_TMP/err" "--rounds wants an integer in 0..10000, not '2.5'"
expect_exit 0 "-q after the command" "$KFORGE" search --problems 1 --proposer builtin --compile-only -q
lacks "makes the search quiet" "$T_TMP/err" "^proposer:"

# No CUDA driver or GPU: exit 3, as kforge eval (not 1, a failed run).
if "$KFORGE" gpu-info >/dev/null 2>&1; then
	skip "a GPU is visible; the no-GPU exit does not apply"
else
	expect_exit 3 "search without a GPU exits 3" "$KFORGE" search --problems 1 --proposer builtin
	contains "and says why" "$T_TMP/err" "no CUDA driver found|no GPU visible"
fi
