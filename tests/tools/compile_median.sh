#!/bin/sh
# Median wall time of one sandboxed compile (`kforge __compile` child, NVRTC,
# ptxas -v), per good candidate of tests/candidates and over all of them.
# Serial (a pool of one) so the number is the latency of one compile.
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
printf '%-28s ' "all"
# shellcheck disable=SC2086
"$KFC" --exe "$ROOT/$B/kforge" --repeat "$N" $files | sed -n 's/^median //p'
