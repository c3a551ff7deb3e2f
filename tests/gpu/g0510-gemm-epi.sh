#!/bin/sh
# gemm_epi_emit's tensor-core GEMMs (template matmul_tce) on the GPU: kforge
# eval (collect-v3: U[0,1) checks plus N(0,1) and U[-100,100) draws, timed
# runs verified) of the level-1 products with each core and split, every one
# correct; prints each median. The wgmma core needs sm_90a (compute
# capability 9.0): elsewhere only the mma.sync cases run. Skips without a GPU.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
E="$KF_BUILD/tests/builtin_emit"

if ! "$KFORGE" gpu-info >gpu.txt 2>&1; then
	skip "no GPU visible: $(head -n 1 gpu.txt)"
	exit 0
fi
sed 's/^/# /' gpu.txt
hopper=0
grep -q 'sm_90' gpu.txt && hopper=1

spec_of() { ls "$KF_ROOT"/problems/level1/"$(printf %03d "$1")"_*/spec.json; }
# CASES: problem:tparams-label, the label one of the tparams below
WG='{"core":"wgmma"}'
WG3='{"core":"wgmma","split":"3xtf32","BM":128,"BN":128,"WM":2,"WN":4}'
MM='{"core":"mma","BM":128,"BN":128,"WM":2,"WN":4}'
MM3='{"core":"mma","split":"3xtf32","BM":128,"BN":128,"WM":2,"WN":4}'
params_of() {
	case $1 in
	wg) echo "$WG" ;;
	wg3) echo "$WG3" ;;
	mma) echo "$MM" ;;
	*) echo "$MM3" ;;
	esac
}
CASES=""
for n in 1 2 3 6 8 13 14 16 17 18; do
	[ "$hopper" = 1 ] && CASES="$CASES $n:wg"
	CASES="$CASES $n:mma"
done
[ "$hopper" = 1 ] && CASES="$CASES 1:wg3 8:wg3 18:wg3"
CASES="$CASES 1:mma3 17:mma3"
[ "$hopper" = 1 ] || skip "not compute capability 9.0: the wgmma cases are left out"

printf '# %-5s %-5s %-10s %10s %10s\n' problem core status median_ms max_rel_err
for c in $CASES; do
	n=${c%%:*} lab=${c#*:}
	f=$(printf "p%03d-%s.cu" "$n" "$lab")
	if ! "$E" render "$(spec_of "$n")" matmul_tce "$(params_of "$lab")" >"$f" 2>err.txt; then
		nok "problem $n ($lab) renders: $(cat err.txt)"
		continue
	fi
	"$KFORGE" eval "$n" "$f" --json --max-timing 1 >"$f.json" 2>"$f.err"
	rc=$?
	line=$(python3 -c "
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print('none - -'); sys.exit(0)
print(r.get('status'), r.get('time_median_ms'), r.get('max_rel_err'))" "$f.json")
	set -- $line
	printf '# %-5s %-5s %-10s %10s %10s\n' "$n" "$lab" "$1" "$2" "$3"
	if [ "$rc" -eq 0 ] && [ "$1" = correct ]; then
		ok "problem $n, matmul_tce $lab: correct, $2 ms"
	else
		nok "problem $n, matmul_tce $lab: $1 (exit $rc)"
		python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
print(r.get('failed_check'), '|', (r.get('detail') or '')[:400])" "$f.json" 2>/dev/null | sed 's/^/#   /'
		tail -n 3 "$f.err" | sed 's/^/#   /'
	fi
done
