#!/bin/sh
# Level-3 engine features on the GPU: loops in the launch block and many
# tensors. kforge eval (collect-v3, timed runs verified) of
#  - problem 89 (prefix sum) with one launch per time step (32768 launches
#    a block, element offsets x + t, a zeroed double scratch): correct;
#  - problem 91 (suffix sum) counting down in nested loops: correct;
#  - the same loop one step short: incorrect (the last column unwritten);
#  - a generated problem of 700 params (tests/tools/gen_many_tensors.py) with
#    a candidate reading every one: correct (the worker's buffers, inputs,
#    checksums and kept references for 702 tensors).
# Prints each median. Skips without a GPU.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
C="$KF_ROOT/tests/candidates"

if ! "$KFORGE" gpu-info >gpu.txt 2>&1; then
	skip "no GPU visible: $(head -n 1 gpu.txt)"
	exit 0
fi
sed 's/^/# /' gpu.txt

# field F of the JSON result in FILE
field() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r.get(sys.argv[2]))" "$1" "$2" 2>/dev/null; }
show() {
	python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
env = r.get('env') or {}
print(r.get('status'), r.get('failed_check'), r.get('time_median_ms'), '|', (r.get('detail') or '')[:300], '|', env.get('cupti_note', ''))" "$1" 2>/dev/null | sed 's/^/#   /'
}

# eval_case DESC PROBLEM FILE WANT: WANT is a status (correct, incorrect)
eval_case() {
	"$KFORGE" eval "$2" "$3" --json --max-timing 1 >"$4.json" 2>"$4.err"
	st=$(field "$4.json" status)
	show "$4.json"
	if [ "$st" = "$5" ]; then ok "$1: $st"; else nok "$1: $st, wanted $5"; tail -n 3 "$4.err" | sed 's/^/#   /'; fi
}

eval_case "problem 89, a launch per time step (32768)" 89 "$C/cumsum_loop.cu" loop89 correct
eval_case "problem 91, nested loops counting down" 91 "$C/cumsum_rev_loop.cu" loop91 correct
sed 's/t < length; ++t/t < length - 1; ++t/' "$C/cumsum_loop.cu" >short.cu
eval_case "problem 89, one step short" 89 short.cu short incorrect
check "the short loop leaves output unwritten" sh -c "grep -Eq '\"failed_check\": *\"(partial_write|output_mismatch)\"' short.json"

mkdir -p many/templates
python3 "$KF_ROOT/tests/tools/gen_many_tensors.py" many 700 many.cu
export KFORGE_ROOT="$T_TMP/many"
eval_case "700 params, a candidate reading all of them" level3/901 many.cu many correct
