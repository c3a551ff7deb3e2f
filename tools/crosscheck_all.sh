#!/bin/sh
# Cross-checks problems against PyTorch one at a time (full-size inputs are
# large: each problem's dump is written, checked and deleted before the next).
#   tools/crosscheck_all.sh [DUMPDIR] [FILTER]   e.g. tools/crosscheck_all.sh /tmp/kfx 19,23,33-40
# Needs ./kforge (or $KFORGE), python3 with torch and numpy, a GPU.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KFORGE=${KFORGE:-$ROOT/kforge}
DUMP=${1:-/tmp/kforge-crosscheck}
FILTER=${2:-}
SEED=${SEED:-1}
mkdir -p "$DUMP"
fail=0
for d in "$ROOT"/problems/level1/[0-9]*/; do
	base=$(basename "$d")
	num=$(echo "$base" | sed 's/^0*//; s/_.*//')
	if [ -n "$FILTER" ] && ! python3 -c "
import sys; sys.path.insert(0, '$ROOT/tools'); import kfproblems
sys.exit(0 if kfproblems.parse_filter('$FILTER')($num, '$base') else 1)"; then
		continue
	fi
	"$KFORGE" problems inputs "$base" --out "$DUMP/$base" --seed "$SEED" >/dev/null || { fail=$((fail + 1)); continue; }
	python3 "$ROOT/tools/torch_crosscheck.py" --root "$ROOT" --dump "$DUMP" --problems "$num" \
		--json "$DUMP/$base.json" >"$DUMP/$base.log" 2>&1 || fail=$((fail + 1))
	grep -v '^1 checked' "$DUMP/$base.log"
	rm -rf "${DUMP:?}/$base"
done
echo "crosscheck done; $fail problem(s) failed; reports in $DUMP/*.json"
[ "$fail" -eq 0 ]
