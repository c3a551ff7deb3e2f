#!/bin/sh
# conv_epi on the GPU: the level-1 template conv_tce (collector/
# builtin_conv_epi*.c) rendered with its defaults for every convolution it
# supports, each evaluated by `kforge eval` (collect protocol: checks at
# fp32 tolerance, timed with the L2 flushed): every one must be correct.
# Prints each kernel's mean ms and, where this GPU has a committed eager
# baseline (problems/baselines/), the speedup, and their geometric mean.
# CONV_EPI_PROBLEMS="57 63" runs a subset.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
if ! "$KFORGE" gpu-info >/dev/null 2>&1; then
	skip "no GPU visible"
	exit 0
fi
E="$KF_BUILD/tests/builtin_emit"
NUMS=${CONV_EPI_PROBLEMS:-"50 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 87"}
gpu=$("$KFORGE" gpu-info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["name"])')
echo "# GPU: $gpu"
: >times
for n in $NUMS; do
	d=$(ls -d "$KF_ROOT"/problems/level1/"$(printf %03d "$n")"_*)
	"$E" render "$d/spec.json" conv_tce >"c$n.cu" || { nok "problem $n renders"; continue; }
	"$KFORGE" eval "$n" "c$n.cu" --json >"o$n.json" 2>"e$n.txt"
	r=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d.get("status"), d.get("time_mean_ms"), (d.get("detail") or d.get("engine_error") or "")[:200])
' "o$n.json" 2>/dev/null)
	echo "# $n $(basename "$d"): $r"
	case $r in
	correct*) ok "problem $n: conv_tce is correct" ;;
	*) nok "problem $n: conv_tce is correct"; tail -n 3 "e$n.txt" | sed 's/^/#   /' ;;
	esac
	echo "$(basename "$d") $r" >>times
done
# Speedups against the committed eager baselines of this GPU, if any.
python3 - "$KF_ROOT/problems/baselines" "$gpu" times <<'PY'
import json, math, os, sys
base, gpu, times = sys.argv[1:4]
f = os.path.join(base, gpu.replace(" ", "_"), "baseline_time_torch.json")
if not os.path.exists(f):
    print("# no eager baseline for %s" % gpu)
    sys.exit(0)
eager = json.load(open(f))["level1"]
logs = []
for line in open(times):
    name, status, ms = line.split()[:3]
    key = name.split("_", 1)
    key = "%d_%s.py" % (int(key[0]), key[1])
    if status != "correct" or key not in eager or ms == "None":
        continue
    sp = eager[key]["mean"] / float(ms)
    logs.append(math.log(sp))
    print("# %-70s %9.3f ms  eager %9.3f ms  %.2fx" % (name, float(ms), eager[key]["mean"], sp))
if logs:
    print("# geometric mean speedup vs eager over %d problems: %.3fx" % (len(logs), math.exp(sum(logs) / len(logs))))
PY
