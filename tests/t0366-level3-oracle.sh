#!/bin/sh
# The CPU oracle on KernelBench level 3 (oracle/oracle_graph*.c): at small
# sizes (problems/gen/level3/gen.py --small), on every level-3 problem, the oracle's
# sample of the output (`kforge problems inputs`) agrees with the pure-Python
# float64 graph evaluator (problems/gen/level2/graph_eval.py) on the same inputs,
# within 1e-9 (both compute in double); and the comparison fails where the
# evaluator is mutated (LSTM gates i and f swapped, the causal mask's
# diagonal moved), so it can see a wrong recurrence or mask.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
CMP="$KF_ROOT/tests/tools/oracle_level3.py"

if ! command -v python3 >/dev/null 2>&1; then
	skip "python3 missing: level-3 oracle comparison"
	exit 0
fi
expect_exit 0 "gen.py --small writes the small tree" python3 "$KF_ROOT/problems/gen/level3/gen.py" --small small
NP=$(ls -d small/problems/level3/*/ | wc -l)
check "the small tree has the level-3 problems" test "$NP" -ge 49
expect_exit 0 "the oracle agrees with the graph evaluator on every small level-3 problem" \
	python3 "$CMP" -j "$(par_jobs)" "$KFORGE" small cmp
contains "all of them" "$T_TMP/out" "^compared $NP problems, 0 failed$"
grep '^not ok' "$T_TMP/out" | head -n 5 | sed 's/^/# /'
cp "$T_TMP/out" all.txt
contains "deep graphs (dense mode) among them: ResNet101" all.txt "^ok 010_ResNet101: "
contains "and the 1793-node RNN" all.txt "^ok 034_VanillaRNNHidden: "
contains "and SwinV2 (const, take, roll, compare, a mask operand)" all.txt "^ok 030_SwinTransformerV2: "

# mutations of the evaluator must make the comparison fail
mkdir -p mut1 mut2
sed 's/i_, f_ = sig(gx(0, j) + gh(0, j)), sig(gx(1, j) + gh(1, j))/f_, i_ = sig(gx(0, j) + gh(0, j)), sig(gx(1, j) + gh(1, j))/' \
	"$KF_ROOT/problems/gen/level2/graph_eval.py" >mut1/graph_eval.py
check "mutation 1 edits the LSTM gates" test -n "$(grep 'f_, i_ = sig' mut1/graph_eval.py)"
expect_exit 1 "LSTM gates i and f swapped: the comparison fails" \
	python3 "$CMP" --evaluator mut1 "$KFORGE" small cmp1 35 37
contains "on both LSTM problems" "$T_TMP/out" "^compared 2 problems, 2 failed$"
sed 's/hit = j - i >= dg if/hit = j - i >= dg + 1 if/' "$KF_ROOT/problems/gen/level2/graph_eval.py" >mut2/graph_eval.py
check "mutation 2 edits the mask" test -n "$(grep 'dg + 1 if' mut2/graph_eval.py)"
expect_exit 1 "causal mask one diagonal off: the comparison fails" \
	python3 "$CMP" --evaluator mut2 "$KFORGE" small cmp2 43
contains "on MinGPT's attention" "$T_TMP/out" "^not ok 043_"
