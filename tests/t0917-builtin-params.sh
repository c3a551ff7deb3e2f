#!/bin/sh
# Every built-in template refuses out-of-range parameters with an error
# naming itself (the proposer's params come from stored JSON, so render()
# must bound them), and refuses a problem it does not support.
. "$KF_ROOT/tests/lib.sh"
E="$KF_BUILD/tests/builtin_emit"
BAD='{"block":-1,"NT":-1,"BM":-1,"BN":-1,"BK":-1,"TM":-1,"TN":-1,"vec":-1,"COB":-1,"PX":-1,
"TW":-1,"TH":-1,"RPT":-1,"cot":-1,"bq":-1,"grid":-1,"items":-1,"chunks":-1,"kreg":-1,"WM":-1,
"WN":-1,"STAGES":-1,"SPLIT":-1,"ROWS":-1,"unroll":-1,"opt":-1,"tw":-1,"apt":-1,"ablock":-1,
"smem":-1,"VEC":-1,"ILP":-1,"UNROLL":-1}'
HUGE=$(echo "$BAD" | sed 's/-1/1000000/g')
for pair in "019 ew" "023 rowsoftmax" "047 reduce" "001 matmul" "001 matmul_tc" "004 gemv" \
	"006 matmul_splitk" "012 diagmm" "033 norm_stats" "036 norm_rms" "038 norm_row" "041 pool" \
	"041 pool_tile" "089 scan" "094 loss-mean" "095 loss-rows" "097 attn-flash" "063 conv" \
	"063 conv_igemm" "082 conv_dw" "057 convt" "081 convt_phase" "057 convt_igemm" "063 conv_tc" \
	"001 matmul_tce" "063 conv_tce" "081 conv_tce"; do
	set -- $pair
	spec=$(ls "$KF_ROOT"/problems/level1/"$1"_*/spec.json)
	expect_exit 0 "$2 renders $1 with its defaults" "$E" render "$spec" "$2"
	expect_exit 1 "$2 refuses negative parameters" "$E" render "$spec" "$2" "$BAD"
	contains "$2: the error names the template" "$T_TMP/err" "^${2%%_*}"
	expect_exit 1 "$2 refuses huge parameters" "$E" render "$spec" "$2" "$HUGE"
done
expect_exit 1 "a template refuses a problem of another family" "$E" render \
	"$(ls "$KF_ROOT"/problems/level1/019_*/spec.json)" conv_igemm
contains "saying it does not apply" "$T_TMP/err" "does not apply"
# a template decides on the spec's family and attrs, not on its number:
# level-2 problems that share a number with a level-1 one it realizes
# (014 once took the triangular SGEMM's) get none of the level-1 templates
: >l2.out
for n in 001 004 012 014 019 023 024 033 036 038 047 094 097; do
	for t in ew rowsoftmax reduce matmul matmul_tc matmul_tce gemv diagmm norm_stats norm_rms \
		norm_row loss-mean attn-flash; do
		"$E" render "$(ls "$KF_ROOT"/problems/level2/"$n"_*/spec.json)" "$t" >/dev/null 2>&1 &&
			echo "level2/$n $t" >>l2.out
	done
done
check "no level-1 template takes a level-2 problem by its number" test ! -s l2.out
[ -s l2.out ] && sed 's/^/#   /' l2.out
expect_exit 1 "an unknown template is an error" "$E" render \
	"$(ls "$KF_ROOT"/problems/level1/019_*/spec.json)" nosuch
contains "naming it" "$T_TMP/err" "unknown template 'nosuch'"

# Ideas written for a shape ("requires" in the catalogue) apply only there,
# and come first there, after the template's best-known plan (kernels/plans.c):
# round 1 of the large-K product (6) is the plan, then split-K, whatever the
# seed; a dense product (2) gets no triangle skipping.
spec6=$(ls "$KF_ROOT"/problems/level1/006_*/spec.json)
for seed in 1 2 3; do
	"$E" ideas "$spec6" 3 "$seed" >ideas6.txt 2>&1
	check "problem 6, seed $seed: the plan, then both split-K ideas" \
		sh -c 'test "$(head -n 1 ideas6.txt)" = "mm-tce-wgmma plan" &&
			test "$(tail -n 2 ideas6.txt | grep -c -- split-k)" -eq 2'
done
"$E" ideas "$(ls "$KF_ROOT"/problems/level1/002_*/spec.json)" 1000 1 >ideas2.txt 2>&1
check "problem 2 has matmul ideas" grep -qx mm-register-blocking ideas2.txt
lacks "but no triangle skipping" ideas2.txt '^mm-tri-skip$'
lacks "nor split-K" ideas2.txt 'split-k'
"$E" ideas "$(ls "$KF_ROOT"/problems/level1/050_*/spec.json)" 1000 1 >ideas50.txt 2>&1
check "a standard convolution has conv ideas" grep -qx conv-implicit-gemm ideas50.txt
lacks "but no depthwise-separable fusion" ideas50.txt '^conv-fuse-separable$'
"$E" ideas "$(ls "$KF_ROOT"/problems/level1/014_*/spec.json)" 2 1 >ideas14.txt 2>&1
check "an upper-triangular product tries triangle skipping first after the plan" \
	test "$(tr '\n' ' ' <ideas14.txt)" = "mm-tce-wgmma plan mm-tri-skip "
# Every "requires" names a shape some level-1 problem has, or (the graph
# template's ideas) some level-3 one (an unknown name would silently never
# apply).
"$KFORGE" catalogue --json >cat.json
for n in $(seq 1 100); do
	"$E" ideas "$(ls "$KF_ROOT"/problems/level1/$(printf %03d "$n")_*/spec.json)" 1000 1 2>/dev/null
done | sort -u >applied.txt
for s in "$KF_ROOT"/problems/level3/*/spec.json; do
	"$E" ideas "$s" 1000 1 2>/dev/null
done | sort -u >>applied.txt
python3 -c "
import json, sys
req = [i['id'] for i in json.load(open('cat.json')) if i.get('requires')]
got = set(open('applied.txt').read().split())
miss = [r for r in req if r not in got]
print('requires-ideas', len(req), 'never applied', miss)
sys.exit(1 if miss or len(req) < 4 else 0)" >req.out 2>&1
check "every idea with a requires applies somewhere ($(cat req.out))" test $? -eq 0
