#!/bin/sh
# Loops in the launch block (docs/formats.md): a prefix sum over time steps
# of level-1 problem 89 (and the suffix sum of 91, counting down in nested
# loops) with one launch per step passes the launch check at full size
# (32768 launches), keeps its loops in the plan, and computes the right
# output when emulated on the host; an off-by-one loop does not.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
C="$KF_ROOT/tests/candidates"
KFC="$KF_BUILD/tests/kfcompile"

"$KFC" --exe "$KFORGE" --fixtures "$KF_ROOT/tests/fixtures/problems" --launch-only --plan "$C/cumsum_loop.cu" >plan.out 2>&1
contains "the looped candidate passes the launch check" plan.out "cumsum_loop.cu: launch_ok"
contains "the plan keeps the loop" plan.out '"loops":\[\{"bound":\[32768\],"cmp":"<".*"var":"t"\}\]'
contains "and counts its launches" plan.out '"launches":32768'
contains "the step's offsets are expressions of t" plan.out '"expr":\["\$0"\],"index":0'
check "the plan stays small (one step, not 32768)" test "$(wc -c <plan.out)" -lt 4000

need_emulator
expect_exit 0 "compile-only eval of the looped candidate at full size" "$KFORGE" eval 89 "$C/cumsum_loop.cu" --compile-only
contains "status not_run" "$T_TMP/out" "^status: not_run"
expect_exit 4 "an unterminated loop is a format error" "$KFORGE" eval 19 "$C/launch_loop_open.cu" --compile-only
contains "naming the loop" "$T_TMP/out" "10:1: the loop over \`t\` has no closing"

python3 "$KF_ROOT/tests/tools/emulate_refs.py" "$KFORGE" "$KF_ROOT" emu --cand "$C/cumsum_loop.cu" 89 >emu.out 2>&1
contains "emulated: the looped prefix sum matches the oracle" emu.out "^ok 089_cumsum y: 120 elements, 0 bad"
python3 "$KF_ROOT/tests/tools/emulate_refs.py" "$KFORGE" "$KF_ROOT" emu --cand "$C/cumsum_rev_loop.cu" 91 >emu.out 2>&1
contains "emulated: nested loops counting down (suffix sum)" emu.out "^ok 091_cumsum_reverse y: 120 elements, 0 bad"
sed 's/t < length; ++t/t < length - 1; ++t/' "$C/cumsum_loop.cu" >short.cu
python3 "$KF_ROOT/tests/tools/emulate_refs.py" "$KFORGE" "$KF_ROOT" emu --cand short.cu 89 >emu.out 2>&1
contains "emulated: a loop one step short is caught" emu.out "^not ok 089_cumsum y: 120 elements, 3 bad"
# The emulators' programs kept (KF_EMU_EXE_CACHE): the file paths are their
# arguments, so the same candidate in another work folder runs the kept one;
# another text compiles anew.
EC="$T_TMP/ec"
KF_EMU_EXE_CACHE="$EC" python3 "$KF_ROOT/tests/tools/emulate_refs.py" "$KFORGE" "$KF_ROOT" k1 --cand "$C/cumsum_loop.cu" 89 >k1.out 2>&1
KF_EMU_EXE_CACHE="$EC" python3 "$KF_ROOT/tests/tools/emulate_refs.py" "$KFORGE" "$KF_ROOT" k2 --cand "$C/cumsum_loop.cu" 89 >k2.out 2>&1
check "kept program: both runs match the oracle, one program kept" sh -c \
	"grep -q '^ok 089_cumsum y: 120 elements, 0 bad' k1.out && grep -q '^ok 089_cumsum y: 120 elements, 0 bad' k2.out &&
	 test \$(ls '$EC' | grep -c '\.exe\$') -eq 1"
check "the second run compiled nothing, its text names no work folder" sh -c \
	"test -f k1/089_cumsum.exe && test ! -e k2/089_cumsum.exe && ! grep -q '$T_TMP\|k2/' k2/089_cumsum.cpp"
KF_EMU_EXE_CACHE="$EC" python3 "$KF_ROOT/tests/tools/emulate_refs.py" "$KFORGE" "$KF_ROOT" k3 --cand short.cu 89 >k3.out 2>&1
check "another text is another program (the short loop still caught)" sh -c \
	"grep -q '^not ok 089_cumsum y: 120 elements, 3 bad' k3.out && test \$(ls '$EC' | grep -c '\.exe\$') -eq 2"
