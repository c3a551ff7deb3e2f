#!/bin/sh
# make dataset PROBLEMS=level1: search -> verify -> pack -> site -> release
# page (OUT/results.md), with sensible defaults. Overrides (environment or make variables):
#   PROBLEMS=level1   which problems (a level: level1, level2, level3; all: every
#                     level; ids 1,5,23 or level2/12; a range 1-10; names; KernelBench's
#                     file names 19_ReLU.py, level2/12_Gemm_Multiply_LeakyReLU.py)
#   STRATEGY=branch   branch or revise
#   ROUNDS=3 K=4 M=2  rounds; ideas per round; implementations per idea
#   SEED=1 JOBS=      seed; problems searched at once (default: 4, or twice the GPUs)
#   PROPOSER=         llm or builtin (default: llm when KFORGE_LLM_BASE_URL is set)
#   MODEL=            the LLM's model (else KFORGE_LLM_MODEL)
#   BUDGET_CALLS= BUDGET_TOKENS= BUDGET_TIME=   per problem (time in seconds)
#   TOTAL_TOKENS= TOTAL_TIME=                   for the whole search
#   COMPILE_ONLY=1    no GPU: compile and record only (verification is skipped)
#   MAX_TIMING=       seconds of kernel time after which a candidate's timed
#                     trials stop (at least 10 trials; search's default 1; 0: all 100)
#   PRUNE=            a candidate over PRUNE times PyTorch eager's time stops its
#                     timed trials after 3 (search's default 3; 0: never)
#   TOP=3             kernels per problem to verify
#   VERIFY_ARGS=      more `kforge verify` options (--no-category, --sanitizer-timeout S)
#   VERSION=          dataset version (default 0.1.0)
#   NAME=             dataset name, in the tarball's name kforge-NAME-VERSION
#                     (default kernelbench for level1, kernelbench-level2,
#                     kernelbench-level3, kernelbench-all, else kernelbench-custom)
#   DB=kforge.db OUT=dist
#   GOALS=            a JSON file of the release's goals (scripts/results_md.py
#                     --goals): the release page says, per level and goal, the
#                     measured figure and whether it is met
#   KERNELBENCH=      a directory of KernelBench's H100_Modal_*.json: the release
#                     page puts KernelBench's published H100 times beside
# Running it again resumes the search where it stopped. On a host with GPUs of
# several models the search runs on GPU 0's model (KFORGE_GPU_MODEL names
# another) and `kforge verify` verifies on each model in turn.
set -u
PROBLEMS=${1:-${PROBLEMS:-level1}}
KFORGE=${KFORGE:-./kforge}
DB=${DB:-kforge.db}
OUT=${OUT:-dist}
VERSION=${VERSION:-0.1.0}
# Two levels packed into one OUT would otherwise write the same tarball.
case $PROBLEMS in
level1) dflt_name=kernelbench ;;
level2 | level3 | all) dflt_name=kernelbench-$PROBLEMS ;;
*) dflt_name=kernelbench-custom ;;
esac
NAME=${NAME:-$dflt_name}
STRATEGY=${STRATEGY:-branch}
ROUNDS=${ROUNDS:-3}
K=${K:-4}
M=${M:-2}
SEED=${SEED:-1}
JOBS=${JOBS:-}
TOP=${TOP:-3}
PROPOSER=${PROPOSER:-}

if [ -z "$PROPOSER" ]; then
	if [ -n "${KFORGE_LLM_BASE_URL:-}" ]; then PROPOSER=llm; else PROPOSER=builtin; fi
fi
if [ "$PROPOSER" = builtin ]; then
	if [ -n "${KFORGE_LLM_BASE_URL:-}" ]; then
		echo "dataset: using the built-in proposer (PROPOSER=builtin)"
	else
		echo "dataset: no LLM endpoint configured (KFORGE_LLM_BASE_URL is not set): using the built-in proposer"
	fi
else
	echo "dataset: using the LLM proposer at ${KFORGE_LLM_BASE_URL:-?} (model ${MODEL:-${KFORGE_LLM_MODEL:-default}})"
fi

# step NAME CMD...: runs a kforge step; a command this build does not
# implement yet is reported as skipped, any other failure stops here.
step() {
	name=$1; shift
	echo "dataset: $name: $*"
	err=$(mktemp "${TMPDIR:-/tmp}/kforge-dataset.XXXXXX")
	"$@" 2>"$err"
	rc=$?
	cat "$err" >&2
	if [ "$rc" -eq 2 ] && grep -q "not yet implemented" "$err"; then
		echo "dataset: $name: SKIPPED: 'kforge $name' is not implemented in this build yet"
		rm -f "$err"
		return 0
	fi
	if [ "$rc" -eq 2 ]; then
		# A build whose command takes other options (a stub, an older kforge).
		echo "dataset: $name: SKIPPED: this build's 'kforge $name' refused the options above (usage error)"
		rm -f "$err"
		return 0
	fi
	rm -f "$err"
	if [ "$name" = verify ] && [ "$rc" -eq 4 ]; then
		# A verdict, not an error: the failed kernels are recorded and left out of "best".
		echo "dataset: verify: some kernels failed verification (recorded; left out of best)"
		return 0
	fi
	if [ "$rc" -ne 0 ]; then
		echo "dataset: $name: failed (exit $rc); fix it and run 'make dataset' again to resume" >&2
		exit "$rc"
	fi
}

set -- --problems "$PROBLEMS" --strategy "$STRATEGY" --rounds "$ROUNDS" --ideas "$K" \
	--impls "$M" --seed "$SEED" --proposer "$PROPOSER"
[ -n "$JOBS" ] && set -- "$@" --jobs "$JOBS"
[ -n "${MODEL:-}" ] && set -- "$@" --model "$MODEL"
[ -n "${BUDGET_CALLS:-}" ] && set -- "$@" --max-calls "$BUDGET_CALLS"
[ -n "${BUDGET_TOKENS:-}" ] && set -- "$@" --max-tokens "$BUDGET_TOKENS"
[ -n "${BUDGET_TIME:-}" ] && set -- "$@" --max-time "$BUDGET_TIME"
[ -n "${TOTAL_TOKENS:-}" ] && set -- "$@" --total-tokens "$TOTAL_TOKENS"
[ -n "${TOTAL_TIME:-}" ] && set -- "$@" --total-time "$TOTAL_TIME"
[ -n "${MAX_TIMING:-}" ] && set -- "$@" --max-timing "$MAX_TIMING"
[ -n "${PRUNE:-}" ] && set -- "$@" --prune-vs-eager "$PRUNE"
[ "${COMPILE_ONLY:-0}" = 1 ] && set -- "$@" --compile-only

# Everything is checked before anything is written: a bad PROBLEMS or
# option (kforge's one-line error, exit 2) or no GPU (exit 3) stops here
# with the store untouched.
"$KFORGE" --db "$DB" search "$@" --check >/dev/null || {
	rc=$?
	if [ "$rc" -eq 3 ]; then
		echo "dataset: search: no GPU or CUDA driver here (exit 3); run it on a GPU machine, or with COMPILE_ONLY=1 to compile and record only" >&2
	elif [ "$rc" -ne 2 ]; then
		echo "dataset: search --check: failed (exit $rc)" >&2
	fi
	exit "$rc"
}

# PyTorch baselines measured per GPU (tools/torch_baseline.py): imported before
# the search, whose proposer ranks ideas by their speedup over eager.
for f in "${KFORGE_ROOT:-.}"/problems/baselines/*/baseline_time_torch*.json; do
	[ -f "$f" ] || continue
	gpu=$(grep -o '"hardware": *"[^"]*"' "$f" | head -n 1 | sed 's/.*: *"//; s/"$//')
	case "$f" in *compile*) v=compile ;; *_notf32.json) v=eager_notf32 ;; *) v=eager ;; esac
	# Only PROBLEMS': another level's rows would join the site's fast_p and the dataset.
	[ -n "$gpu" ] && step baselines "$KFORGE" --db "$DB" baselines import "$f" --gpu "$gpu" --variant "$v" \
		--problems "$PROBLEMS"
done
# The search runs attached to the terminal (live progress on a TTY).
echo "dataset: search: $KFORGE --db $DB search $*"
"$KFORGE" --db "$DB" search "$@" || {
	rc=$?
	if [ "$rc" -eq 3 ]; then
		echo "dataset: search: no GPU or CUDA driver here (exit 3); run it on a GPU machine, or with COMPILE_ONLY=1 to compile and record only" >&2
	else
		echo "dataset: search: failed (exit $rc); run 'make dataset' again to resume" >&2
	fi
	exit "$rc"
}
if [ "${COMPILE_ONLY:-0}" = 1 ]; then
	echo "dataset: verify: SKIPPED: COMPILE_ONLY=1 (verification runs kernels on a GPU)"
else
	# shellcheck disable=SC2086
	step verify "$KFORGE" --db "$DB" verify --top "$TOP" --problems "$PROBLEMS" ${VERIFY_ARGS:-}
fi
mkdir -p "$OUT"
# The dataset, site and release page hold PROBLEMS, whatever else the
# store holds (earlier runs of other PROBLEMS).
step pack "$KFORGE" --db "$DB" pack --name "$NAME" --version "$VERSION" --problems "$PROBLEMS" -o "$OUT"
step site "$KFORGE" --db "$DB" site -o "$OUT/site" --dist "$OUT" --problems "$PROBLEMS"
# The release page (Markdown, a section per level) from the store and the tarball.
if ! command -v python3 >/dev/null 2>&1; then
	echo "dataset: results: SKIPPED: no python3 here (scripts/results_md.py writes $OUT/results.md)"
elif [ ! -f "$DB" ]; then
	echo "dataset: results: SKIPPED: no store at $DB"
else
	tarball="$OUT/kforge-$NAME-$VERSION.tar.zst"
	# From the tarball's store (PROBLEMS only) when there is one. kforge
	# reads the tarball (libarchive): GNU tar would need zstd(1) here.
	if [ -f "$tarball" ]; then
		set -- "$tarball" --version "$VERSION" -o "$OUT/results.md" --kforge "$KFORGE" --tarball "$tarball"
	else
		set -- "$DB" --version "$VERSION" -o "$OUT/results.md" --kforge "$KFORGE"
	fi
	[ -z "${KERNELBENCH:-}" ] || set -- "$@" --kernelbench "$KERNELBENCH"
	[ -z "${GOALS:-}" ] || set -- "$@" --goals "$GOALS"
	echo "dataset: results: python3 scripts/results_md.py $*"
	python3 "${KFORGE_ROOT:-.}/scripts/results_md.py" "$@" || {
		echo "dataset: results: failed; run 'make dataset' again to resume" >&2
		exit 1
	}
fi
step report "$KFORGE" --db "$DB" report
echo "dataset: done: store $DB, outputs in $OUT/"
