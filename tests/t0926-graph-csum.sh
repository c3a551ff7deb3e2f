#!/bin/sh
# The graph template's fold of a convolution's spatial sum (collector/
# builtin_graph_csum.c): sum_o y[n][c][o] = sum_ci sum_t w[ci][c][t] (x's sum
# over the positions tap t reaches) + b[c] O, with positions in classes of
# equal tap masks along each axis. It is chosen for level-2 42 and 44 alone
# (fused, per node, tensor cores; not with fold=0), their specs' floor_flops
# count the folded work, they compile with NVRTC at full size, and at small
# sizes they match the evaluator and the oracle, as do synthetic graphs
# (transposed: strided, dilated, grouped, no bias, padded, output padding;
# forward: strided, padded, grouped, dilated; steps by constants; x's
# positions not a multiple of 4). A sum over some positions only, a conv
# output read twice and a step that is not by a constant do not fold;
# mutants of the tap table, the bias and the steps fail.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"

need_emulator

EMIT="$KF_BUILD/tests/builtin_emit"
folded_by csum_dot '{"fuse": 1}' '{"fuse": 0}' '{"tc": 1}' '{"fold": 0}'
check "every problem renders" test ! -s render.err
for f in fuse1 fuse0 tc1; do
	check "the fold is chosen for 42 and 44 alone ($f)" test "$(cat folds-$f)" = "042 044 "
done
check "and for none with fold=0" test ! -s folds-fold0
# level 3's specs carry no floor_flops: none of its nets may fold (the engine
# would reject the folded kernel as faster than its floor)
for d in "$KF_ROOT"/problems/level3/*/; do
	"$EMIT" render "$d/spec.json" graph '{"tc": 1}' 2>>render3.err | grep -q csum_dot && basename "$d"
done >folds3
check "no level-3 net folds (50 rendered)" test ! -s folds3 -a ! -s render3.err
d=$(ls -d "$KF_ROOT"/problems/level2/042_*)
check "42's floor_flops counts the folded work" python3 -c "
import json, sys
s = json.load(open('$d/spec.json'))
folded = 16 * 64 * 512 * 512 + 16 * 128 * 64 * 9 * 2   # x's sums; a product and a sum a tap
sys.exit(0 if folded <= s['floor_flops'] < folded + 10**4 and 'taps that reach' in s['floor_flops_why'] else 1)"
"$EMIT" render "$d/spec.json" graph '{"tc": 1}' >full.cu
contains "42 reads x once, a block per channel row" full.cu "g0_csum_x<<<1024, 256>>>"
lacks "and runs no convolution" full.cu "conv_tc|g0_conv"
"$KF_BUILD/tests/kfeval" --kforge "$KFORGE" --db "$T_TMP/cc.db" --compile-only \
	"level2/$(basename "$d")" full.cu >cc.jsonl 2>cc.err
contains "it compiles with NVRTC and passes the launch-plan check" cc.jsonl '"status": *"not_run"'

expect_exit 0 "gen.py --small writes 42 and 44" python3 "$KF_ROOT/problems/gen/level2/gen.py" --small small 42 44
python3 - small <<'PY'
import copy, glob, json, os, sys
sys.path.insert(0, os.path.join(os.environ["KF_ROOT"], "tests", "tools"))
import synth_problem
src = glob.glob(os.path.join(sys.argv[1], "problems/level2/042_*"))[0]
base = json.load(open(os.path.join(src, "spec.json")))

def mk(num, name, xshape, wshape, bias, graph):
    s = copy.deepcopy(base)
    s.pop("floor_flops", None)
    s.pop("floor_flops_why", None)
    ins = [i for i in s["inputs"] if i["name"] in ("x", "conv_transpose_weight") or
           (bias and i["name"] == "conv_transpose_bias")]
    if xshape:
        ins[0]["shape"] = xshape
    ins[1]["shape"] = wshape
    s["inputs"] = ins
    s["attrs"]["graph"] = graph
    synth_problem.write(src, num, name, s)

def conv(shape, ci, k, st, dl, pad, op, g, bias):
    ins = ["x", "conv_transpose_weight"] + (["conv_transpose_bias"] if bias else [])
    return {"out": "t0", "op": "conv", "in": ins, "shape": shape, "dims": 2, "kernel": k,
            "stride": st, "padding": pad, "dilation": dl, "groups": g, "transposed": True,
            "output_padding": op}

def red(o, i, fn, dims, shape, keep):
    return {"out": o, "op": "reduce", "in": [i], "shape": shape, "fn": fn, "dims": dims, "keepdim": keep}

tanh = lambda i, sh: {"out": "out", "op": "act", "in": [i], "shape": sh, "fn": "tanh"}
# x [3, 3, 7, 9] (63 positions), groups 3: weight [3, 2, 3, 2]; out 17 x 26
mk(911, "Fold_Strided_Grouped_Sum", [3, 3, 7, 9], [3, 2, 3, 2], False, [
    conv([3, 6, 17, 26], 3, [3, 2], [2, 3], [2, 1], [0, 0], [0, 0], 3, False),
    red("t1", "t0", "sum", [-1, -2], [3, 6], False), tanh("t1", [3, 6])])
mk(912, "Fold_Padded_Steps", None, [3, 6, 3, 3], True, [
    conv([3, 6, 7, 8], 3, [3, 3], [1, 1], [1, 1], [1, 1], [0, 0], 1, True),
    {"out": "t1", "op": "binary", "in": ["t0"], "shape": [3, 6, 7, 8], "fn": "mul", "const": 0.5},
    {"out": "t2", "op": "binary", "in": ["t1"], "shape": [3, 6, 7, 8], "fn": "sub", "const": 2.0, "swap": True},
    red("t3", "t2", "mean", [2, 3], [3, 6, 1, 1], True), tanh("t3", [3, 6, 1, 1])])
mk(913, "Fold_Output_Padding", None, [3, 6, 3, 3], True, [
    conv([3, 6, 16, 18], 3, [3, 3], [2, 2], [1, 1], [0, 0], [1, 1], 1, True),
    red("t1", "t0", "mean", [2, 3], [3, 6, 1, 1], True), tanh("t1", [3, 6, 1, 1])])
mk(914, "Keep_Some_Positions", None, [3, 6, 3, 3], True, [
    conv([3, 6, 9, 10], 3, [3, 3], [1, 1], [1, 1], [0, 0], [0, 0], 1, True),
    red("t1", "t0", "sum", [3], [3, 6, 9, 1], True), tanh("t1", [3, 6, 9, 1])])
mk(915, "Keep_Read_Twice", None, [3, 6, 3, 3], True, [
    conv([3, 6, 9, 10], 3, [3, 3], [1, 1], [1, 1], [0, 0], [0, 0], 1, True),
    red("t1", "t0", "mean", [2, 3], [3, 6, 1, 1], True),
    {"out": "t2", "op": "binary", "in": ["t0", "t1"], "shape": [3, 6, 9, 10], "fn": "sub"},
    red("out", "t2", "sum", [1, 2, 3], [3], False)])
# forward convs: weight [out, in / groups, k...]
fwd = lambda shape, k, st, dl, pad, g, bias: dict(conv(shape, 3, k, st, dl, pad, [0, 0], g, bias),
                                                  transposed=False)
mk(916, "Fold_Forward_Strided_Padded", None, [6, 3, 3, 3], True, [
    fwd([3, 6, 4, 4], [3, 3], [2, 2], [1, 1], [1, 1], 1, True),
    {"out": "t1", "op": "binary", "in": ["t0"], "shape": [3, 6, 4, 4], "fn": "div", "const": 4.0},
    red("t2", "t1", "sum", [-2, -1], [3, 6], False), tanh("t2", [3, 6])])
mk(917, "Fold_Forward_Grouped_Dilated", [3, 3, 7, 9], [6, 1, 2, 3], False, [
    fwd([3, 6, 5, 4], [2, 3], [1, 2], [2, 2], [0, 1], 3, False),
    {"out": "t1", "op": "act", "in": ["t0"], "shape": [3, 6, 5, 4], "fn": "neg"},
    red("t2", "t1", "mean", [2, 3], [3, 6, 1, 1], True), tanh("t2", [3, 6, 1, 1])])
mk(918, "Keep_Relu_Step", None, [3, 6, 3, 3], True, [
    conv([3, 6, 9, 10], 3, [3, 3], [1, 1], [1, 1], [0, 0], [0, 0], 1, True),
    {"out": "t1", "op": "act", "in": ["t0"], "shape": [3, 6, 9, 10], "fn": "relu"},
    red("t2", "t1", "mean", [2, 3], [3, 6, 1, 1], True), tanh("t2", [3, 6, 1, 1])])
PY
: >synth.out
for d in small/problems/level2/*/; do
	"$EMIT" render "$d/spec.json" graph '{}' | grep -q csum_dot && basename "$d" | cut -c1-3 >>synth.out
done
check "at small sizes, 42, 44 and the synthetic graphs named Fold fold" \
	test "$(tr '\n' ' ' <synth.out)" = "042 044 911 912 913 916 917 "
python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" small emu -j "$(par_jobs)" \
	--params '{"fuse": 1}' --params '{"fuse": 0}' --params '{"fold": 0}' >emu.out 2>&1
check "check_graph exits 0" test $? -eq 0
contains "folded, per-node and unfolded kernels match (10 graphs)" emu.out "^checked 30 kernels, 0 failed$"
grep '^not ok' emu.out | head -n 5 | sed 's/^/# /'
# teeth: every tap reaching every position (44 has a padded edge), the bias
# subtracted (42), the step by 0.5 dropped (44)
for m in '42|s += (double)cb[c]|s -= (double)cb[c]' '44|if (csk0[b * 9 + t])|if (1)' \
	'44|s = 5.00000000000000000e-01 * s|s = s'; do
	n=${m%%|*} m=${m#*|}
	python3 "$KF_ROOT/tests/tools/check_graph.py" "$KF_BUILD" small "mut$(echo "$m" | cksum | cut -c1-6)" \
		--params '{}' --sed "${m%%|*}" "${m#*|}" "$n" >mut.out 2>&1
	contains "mutant '${m#*|}' fails on $n" mut.out "^not ok .* [1-9][0-9]* bad"
done
