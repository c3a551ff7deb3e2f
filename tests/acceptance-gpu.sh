#!/bin/sh
# The engine's acceptance numbers on a GPU host (issue 4), in one go:
#   1. make test-gpu (the adversarial suite)      -> DIR/gpu.txt (+ logs)
#   2. make bench over level 1, timed trials capped at 1 s of kernel time (at
#      3 s, 190 s of bench reached 58 of the 100)  -> DIR/bench.txt
#   3. repeatability: one kernel, 5 separate `kforge eval` runs, max/min of means
#   4. CUPTI vs ncu gpu__time_duration for 3 kernels -> DIR/numbers.txt
# Usage: tests/acceptance-gpu.sh DIR   (BUILD=gpu-bundle for a bundle)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
OUTD=${1:-acceptance}
mkdir -p "$OUTD"
K="$ROOT/$BUILD/kforge"
KFE="$ROOT/$BUILD/tests/kfeval"
A="$ROOT/tests/candidates/adversarial"
export KFORGE_ROOT="$ROOT" PYTHONUNBUFFERED=1
N="$OUTD/numbers.txt"
: >"$N"
{ nvidia-smi -L; "$K" gpu-info; } >>"$N" 2>&1

BUILD=$BUILD timeout "${T_GPU:-200}" tests/run-tests.sh --gpu >"$OUTD/gpu.txt" 2>&1
cp "$ROOT/$BUILD"/test-logs/g*.log "$OUTD/" 2>/dev/null

echo "== repeatability: 5 separate kforge eval runs of 20_honest_relu_vec4 (level1/019)" >>"$N"
for i in 1 2 3 4 5; do
	timeout 60 "$K" --db /tmp/kf-rep.db eval 19 "$A/20_honest_relu_vec4.cu" --force --json 2>>"$N" |
		python3 -c "import json,sys; d=json.load(sys.stdin); print(d['time_mean_ms'], d['cupti_mean_ms'], d['status'])" >>"$OUTD/rep.txt"
done
cat "$OUTD/rep.txt" >>"$N"
python3 -c "
v=[float(l.split()[0]) for l in open('$OUTD/rep.txt') if l.split() and l.split()[0] != 'None']
print('means (ms):', v); print('max/min = %.4f' % (max(v)/min(v)) if v else 'no data')" >>"$N" 2>&1

echo "== CUPTI vs ncu gpu__time_duration (median of launches 10-19 of each kernel)" >>"$N"
timeout 120 "$KFE" --kforge "$K" --db /tmp/kf-cu.db --force 19 "$A/20_honest_relu_vec4.cu" \
	47 "$A/21_honest_sum_dim1.cu" 23 "$A/22_honest_softmax.cu" >"$OUTD/cupti.jsonl" 2>>"$N"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for kn in "19 20_honest_relu_vec4.cu relu_vec4" "47 21_honest_sum_dim1.cu sum_dim1" "23 22_honest_softmax.cu softmax_rows"; do
	set -- $kn
	KFORGE_NO_CUPTI=1 timeout 150 "$NCU" --target-processes all --clock-control none --print-units base \
		--metrics gpu__time_duration.sum -k "regex:^$3\$" --launch-skip 9 --launch-count 10 --csv \
		"$KFE" --kforge "$K" --db /tmp/kf-ncu.db --force "$1" "$A/$2" >"$OUTD/ncu-$3.csv" 2>&1
done
python3 - "$OUTD" >>"$N" 2>&1 <<'PY'
import csv, json, statistics, sys, glob
d = sys.argv[1]
cu = {}
for l in open(d + "/cupti.jsonl"):
    r = json.loads(l)
    cu[r["file"].split("/")[-1]] = r
for name, f in (("relu_vec4", "20_honest_relu_vec4.cu"), ("sum_dim1", "21_honest_sum_dim1.cu"), ("softmax_rows", "22_honest_softmax.cu")):
    vals = []
    try:
        lines = [l for l in open("%s/ncu-%s.csv" % (d, name)) if l.startswith('"')]
        for row in csv.DictReader(lines):
            if row.get("Metric Name") == "gpu__time_duration.sum":
                vals.append(float(row["Metric Value"].replace(",", "")) / 1e6)
    except Exception as e:
        print(name, "ncu parse failed:", e)
    r = cu.get(f, {})
    c = r.get("cupti_median_ms"); ev = r.get("time_median_ms")
    if vals and c:
        n = statistics.median(vals)
        print("%-13s ncu median %.4f ms (%d launches)  CUPTI median %.4f ms  events median %.4f ms  CUPTI/ncu = %.4f" % (name, n, len(vals), c, ev or 0, c / n))
    else:
        print(name, "no comparison: ncu values", vals[:3], "cupti", c, r.get("status"), r.get("detail", "")[:200])
PY

BUILD=$BUILD BENCH_TIMEOUT=${BENCH_TIMEOUT:-240} BENCH_MAX_TIMING_S=${BENCH_MAX_TIMING_S:-1} tests/bench.sh >"$OUTD/bench.txt" 2>&1
tail -n 8 "$OUTD/bench.txt" >>"$N"
