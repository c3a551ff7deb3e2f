#!/bin/sh
# Runs kforge's tests and ends with "N passed, N failed".
#   unit tests  : $BUILD/tests/test_* (cmocka, TAP output)
#   end-to-end  : tests/tNNNN-*.sh (TAP lines from tests/lib.sh)
#   GPU (--gpu) : tests/gpu/gNNNN-*.sh, skipped clearly when no GPU is visible
# Each file's output goes to $BUILD/test-logs/; failures are printed.
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
MODE=cpu
ONLY=""
for a in "$@"; do
	case "$a" in
	--gpu) MODE=gpu ;;
	--unit-only) MODE=unit ;;
	*) ONLY="$ONLY $a" ;;
	esac
done
export KFORGE="$ROOT/$BUILD/kforge" KF_ROOT="$ROOT" KF_BUILD="$ROOT/$BUILD"
export CMOCKA_MESSAGE_OUTPUT=TAP NO_COLOR=1
LOGS="$ROOT/$BUILD/test-logs"
mkdir -p "$LOGS"
pass=0; fail=0; skip=0

run_one() { # name, command...
	name=$1; shift
	log="$LOGS/$(basename "$name").log"
	t0=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	t1=$(date +%s)
	# cmocka prints skipped tests as "not ok N # SKIP": a skip, not a failure.
	s=$(grep -c '^\(not \)\{0,1\}ok .*# *[Ss][Kk][Ii][Pp]' "$log")
	sp=$(grep -c '^ok .*# *[Ss][Kk][Ii][Pp]' "$log")
	p=$(($(grep -c '^ok ' "$log") - sp))
	f=$(($(grep -c '^not ok ' "$log") - (s - sp)))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc" >>"$log"
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	status=ok
	[ "$f" -gt 0 ] && status=FAIL
	printf '%-48s %4d passed %3d failed %3d skipped  %3ds  %s\n' "$(basename "$name")" "$p" "$f" "$s" $((t1 - t0)) "$status"
	if [ "$f" -gt 0 ]; then
		echo "----- $log (last 40 lines)"
		tail -n 40 "$log"
		echo "-----"
	fi
}

selected() { # name
	[ -z "$ONLY" ] && return 0
	for o in $ONLY; do
		case "$1" in *"$o"*) return 0 ;; esac
	done
	return 1
}

if [ "$MODE" = gpu ]; then
	if ! "$KFORGE" gpu-info >/dev/null 2>&1; then
		echo "skipped: no GPU visible ($("$KFORGE" gpu-info 2>&1 | head -n 1))"
		echo "0 passed, 0 failed, 0 skipped"
		exit 0
	fi
	for t in tests/gpu/g[0-9]*.sh; do
		[ -f "$t" ] || continue
		selected "$t" && run_one "$t" sh "$t"
	done
else
	for t in "$BUILD"/tests/test_*; do
		[ -x "$t" ] || continue
		selected "$t" || continue
		if [ "${KF_VALGRIND:-0}" = 1 ]; then
			run_one "$t" valgrind -q --error-exitcode=9 --leak-check=full "$t"
		else
			run_one "$t" "$t"
		fi
	done
	if [ "$MODE" = cpu ]; then
		for t in tests/t[0-9]*.sh; do
			[ -f "$t" ] || continue
			selected "$t" && run_one "$t" sh "$t"
		done
	fi
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
