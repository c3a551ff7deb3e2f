#!/bin/sh
# The graph template's double-precision path (f64, kernels/graph/
# builtin_graph_f64.c) on the GPU: every level-3 problem whose spec is
# flagged ill_conditioned, rendered as its plan renders it ({"fuse": 1,
# "f64": 1}) and evaluated by `kforge eval` (collect protocol, fp32
# tolerance 1e-4 against the double reference) at full size, must be
# correct. The fp32 tensor-core rendering of the same problem is evaluated
# beside for the record (not asserted: fp32 passes some flagged problems,
# 010's rounding stays inside the tolerance). The dmma rendering ({"fuse": 1,
# "f64": 1, "dmma": 1}: convs and linears on the fp64 tensor cores, the idea
# graph-fp64-tensor-core; dmma 2, sm_90's m16n8k16, its first point) must
# be correct too. Prints each kernel's mean ms
# and, where this GPU has a committed eager baseline, its speedup.
# F64_PROBLEMS="024 045" runs those numbers only.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
if ! "$KFORGE" gpu-info >/dev/null 2>&1; then
	skip "no GPU visible"
	exit 0
fi
E="$KF_BUILD/tests/builtin_emit"
gpu=$("$KFORGE" gpu-info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["name"])')
base="$KF_ROOT/problems/baselines/$(echo "$gpu" | tr ' ' _)/baseline_time_torch.json"
echo "# GPU: $gpu"
flagged=$(python3 - "$KF_ROOT/problems/level3" <<'PY'
import glob, json, os, sys
for d in sorted(glob.glob(os.path.join(sys.argv[1], "*", "spec.json"))):
    if isinstance(json.load(open(d)).get("ill_conditioned"), str):
        print(os.path.basename(os.path.dirname(d)))
PY
)
check "level 3 has flagged problems" test -n "$flagged"
# one NAME VARIANT PARAMS: status and mean ms of the rendering, "-" when it does not render
one() {
	f="$1-$2"
	if ! "$E" render "$KF_ROOT/problems/level3/$1/spec.json" graph "$3" >"$f.cu" 2>"$f.rerr"; then
		echo "unrendered -"
		return
	fi
	"$KFORGE" --db "$T_TMP/f64.db" eval "level3/$1" "$f.cu" --json --max-timing 2 --timeout 120 \
		>"$f.json" 2>"$f.err"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d.get("status"), d.get("time_mean_ms"), d.get("max_abs_err"))' "$f.json" 2>/dev/null || echo "error - -"
}
for b in $flagged; do
	n=${b%%_*}
	if [ -n "${F64_PROBLEMS:-}" ]; then
		case " $F64_PROBLEMS " in *" $n "*) ;; *) continue ;; esac
	fi
	r64=$(one "$b" f64 '{"fuse": 1, "f64": 1}')
	r64d=$(one "$b" dmma '{"fuse": 1, "f64": 1, "dmma": 1}')
	r64e=$(one "$b" dmma2 '{"fuse": 1, "f64": 1, "dmma": 2}')
	r32=$(one "$b" tc '{"fuse": 1, "tc": 1}')
	eager=$(python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    v = d["level3"][sys.argv[2] + ".py"]
    print(v["mean"] if isinstance(v, dict) else v)
except Exception:
    print("-")' "$base" "$(echo "$b" | sed 's/^0*//')" 2>/dev/null)
	echo "# $b f64: $r64; f64 dmma: $r64d; f64 dmma 2: $r64e; fp32 tc: $r32; eager ${eager} ms"
	case $r64 in
	correct*) ok "level3/$b: the f64 rendering is correct" ;;
	*) nok "level3/$b: the f64 rendering is correct"; tail -n 5 "$b-f64.err" | sed 's/^/#   /' ;;
	esac
	case $r64d in
	correct*) ok "level3/$b: the f64 dmma rendering is correct" ;;
	*) nok "level3/$b: the f64 dmma rendering is correct"; tail -n 5 "$b-dmma.err" | sed 's/^/#   /' ;;
	esac
	case $r64e in
	correct*) ok "level3/$b: the f64 dmma 2 rendering (m16n8k16) is correct" ;;
	*) nok "level3/$b: the f64 dmma 2 rendering (m16n8k16) is correct"; tail -n 5 "$b-dmma2.err" | sed 's/^/#   /' ;;
	esac
done
