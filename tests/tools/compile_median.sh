#!/bin/sh
# Median wall time of one sandboxed compile (`kforge __compile` child, NVRTC,
# ptxas -v): per good candidate of tests/candidates, over all of them, and
# over every problem's reference.cu (one compile each). Serial (a pool of
# one), so the number is the latency of one compile.
#   tests/tools/compile_median.sh [REPEATS] [BUILD]
set -eu
N=${1:-10}
B=${2:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KFC="$ROOT/$B/tests/kfcompile"
[ -x "$KFC" ] || { echo "build first: make test-build" >&2; exit 1; }
files=$(grep -l '^// expect: ok' "$ROOT"/tests/candidates/*.cu)
for f in $files; do
	printf '%-28s ' "$(basename "$f")"
	"$KFC" --exe "$ROOT/$B/kforge" --repeat "$N" "$f" | sed -n 's/^median //p'
done
printf '%-28s ' "all test candidates"
# shellcheck disable=SC2086
"$KFC" --exe "$ROOT/$B/kforge" --repeat "$N" $files | sed -n 's/^median //p'
set -- "$ROOT"/problems/level*/[0-9]*_*
if [ -d "$1" ]; then
	"$KFC" --exe "$ROOT/$B/kforge" --refs "$@" | sed -n 's/.*: ok \([0-9.]*\) ms.*/\1/p' |
		sort -n | awk '{ a[NR] = $1 } END { if (NR) printf "%-28s median %s ms, min %s, max %s over %d references\n", "problem references", a[int((NR + 1) / 2)], a[1], a[NR], NR }'
fi
