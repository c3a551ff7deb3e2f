#!/bin/sh
# KernelBench level 2 (problems/gen/level2/gen.py): the 100 specs load, the committed
# files are what the generator writes, every reference.cu compiles with NVRTC
# and passes the launch-plan check, and at small sizes every reference.cu,
# run on the host (CUDA emulated), agrees element by element with the
# pure-Python graph evaluator (problems/gen/level2/graph_eval.py) and, where kforge
# has an oracle for family "graph", with the oracle.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
GEN="$KF_ROOT/problems/gen/level2/gen.py"

expect_exit 0 "problems list --level 2" "$KFORGE" problems list --level 2
check "it lists 100 level-2 problems" test "$(grep -c '^level2/' "$T_TMP/out")" -eq 100
expect_exit 0 "problems show level2/12" "$KFORGE" problems show level2/12
contains "family graph" "$T_TMP/out" "^family +graph"
contains "the linear layer's weight is a param" "$T_TMP/out" "^param +gemm_weight"
expect_exit 0 "a bare number is still level 1" "$KFORGE" problems show 12
contains "level1/012" "$T_TMP/out" "^level1/012_"

if ! command -v python3 >/dev/null 2>&1; then
	skip "python3 missing: generator checks and emulation"
	exit 0
fi
check "generated files are current (gen.py --check)" python3 "$GEN" --check
check "and from the committed reference.py files (--committed)" python3 "$GEN" --check --committed
# --check fails on a stale file
mkdir -p stale/problems && cp -r "$KF_ROOT/problems/level2" stale/problems/
sed -i "s/a \\* 0\\.1)/a * 0.2)/" stale/problems/level2/012_*/reference.cu
expect_exit 1 "--check fails on an edited reference.cu" python3 "$GEN" --root stale --committed --check
contains "and names it" "$T_TMP/err" "stale: .*012_Gemm_Multiply_LeakyReLU/reference.cu"
check "every spec is family graph with a graph and fp32 tolerance" python3 -c "
import glob, json, sys
bad = [f for f in glob.glob('$KF_ROOT/problems/level2/*/spec.json')
       if (lambda s: s['family'] != 'graph' or not s['attrs']['graph'] or s['tolerance'] != 'fp32'
           or s['attrs']['graph'][-1]['out'] != s['outputs'][0]['name'])(json.load(open(f)))]
sys.exit(print('#', bad) or 1 if bad else 0)"
check "degenerate: 9 23 38 80 83" python3 -c "
import glob, json, sys
d = sorted(json.load(open(f))['number'] for f in glob.glob('$KF_ROOT/problems/level2/*/spec.json')
           if 'degenerate' in json.load(open(f)))
sys.exit(0 if d == [9, 23, 38, 80, 83] else print('#', d) or 1)"

# NVRTC and the launch plan, all 100
if ! have_nvrtc; then
	skip "NVRTC not available: level-2 references not compiled"
else
	# (kfcompile --refs: the launch check against each spec, NVRTC for
	# sm_90a; its results kept across runs)
	"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --arch sm_90a --refs --pool "$(par_jobs)" --timeout 120 \
		"$KF_ROOT"/problems/level2/*/ >cc.txt 2>&1
	check "kfcompile compiled the 100 references" test $? -eq 0
	check "every reference compiles and passes the launch-plan check" \
		test "$(grep -c '/: ok ' cc.txt)" -eq 100
	grep -v '/: ok ' cc.txt | head -n 5 | cut -c1-300 | sed 's/^/# /'
fi

# small sizes: emulated references against the graph evaluator (and the oracle)
if ! command -v c++ >/dev/null 2>&1; then
	skip "c++ missing: no host emulation"
	exit 0
fi
expect_exit 0 "gen.py --small writes the small tree" python3 "$GEN" --small small
expect_exit 0 "kforge loads the small tree" env KFORGE_ROOT="$T_TMP/small" "$KFORGE" problems list --level 2
check "100 small problems" test "$(grep -c '^level2/' "$T_TMP/out")" -eq 100
expect_exit 0 "every small reference.cu agrees with the graph evaluator" \
	python3 "$KF_ROOT/tests/tools/emulate_level2.py" -j "$(par_jobs)" "$KFORGE" small emu
contains "all 100 emulated" "$T_TMP/out" "^emulated 100 problems, 0 failed$"
grep '^not ok' "$T_TMP/out" | head -n 5 | sed 's/^/# /'
if grep -q "^oracle: unavailable" "$T_TMP/out"; then
	skip "kforge has no CPU oracle for family graph (oracle/oracle_graph.c): oracle comparison not run"
else
	contains "and with the CPU oracle" "$T_TMP/out" "^oracle: compared 100$"
fi
# the comparison can fail: a small reference with a wrong constant
sed -i "s/a \\* 0\\.1)/a * 0.11)/" small/problems/level2/012_*/reference.cu
expect_exit 1 "a reference with a wrong negative_slope fails" \
	python3 "$KF_ROOT/tests/tools/emulate_level2.py" "$KFORGE" small emu2 12
contains "names the problem" "$T_TMP/out" "^not ok 012_Gemm_Multiply_LeakyReLU .*python: [1-9][0-9]* bad"
