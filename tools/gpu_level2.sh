#!/bin/sh
# Level 2 (or 3: LEVEL=3) on a GPU machine, in one go, within a time limit:
#   t0361        PyTorch agrees with every level-2 graph (small sizes, CPU;
#                level 3: t0365)
#   crosscheck   full-size cross-check of each problem against PyTorch
#                (tools/crosscheck_all.sh --level 2; the oracle's sample;
#                level 3: the GPU reference's sample, --gpu-reference)
#   check        kforge problems check: each GPU reference against the oracle
#   eager        baselines eager and eager_notf32 (tools/torch_baseline.py)
#   compile      baseline torch.compile with what is left of the time
# Every result goes under OUTDIR; a short summary is printed at the end
# (and written to OUTDIR/summary.txt). Exit 0 unless the arguments are wrong:
# the summary says what passed.
#
#   tools/gpu_level2.sh OUTDIR SECONDS [STEPS]     STEPS: a comma list (default all five)
#
# Environment: KFORGE (default gpu-bundle/kforge, else build/kforge), BUILD
# (default: KFORGE's directory under the repository: run-tests.sh uses
# BUILD/kforge), PROBLEMS (a filter: 1-100, 12,66,83-90), DUMP (full-size
# dumps, one problem at a time, up to 4 GiB; default /dev/shm/kforge-l2x
# where it has 8 GiB free, else /tmp), PYTHON (python3 with torch and numpy),
# CHECK_TIMEOUT (seconds per problems check, 300), WARM_JOBS (processes that
# compile for torch.compile's caches before its timed pass, 4; 0: none),
# KERNELBENCH (KernelBench's H100_Modal_*.json: the baselines beside them).
# Time: each step gets a share of what is left (weights t0361 1, crosscheck 4,
# check 2, eager 2, compile 3; what a step leaves goes to the next). Under a
# 10-minute limit per command, split the steps over calls, e.g.
# "t0361,crosscheck" then "check,eager" then "compile".
# A bundle: LD_LIBRARY_PATH=$PWD/gpu-bundle/lib BUILD=gpu-bundle
# KFORGE=$PWD/gpu-bundle/kforge tools/gpu_level2.sh "$OUT" 3000
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
usage() {
	echo "usage: tools/gpu_level2.sh OUTDIR SECONDS [t0361,crosscheck,check,eager,compile]" >&2
	exit 2
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage
OUTDIR=$1
LIMIT=$2
STEPS=$(echo "${3:-t0361,crosscheck,check,eager,compile}" | tr ',' ' ')
case "$LIMIT" in '' | *[!0-9]*) usage ;; esac
[ "$LIMIT" -ge 60 ] || { echo "gpu_level2.sh: SECONDS must be at least 60" >&2; exit 2; }
for s in $STEPS; do
	case "$s" in t0361 | crosscheck | check | eager | compile) ;; *) echo "gpu_level2.sh: unknown step $s" >&2; usage ;; esac
done

if [ -z "${KFORGE:-}" ]; then
	KFORGE=$ROOT/build/kforge
	[ -x "$ROOT/gpu-bundle/kforge" ] && KFORGE=$ROOT/gpu-bundle/kforge
fi
if [ -z "${BUILD:-}" ]; then
	BUILD=$(dirname "$KFORGE")
	BUILD=${BUILD#"$ROOT"/}
fi
export BUILD
[ -d "$ROOT/$BUILD/lib" ] && export LD_LIBRARY_PATH="$ROOT/$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
PYTHON=${PYTHON:-python3}
LEVEL=${LEVEL:-2}
case "$LEVEL" in 2 | 3) ;; *) echo "gpu_level2.sh: LEVEL must be 2 or 3" >&2; exit 2 ;; esac
PROBLEMS=${PROBLEMS:-}
if [ -z "${DUMP:-}" ]; then # a problem's dump is up to 4 GiB (55, 56, 59)
	DUMP=${TMPDIR:-/tmp}/kforge-l2x
	shm=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 {print $4}')
	[ "${shm:-0}" -gt 8388608 ] && DUMP=/dev/shm/kforge-l2x
fi
CHECK_TIMEOUT=${CHECK_TIMEOUT:-300}
export KFORGE PYTHON KFORGE_ROOT="$ROOT" KFORGE_DB="${KFORGE_DB:-$OUTDIR/kforge.db}"
mkdir -p "$OUTDIR" || exit 1
OUTDIR=$(cd "$OUTDIR" && pwd)
SUMMARY=$OUTDIR/summary.txt
: >"$SUMMARY"
START=$(date +%s)
END=$((START + LIMIT - 20)) # time for the summary

say() { echo "$*" | tee -a "$SUMMARY"; }
now() { date +%s; }
weight() {
	case "$1" in t0361) echo 1 ;; crosscheck) echo 4 ;; check) echo 2 ;; eager) echo 2 ;; compile) echo 3 ;; esac
}
# This step's share of the time left: its weight over the weights of the
# steps not yet run (what an earlier step leaves unused goes to later ones).
budget() {
	w=0
	for s in $TODO; do w=$((w + $(weight "$s"))); done
	left=$((END - $(now)))
	[ "$left" -gt 0 ] || { echo 0; return; }
	echo $((left * $(weight "$1") / w))
}
# run SECONDS LOG CMD...: CMD under a time limit, its output in LOG; the exit status
run() {
	t=$1 log=$2
	shift 2
	timeout -k 15 "$t" "$@" >"$log" 2>&1
}
rc_word() {
	case "$1" in 0) echo ok ;; 124 | 137) echo "stopped by its time limit" ;; *) echo "exit $1" ;; esac
}

say "gpu_level2: level $LEVEL, $(date -u +%FT%TZ), limit ${LIMIT}s, steps: $STEPS"
say "  kforge: $KFORGE ($("$KFORGE" --version 2>/dev/null | head -n 1))"
say "  GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
say "  torch: $("$PYTHON" -c 'import torch; print(torch.__version__, torch.version.cuda)' 2>&1 | tail -n 1)"

# The level-2 problems, as kforge IDs (no torch needed).
"$PYTHON" "$ROOT/tools/torch_crosscheck.py" --root "$ROOT" --level "$LEVEL" --dump "$DUMP" --dry-run \
	${PROBLEMS:+--problems "$PROBLEMS"} >"$OUTDIR/problems.txt" || { say "no problems match '$PROBLEMS'"; exit 1; }
NPROB=$(wc -l <"$OUTDIR/problems.txt")

TODO=$STEPS
for step in $STEPS; do
	b=$(budget "$step")
	TODO=${TODO#"$step"}
	TODO=${TODO# }
	t0=$(now)
	if [ "$b" -lt 10 ]; then
		say "$step: not run (no time left)"
		continue
	fi
	case "$step" in
	t0361)
		tt=t0361
		[ "$LEVEL" = 3 ] && tt=t0365
		run "$b" "$OUTDIR/$tt.log" "$ROOT/tests/run-tests.sh" "$tt"
		rc=$?
		cp "$ROOT/$BUILD/test-logs/$tt"-*.log "$OUTDIR/" 2>/dev/null
		say "$tt: $(rc_word $rc): $(grep -E 'passed, .* failed' "$OUTDIR/t0361.log" | tail -n 1) ($(($(now) - t0))s)"
		;;
	crosscheck)
		[ "$LEVEL" = 3 ] && export GPU_REF=1
		run "$b" "$OUTDIR/crosscheck.log" sh "$ROOT/tools/crosscheck_all.sh" --level "$LEVEL" \
			--json "$OUTDIR/crosscheck-level$LEVEL.json" "$DUMP" "$PROBLEMS"
		rc=$?
		rm -rf "$DUMP" # what a stopped run left
		sum=$("$PYTHON" -c '
import collections, json, sys
r = json.load(open(sys.argv[1]))
c = collections.Counter(x["status"] for x in r)
bad = [x["id"].split("/")[-1][:3] for x in r if x["status"] != "ok"]
print("%d of %s checked: %s%s" % (len(r), sys.argv[2], ", ".join("%s %d" % kv for kv in sorted(c.items())),
      ("; not ok: " + " ".join(bad)) if bad else ""))' "$OUTDIR/crosscheck-level$LEVEL.json" "$NPROB" 2>/dev/null)
		say "crosscheck: $(rc_word $rc): ${sum:-no report: $(tail -n 1 "$OUTDIR/crosscheck.log")} ($(($(now) - t0))s)"
		;;
	check)
		# One problem per process: a slow or failing reference costs only itself.
		: >"$OUTDIR/check.tsv"
		: >"$OUTDIR/check.log"
		stop=$((t0 + b))
		while read -r id _; do
			left=$((stop - $(now)))
			if [ "$left" -lt 5 ]; then
				printf '%s\tnot run\n' "$id" >>"$OUTDIR/check.tsv"
				continue
			fi
			[ "$left" -gt "$CHECK_TIMEOUT" ] && left=$CHECK_TIMEOUT
			echo "== $id" >>"$OUTDIR/check.log"
			timeout -k 10 "$left" "$KFORGE" problems check "$id" >>"$OUTDIR/check.log" 2>&1
			rc=$?
			case $rc in 0) v=ok ;; 4) v=differs ;; 3) v="no GPU" ;; 124 | 137) v=timeout ;; *) v="exit $rc" ;; esac
			printf '%s\t%s\n' "$id" "$v" >>"$OUTDIR/check.tsv"
		done <"$OUTDIR/problems.txt"
		sum=$(cut -f2 "$OUTDIR/check.tsv" | sort | uniq -c | awk '{n=$1; $1=""; printf "%s%s %d", sep, substr($0, 2), n; sep=", "}')
		bad=$(awk -F '\t' '$2 != "ok" && $2 != "not run" {split($1, a, "/"); printf " %s", substr(a[2], 1, 3)}' "$OUTDIR/check.tsv")
		say "check: $(wc -l <"$OUTDIR/check.tsv") of $NPROB: $sum${bad:+; not ok:$bad} ($(($(now) - t0))s)"
		;;
	eager | compile)
		v=eager,eager_notf32 warm=""
		# compile: WARM_JOBS (default 4) untimed processes fill inductor's caches first
		[ "$step" = compile ] && v=compile warm="--warm-jobs ${WARM_JOBS:-4}"
		# The script's own budget ends before the time limit: it stops cleanly.
		run "$b" "$OUTDIR/baselines-$step.log" "$PYTHON" "$ROOT/tools/torch_baseline.py" --root "$ROOT" \
			--level "$LEVEL" --variant "$v" --out "$OUTDIR/baselines" --record "$OUTDIR/baselines-$step.json" \
			--time-budget $((b > 60 ? b - 30 : b / 2)) ${PROBLEMS:+--problems "$PROBLEMS"} $warm
		rc=$?
		sum=$("$PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("%d done, %d failed, %d problem(s) not run, %s" % (len(r["done"]), len(r["failed"]), len(r["not_run"]),
      r["stopped"]))' "$OUTDIR/baselines-$step.json" 2>/dev/null)
		say "$step ($v): $(rc_word $rc): ${sum:-no record: $(tail -n 1 "$OUTDIR/baselines-$step.log")} ($(($(now) - t0))s)"
		;;
	esac
done

# The measured baselines against KernelBench's H100 numbers, where given.
for d in "$OUTDIR"/baselines/*/; do
	[ -d "$d" ] && [ -n "${KERNELBENCH:-}" ] || continue
	if "$PYTHON" "$ROOT/scripts/compare_baselines.py" "$d" --kernelbench "$KERNELBENCH" -o "$OUTDIR/compare-$(basename "$d").md" \
		2>>"$OUTDIR/compare.log"; then
		say "baselines vs KernelBench: $OUTDIR/compare-$(basename "$d").md"
		grep 'geomean' "$OUTDIR/compare-$(basename "$d").md" | tee -a "$SUMMARY"
	fi
done
say "gpu_level2: done in $(($(now) - START))s; results in $OUTDIR"
