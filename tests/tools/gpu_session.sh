#!/bin/sh
# Runs named steps on a lent GPU host where nothing can be installed, from a
# bundle built here (scripts/gpu-bundle.sh; build-gpu/bundle.tar.xz is
# unpacked when gpu-bundle/ is missing). Each step's output goes to
# STEP.txt, all packed into $OUT/results.tar.gz (the store is kforge.db
# there unless DB is set).
#   tests/tools/gpu_session.sh info philox test-gpu check eager ...
# Steps: info philox test-gpu check eager compile bench search verify pack
#        site crosscheck list accept dataset release (see the case below for what each runs).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
FINAL=${OUT:-$ROOT/gpu-out}
OUT=$(mktemp -d /tmp/kf-gpu.XXXXXX)   # packed into $FINAL/results.tar.gz at the end
# Always the carried bundle: a warm host keeps an older gpu-bundle/ around.
if [ -f build-gpu/bundle.tar.xz ]; then rm -rf gpu-bundle && tar -xJf build-gpu/bundle.tar.xz; fi
export LD_LIBRARY_PATH="$ROOT/gpu-bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KFORGE_ROOT="$ROOT" PYTHONUNBUFFERED=1
K="$ROOT/gpu-bundle/kforge"
export KFORGE="$K"
DB=${DB:-$OUT/kforge.db}
PROBS=${PROBS:-level1}
CHECK_IDS=${CHECK_IDS:-}
t0=$(date +%s)

for step in "$@"; do
	s0=$(date +%s)
	log="$OUT/$step.txt"
	case "$step" in
	info) { nvidia-smi; "$K" --version; "$K" gpu-info; } >"$log" 2>&1 ;;
	philox) gpu-bundle/tests/record_philox_fixture >"$OUT/philox_gpu.json" 2>"$log" ;;
	test-gpu)
		BUILD=gpu-bundle timeout "${T_TESTGPU:-300}" tests/run-tests.sh --gpu >"$log" 2>&1
		;;
	check) timeout "${T_CHECK:-240}" "$K" problems check $CHECK_IDS >"$log" 2>&1 ;;
	eager | compile)
		timeout "${T_BASE:-240}" python3 tools/torch_baseline.py --variant "$step" \
			${BASE_PROBS:+--problems "$BASE_PROBS"} --out "$OUT/baselines" >"$log" 2>&1 ;;
	bench) BUILD=gpu-bundle BENCH_TIMEOUT=${T_BENCH:-200} BENCH_KEEP_DB="$OUT/bench.db" tests/bench.sh >"$log" 2>&1 ;;
	search)
		# shellcheck disable=SC2086
		timeout "${T_SEARCH:-300}" "$K" --db "$DB" search --problems "$PROBS" --proposer builtin \
			${SEARCH_ARGS:---rounds 2 --ideas 3 --impls 2 --seed 1} >"$log" 2>&1 ;;
	# shellcheck disable=SC2086
	verify) timeout "${T_VERIFY:-240}" "$K" --db "$DB" verify --top "${TOP:-2}" --problems "${VERIFY_PROBS:-$PROBS}" ${VERIFY_ARGS:-} >"$log" 2>&1 ;;
	# make dataset's pipeline (scripts/dataset.sh; ROUNDS IDEAS(=K) M MAX_TIMING TOP VERIFY_ARGS...
	# from the environment); the search resumes when run again.
	dataset) KFORGE="$K" K="${IDEAS:-4}" DB="$DB" OUT="$OUT/dist" timeout "${T_DATASET:-500}" sh scripts/dataset.sh "$PROBS" >"$log" 2>&1 ;;
	pack) "$K" --db "$DB" pack --version "${VERSION:-0.1.0}" -o "$OUT/dist" >"$log" 2>&1 ;;
	site) "$K" --db "$DB" site -o "$OUT/site" >"$log" 2>&1 ;;
	# Dumps are several GB per problem: RAM-backed by default.
	crosscheck) timeout "${T_CROSS:-200}" tools/crosscheck_all.sh "${CROSS_DUMP:-/dev/shm/kfx}" "${CROSS_PROBS:-}" >"$log" 2>&1
		rc=$?   # the step's status is the cross-check's, not the copy's
		cp "${CROSS_DUMP:-/dev/shm/kfx}"/*.json "$OUT/" 2>/dev/null
		(exit "$rc") ;;
	list) "$K" --db "$DB" problems list >"$log" 2>&1 ;;
	# A release's work on whichever GPU came (an H200 may be asked for and an H100 given):
	# the best kernel of every problem verified (already verified ones come from the store),
	# then the PyTorch baselines this GPU lacks under problems/baselines/ (verification first:
	# a call cut short keeps what the dataset needs most).
	release)
		gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
		bd="problems/baselines/$(printf %s "$gpu" | tr ' ' _)"
		{
			echo "GPU: $gpu"
			# shellcheck disable=SC2086
			timeout "${T_VERIFY:-300}" "$K" --db "$DB" verify --top "${TOP:-1}" --problems "$PROBS" \
				${VERIFY_ARGS:---no-category --no-sanitizer --max-timing 1}
			echo "verify: exit $?"
			for v in eager compile; do
				f=baseline_time_torch.json
				[ "$v" = compile ] && f=baseline_time_torch_compile_inductor_default.json
				if [ -f "$bd/$f" ]; then echo "$v baselines: in $bd"; continue; fi
				timeout "${T_BASE:-200}" python3 tools/torch_baseline.py --variant "$v" \
					--problems 1-100 --out "$OUT/baselines"
				echo "$v baselines: measured (exit $?)"
				ls "$OUT/baselines"/*/"$f" 2>/dev/null | while read -r b; do
					"$K" --db "$DB" baselines import "$b" --gpu "$gpu" --variant "$v"
				done
			done
		} >"$log" 2>&1 ;;
	accept) BUILD=gpu-bundle T_GPU=${T_TESTGPU:-200} tests/acceptance-gpu.sh "$OUT/accept" >"$log" 2>&1 ;;
	*) echo "unknown step $step" >"$log" ;;
	esac
	echo "step $step: exit $? in $(($(date +%s) - s0)) s" | tee -a "$OUT/steps.txt"
done
echo "total $(($(date +%s) - t0)) s" | tee -a "$OUT/steps.txt"
# The store leaves the host as one file: fold the WAL in first (a copy of
# kforge.db alone once lost a call's last minute of evaluations).
[ -f "$DB" ] && python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')" "$DB" 2>>"$OUT/steps.txt"
# One archive: the device tool brings back only a few files.
cp gpu-bundle/test-logs/*.log "$OUT/" 2>/dev/null
mkdir -p "$FINAL"
tar -C "$OUT" -czf "$FINAL/results.tar.gz" . && cp "$OUT/steps.txt" "$FINAL/"
