#!/bin/sh
# The graph template's fold of a linear's feature sum (collector/
# builtin_graph_lsum.c): sum_j (x . W_j + b_j) = x . (sum_j W_j) + sum_j b_j
# through affine steps. It is chosen for level-2 14, 18 and 51 alone (every
# idea: fused, per node, tensor cores), compiles with NVRTC at full size,
# matches the evaluator and the oracle at small sizes (synthetic graphs
# too: per-feature and swapped steps, mean; non-affine steps, a reused GEMM
# output and a sum over the batch dim do not fold), and where the sum
# cancels (tests/tools/check_graph_cancel.py) it passes the fp32 tolerance
# that the fp32 GEMM path (fold=0) misses.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"

need_emulator

EMIT="$KF_BUILD/tests/builtin_emit"
# full size: the problems it folds, with each idea's parameters
folded_by lsum_dot '{"fuse": 1}' '{"fuse": 0}' '{"tc": 1}' '{"tc": 1, "mma": 1}' '{"fold": 0}'
check "every problem renders" test ! -s render.err
for f in fuse1 fuse0 tc1 tc1mma1; do
	check "the fold is chosen for 14, 18 and 51 alone ($f)" test "$(cat folds-$f)" = "014 018 051 "
done
check "and for none with fold=0" test ! -s folds-fold0

mkdir -p full
set --
for n in 014 018 051; do
	d=$(ls -d "$KF_ROOT"/problems/level2/${n}_*)
	"$EMIT" render "$d/spec.json" graph '{}' >"full/$n.cu"
	set -- "$@" "level2/$(basename "$d")" "full/$n.cu"
done
check "14 is two kernels: the weight's column sums, a dot product per row" \
	test "$(grep -c '<<<' full/014.cu)" -eq 2
"$KF_BUILD/tests/kfeval" --kforge "$KFORGE" --db "$T_TMP/cc.db" --compile-only "$@" >cc.jsonl 2>cc.err
check "they compile with NVRTC and pass the launch-plan check" python3 -c "
import json, sys
r = [json.loads(l) for l in open('cc.jsonl')]
bad = [(x['problem'], x.get('status'), (x.get('detail') or '')[:200]) for x in r if x.get('status') != 'not_run']
sys.exit(0 if len(r) == 3 and not bad else print('#', len(r), bad) or 1)"

# small sizes: 14, 18, 51 and synthetic graphs on 14's small shapes
expect_exit 0 "gen.py --small writes 14, 18 and 51" python3 "$KF_ROOT/problems/gen/level2/gen.py" \
	--small small 14 18 51
python3 - small <<'EOF'
import copy, glob, json, os, sys
sys.path.insert(0, os.path.join(os.environ["KF_ROOT"], "tests", "tools"))
import synth_problem
src = glob.glob(os.path.join(sys.argv[1], "problems/level2/014_*"))[0]
base = json.load(open(os.path.join(src, "spec.json")))
M, N = base["sizes"]["batch_size"], base["sizes"]["hidden_size"]

def mk(num, name, extra, graph):
    s = copy.deepcopy(base)
    s["inputs"] += [dict(name=n, role="param", dtype="float32", shape=sh,
                         dist=dict(kind="uniform", low=-1.0, high=1.0)) for n, sh in extra]
    s["attrs"]["graph"] = graph
    synth_problem.write(src, num, name, s)

def nd(out, op, ins, shape, **a):
    return dict(out=out, op=op, shape=shape, **{"in": ins}, **a)

lin = lambda ins: nd("t0", "linear", ins, [M, N])
rsum = lambda o, i, dims=[1], sh=[M, 1]: nd(o, "reduce", [i], sh, fn="sum", dims=dims, keepdim=True)
mk(901, "Fold_Affine_Mean", [("bias", ["hidden_size"]), ("s", ["hidden_size"]), ("c1", [1])], [
    lin(["x", "weight", "bias"]), nd("t1", "binary", ["t0", "s"], [M, N], fn="mul"),
    nd("t2", "binary", ["t1"], [M, N], fn="sub", const=0.25, swap=True),
    nd("t3", "act", ["t2"], [M, N], fn="neg"), nd("t4", "binary", ["t3", "c1"], [M, N], fn="add"),
    nd("t5", "reduce", ["t4"], [M], fn="mean", dims=[-1], keepdim=False),
    nd("out", "act", ["t5"], [M], fn="tanh")])
mk(902, "Fold_Rsub_Sum", [("s", ["hidden_size"])], [
    lin(["x", "weight"]), nd("t1", "binary", ["s", "t0"], [M, N], fn="sub"), rsum("t2", "t1"),
    nd("out", "binary", ["t2"], [M, 1], fn="mul", const=0.5)])
mk(903, "Keep_Relu_Sum", [], [lin(["x", "weight"]), nd("t1", "act", ["t0"], [M, N], fn="relu"),
                              rsum("out", "t1")])
mk(904, "Keep_Rdiv_Sum", [], [lin(["x", "weight"]),
                              nd("t1", "binary", ["t0"], [M, N], fn="div", const=2.0, swap=True),
                              rsum("out", "t1")])
mk(905, "Keep_Sum_Dim0", [], [lin(["x", "weight"]), rsum("out", "t0", [0], [1, N])])
mk(906, "Keep_Reuse_Sum", [], [lin(["x", "weight"]),
                               nd("t1", "binary", ["t0"], [M, N], fn="mul", const=2.0),
                               nd("t2", "binary", ["t1", "t0"], [M, N], fn="add"), rsum("out", "t2")])
EOF
: >synth.out
for d in small/problems/level2/90*/; do
	"$EMIT" render "$d/spec.json" graph '{}' | grep -q lsum_dot && basename "$d" | cut -c1-3 >>synth.out
done
check "of the synthetic graphs, the affine ones fold (901 902)" test "$(tr '\n' ' ' <synth.out)" = "901 902 "
python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" small emu -j "$(par_jobs)" \
	--params '{"fuse": 1}' --params '{"fuse": 0}' --params '{"fold": 0}' >emu.out 2>&1
check "check_graph exits 0" test $? -eq 0
contains "folded, per-node and unfolded kernels match (9 graphs)" emu.out "^checked 27 kernels, 0 failed$"
grep '^not ok' emu.out | head -n 5 | sed 's/^/# /'

# cancellation: outputs near 0.1 from GEMM outputs near 2600
for n in 14 18 902; do
	python3 "$KF_ROOT/tests/tools/check_graph_cancel.py" "$KF_BUILD" small "cancel$n" "$n" \
		'{"fold": 0}' '{"fuse": 1}' '{"fuse": 0}' >"cancel$n.out" 2>&1
	contains "$n cancels: the fp32 GEMM path misses" "cancel$n.out" '^not ok .* \{"fold": 0\} .* [1-9][0-9]* bad'
	contains "$n: the fold matches (fused)" "cancel$n.out" '^ok .* \{"fuse": 1\} .* 0 bad'
	contains "$n: the fold matches (per node)" "cancel$n.out" '^ok .* \{"fuse": 0\} .* 0 bad'
done
