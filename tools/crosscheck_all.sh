#!/bin/sh
# Cross-checks problems against PyTorch at full size, one at a time (each
# problem's dump is written, checked and deleted before the next), in one
# Python process.
#   tools/crosscheck_all.sh [--level 1|2|3] [--json REPORT] [DUMPDIR] [FILTER]
#   e.g. tools/crosscheck_all.sh /dev/shm/kfx 19,23,33-40
#        tools/crosscheck_all.sh --level 2 --json out/crosscheck-level2.json /dev/shm/kfx
# Needs ./kforge (or $KFORGE), python3 (or $PYTHON) with torch and numpy, a GPU.
# The report: REPORT (default DUMPDIR/crosscheck.json); exit 1 when a problem fails.
# DRY_RUN=1 lists the problems (kforge ID, dump directory) without torch;
# DEVICE=cpu runs PyTorch on the CPU (small trees in tests); GPU_REF=1 compares
# with the GPU reference's sample instead of the CPU oracle's (level 3).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KFORGE=${KFORGE:-$ROOT/kforge}
LEVEL=1
REPORT=
while [ $# -gt 0 ]; do
	case "$1" in
	--level) [ $# -ge 2 ] || { echo "crosscheck_all.sh: --level needs 1, 2 or 3" >&2; exit 2; }
		LEVEL=$2; shift 2 ;;
	--json) [ $# -ge 2 ] || { echo "crosscheck_all.sh: --json needs a file" >&2; exit 2; }
		REPORT=$2; shift 2 ;;
	-h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "crosscheck_all.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
DUMP=${1:-${TMPDIR:-/tmp}/kforge-crosscheck}
FILTER=${2:-}
REPORT=${REPORT:-$DUMP/crosscheck.json}
mkdir -p "$DUMP"
DRY=
[ "${DRY_RUN:-0}" = 1 ] && DRY=--dry-run
exec "${PYTHON:-python3}" "$ROOT/tools/torch_crosscheck.py" --root "${KFORGE_ROOT:-$ROOT}" --level "$LEVEL" --dump "$DUMP" \
	--kforge "$KFORGE" --seed "${SEED:-1}" ${FILTER:+--problems "$FILTER"} --json "$REPORT" \
	${DEVICE:+--device "$DEVICE"} $DRY $([ "${GPU_REF:-0}" = 1 ] && echo --gpu-reference)
