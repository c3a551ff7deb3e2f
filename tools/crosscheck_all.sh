#!/bin/sh
# Cross-checks problems against PyTorch at full size, one at a time (each
# problem's dump is written, checked and deleted before the next), in one
# Python process.
#   tools/crosscheck_all.sh [DUMPDIR] [FILTER]   e.g. tools/crosscheck_all.sh /dev/shm/kfx 19,23,33-40
# Needs ./kforge (or $KFORGE), python3 with torch and numpy, a GPU.
# The report: DUMPDIR/crosscheck.json.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KFORGE=${KFORGE:-$ROOT/kforge}
DUMP=${1:-/tmp/kforge-crosscheck}
FILTER=${2:-}
mkdir -p "$DUMP"
python3 "$ROOT/tools/torch_crosscheck.py" --root "$ROOT" --dump "$DUMP" --kforge "$KFORGE" \
	--seed "${SEED:-1}" ${FILTER:+--problems "$FILTER"} --json "$DUMP/crosscheck.json"
