#!/bin/sh
# conv_epi on the GPU, each core (CONV_EPI_CORES, default "wgmma mma wmma":
# the sm_90a wgmma core, the graph's; the mma.sync core, conv_tce's default;
# the older 3xTF32 wmma one): the level-1 template conv_tce
# (kernels/emit/builtin_conv_epi*.c) rendered with the core's defaults for
# every convolution it supports, and the level-2 graph template with tensor
# cores ({"tc": 1}; "mma": 1 for the mma core, conv_wmma for the wmma one)
# on the conv-led problems, each evaluated by `kforge eval` (collect
# protocol: checks at fp32 tolerance, timed with the L2 flushed): every one
# must be correct. Prints each kernel's mean ms and, where this GPU has a
# committed eager baseline (problems/baselines/), the speedup, and their
# geometric mean per core and level.
# By default each core takes a third of the problems, a different third per
# core, so the three cover every problem between them and `make test-gpu`
# fits one 10-minute device call (all of them took over 6 minutes);
# KF_TEST_LONG=1 runs every problem on every core. CONV_EPI_PROBLEMS="57 63"
# and CONV_EPI_L2="1 43" run those subsets whole ("" none).
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
if ! "$KFORGE" gpu-info >/dev/null 2>&1; then
	skip "no GPU visible"
	exit 0
fi
E="$KF_BUILD/tests/builtin_emit"
NUMS=${CONV_EPI_PROBLEMS-"50 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 87"}
L2=${CONV_EPI_L2-"1 4 11 13 17 32 43 47 100"}
CORES=${CONV_EPI_CORES:-"wgmma mma wmma"}
gpu=$("$KFORGE" gpu-info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["name"])')
echo "# GPU: $gpu"
: >times
# one LEVEL PROBLEM-DIR CORE TEMPLATE PARAMS
one() {
	b=$(basename "$2")
	f="c$1-$b-$3"
	"$E" render "$2/spec.json" "$4" "$5" >"$f.cu" || { nok "$1 $b renders ($3)"; return; }
	"$KFORGE" eval "$1/$b" "$f.cu" --json >"$f.json" 2>"$f.err"
	r=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d.get("status"), d.get("time_mean_ms"), (d.get("detail") or d.get("engine_error") or "")[:200])
' "$f.json" 2>/dev/null)
	echo "# $1 $b $3: $r"
	case $r in
	correct*) ok "$1 $b: $4 with the $3 conv core is correct" ;;
	*) nok "$1 $b: $4 with the $3 conv core is correct"; tail -n 3 "$f.err" | sed 's/^/#   /' ;;
	esac
	echo "$1 $3 $b $r" >>times
}
# pick SET INDEX: run the INDEX-th problem of a default list on core ci?
pick() { [ -n "$1" ] || every_nth $(($2 + ci)) 3 1; }
ci=0
for core in $CORES; do
	j=0
	for n in $NUMS; do
		j=$((j + 1))
		pick "${CONV_EPI_PROBLEMS+x}" "$j" || continue
		one level1 "$(ls -d "$KF_ROOT"/problems/level1/"$(printf %03d "$n")"_*)" "$core" conv_tce \
			"{\"core\": \"$core\"}"
	done
	case $core in
	wgmma) gp='"tc": 1' ;;
	mma) gp='"tc": 1, "mma": 1' ;;
	*) gp='"tc": 1, "conv_wmma": 1' ;;
	esac
	j=0
	for n in $L2; do
		j=$((j + 1))
		pick "${CONV_EPI_L2+x}" "$j" || continue
		one level2 "$(ls -d "$KF_ROOT"/problems/level2/"$(printf %03d "$n")"_*)" "$core" graph "{$gp}"
	done
	ci=$((ci + 1))
done
# Speedups against the committed eager baselines of this GPU, if any.
python3 - "$KF_ROOT/problems/baselines" "$gpu" times <<'PY'
import json, math, os, sys
base, gpu, times = sys.argv[1:4]
f = os.path.join(base, gpu.replace(" ", "_"), "baseline_time_torch.json")
if not os.path.exists(f):
    print("# no eager baseline for %s" % gpu)
    sys.exit(0)
eager = json.load(open(f))
logs = {}
for line in open(times):
    level, core, name, status, ms = line.split()[:5]
    key = name.split("_", 1)
    key = "%d_%s.py" % (int(key[0]), key[1])
    tab = eager.get(level, {})
    if status != "correct" or key not in tab or ms == "None":
        continue
    sp = tab[key]["mean"] / float(ms)
    logs.setdefault((level, core), []).append(math.log(sp))
    print("# %s %-5s %-66s %9.3f ms  eager %9.3f ms  %.2fx" % (level, core, name, float(ms), tab[key]["mean"], sp))
for (level, core), l in sorted(logs.items()):
    print("# %s, %s core: geometric mean speedup vs eager over %d problems: %.3fx"
          % (level, core, len(l), math.exp(sum(l) / len(l))))
PY
