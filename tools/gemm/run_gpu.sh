#!/bin/bash
# One GPU session's worth of GEMM work (the device tool's machine, or any
# H100/H200 box): builds gemm_bench unless a built one is given, checks
# accuracy at a small size (with mismatch diagnostics), then checks and times
# every variant at N = 4096 next to cuBLAS, dumps SASS instruction counts,
# and optionally runs kforge's own eval on chosen candidates.
#
#   tools/gemm/run_gpu.sh [-b BENCH] [-k KFORGE] [-e "FILE[@ARCH] ..."] [-p "FILE[@ARCH] ..."] [-o OUT] VARIANT...
# -e: kforge eval of these ("all": every variant that ran); -p: an Nsight Compute profile of these (clocks left alone).
# VARIANT is FILE[@ARCH] as gemm_bench takes it. Results land in OUT (default
# $OUT or ./gemm-out): gpu.txt, bench.txt, small.txt, sass.txt, sass.tar.gz, eval.txt, ncu.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bench="" kf="" evals="" prof="" out=${OUT:-gemm-out}
while getopts b:k:e:p:o: o; do
	case $o in
	b) bench=$OPTARG ;;
	k) kf=$OPTARG ;;
	e) evals=$OPTARG ;;
	p) prof=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv 2>&1 | tee "$out/gpu.txt"
if [ -z "$bench" ]; then
	bench=/tmp/gemm_bench
	nvcc -O3 -std=c++17 -arch=sm_90a -o "$bench" "$here/gemm_bench.cu" -lcublas -lnvrtc -lcuda || exit 1
fi
cub=/tmp/gemm-cubins
mkdir -p "$cub"
# One process per variant at the small size: a crash (illegal instruction,
# misaligned address) ends only its own run, and that variant is left out below.
echo "== small-size check (N = 520, ragged edges)"
ok=()
for v in "$@"; do
	timeout 40 "$bench" --n 520 --no-time --no-cublas "$v" 2>&1 | tee -a "$out/small.txt"
	if [ "${PIPESTATUS[0]}" = 0 ]; then ok+=("$v"); else echo "!! $v crashed or hung: left out" | tee -a "$out/small.txt"; fi
done
echo "== N = 4096"
timeout 200 "$bench" --n 4096 --trials 30 --cubin-dir "$cub" "${ok[@]}" 2>&1 | tee "$out/bench.txt"
{
	for f in "$cub"/*.cubin; do
		b=$(basename "$f" .cubin)
		s=/tmp/$b.sass
		cuobjdump -sass "$f" >"$s" 2>&1
		printf '%-30s HGMMA %5d  HMMA %5d  LDS %5d  LDSM %4d  LDGSTS %4d  BAR %3d  LDL/STL %d\n' "$b" \
			"$(grep -c HGMMA "$s")" "$(grep -c ' HMMA' "$s")" "$(grep -c ' LDS' "$s")" "$(grep -c LDSM "$s")" \
			"$(grep -c LDGSTS "$s")" "$(grep -c ' BAR' "$s")" "$(grep -cE ' (LDL|STL)' "$s")"
	done
} 2>&1 | tee "$out/sass.txt"
tar -czf "$out/sass.tar.gz" -C /tmp $(cd /tmp && ls *.sass) 2>/dev/null
[ "$evals" = all ] && evals="${ok[*]}"
if [ -n "$kf" ] && [ -n "$evals" ]; then
	for v in $evals; do
		case " ${ok[*]} " in *" $v "*) ;; *) echo "== $v: skipped (crashed or hung above)"; continue ;; esac
		f=${v%@*} a=
		[ "$v" != "$f" ] && a="--arch ${v#*@}"
		b=$(basename "$f" .cu)
		echo "== kforge eval 1 $f $a"
		# shellcheck disable=SC2086
		timeout 45 "$kf" --db /tmp/k.db eval 1 "$f" $a --json >"/tmp/eval-$b.json" 2>"/tmp/eval-$b.err"
		echo "exit $?"
		{ echo "== $v"; cat "/tmp/eval-$b.json" "/tmp/eval-$b.err"; } >>"$out/eval.txt"
		grep -E '"status"|"time_median_ms"|"time_mean_ms"|"max_abs_err"|"max_rel_err"|"failed_check"|"detail"' "/tmp/eval-$b.json" | head -20
		tail -3 "/tmp/eval-$b.err"
	done
fi
for v in $prof; do
	k=$(basename "${v%@*}" .cu)
	echo "== ncu $v" | tee -a "$out/ncu.txt"
	timeout 120 ncu --clock-control none -k "regex:$k" -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
		--section WarpStateStats --section SchedulerStats --print-details all \
		"$bench" --n 4096 --no-check --no-cublas --trials 1 --warmup 0 "$v" >>"$out/ncu.txt" 2>&1
	echo "exit $?" >>"$out/ncu.txt"
done
