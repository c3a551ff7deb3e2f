#!/bin/sh
# Issue 42's sample check on a GPU host: N problems of a level drawn by SEED, PyTorch eager
# timed on them in this same call (tools/torch_baseline.py, into problems/baselines/ here,
# which `make dataset` imports), then `make dataset` with its defaults on them
# (scripts/dataset.sh: 3 rounds, 4 ideas, 2 implementations, verification of the top 3).
# Run again with the same DB to resume (the baselines are then not timed again).
#   tools/sample_check.sh LEVEL N SEED SECONDS     (DB=sample.db OUT=dist; KFORGE set,
#                                                   e.g. by `. scripts/gpu-env.sh`)
#   SAMPLE_ONLY=1 tools/sample_check.sh ...        prints the draw alone
# Prints the sample and the release page's fast_p rows; OUT holds the page and the
# dataset, OUT/sample.txt the problems, OUT/eager.json the eager times measured here.
set -u
[ $# -eq 4 ] || { echo "usage: tools/sample_check.sh LEVEL N SEED SECONDS" >&2; exit 2; }
L=$1 N=$2 SEED=$3 T=$4
case $L in 1 | 2 | 3) ;; *) echo "sample_check: LEVEL is 1, 2 or 3" >&2; exit 2 ;; esac
case "$N$SEED$T" in *[!0-9]*) echo "sample_check: N, SEED and SECONDS are integers" >&2; exit 2 ;; esac
DB=${DB:-sample.db} OUT=${OUT:-dist}
T0=$(date +%s)
# the draw: N of the level's problem numbers, by SEED (Python's Mersenne Twister)
nums=$(python3 - "$L" "$N" "$SEED" <<'PY'
import os, random, sys
lv, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = os.path.join(os.environ.get("KFORGE_ROOT", "."), "problems", "level" + lv)
ids = sorted(int(x.split("_")[0]) for x in os.listdir(d) if x[:3].isdigit())
print(",".join(str(i) for i in sorted(random.Random(seed).sample(ids, min(n, len(ids))))))
PY
) || exit 1
[ "${SAMPLE_ONLY:-0}" = 1 ] && { echo "$nums"; exit 0; }   # the draw alone (tests)
mkdir -p "$OUT"
echo "level $L, seed $SEED: problems $nums" | tee "$OUT/sample.txt"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
bf="${KFORGE_ROOT:-.}/problems/baselines/$(printf %s "$gpu" | tr ' ' _)/baseline_time_torch.json"
if [ ! -f "$DB" ]; then
	# eager in the same call: these replace the committed times of the sample in this
	# checkout, so the store's eager baselines for it are this call's
	timeout $((T / 4)) python3 tools/torch_baseline.py --level "$L" --problems "$nums" \
		--variant eager --time-budget $((T / 4 - 10)) >"$OUT/eager.log" 2>&1 ||
		{ echo "sample_check: eager baselines failed (exit $?; $OUT/eager.log)" >&2; exit 1; }
	cp "$bf" "$OUT/eager.json"
fi
left=$((T - ($(date +%s) - T0)))
probs=$(printf %s "$nums" | tr ',' '\n' | sed "s|^|level$L/|" | paste -sd, -)
DB="$DB" OUT="$OUT" VERSION=${VERSION:-0.2.0-sample} timeout "$left" sh scripts/dataset.sh "$probs" \
	>"$OUT/dataset.log" 2>&1
rc=$?
# timeout stops the shell; the search it started stops too (it resumes next time)
[ "$rc" = 124 ] && pkill -TERM -f -- "--db $DB " && sleep 5
echo "dataset: exit $rc after $(($(date +%s) - T0)) s"
grep -E '^\| NVIDIA .* \| (search|verified) \| eager \|' "$OUT/results.md" 2>/dev/null
exit "$rc"
