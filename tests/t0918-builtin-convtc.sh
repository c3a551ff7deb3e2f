#!/bin/sh
# The tensor-core convolution template conv_tc (kernels/builtin_convtc.c):
# it applies to exactly the groups == 1 forward convolutions; every one
# renders (defaults, its catalogue ideas, tilings with several pixels or
# several k rows per thread), passes the launch check at full size and
# compiles with NVRTC for sm_90; emulated on the CPU over specs shrunk by
# conv_small_root.py, the kernels match the oracle, and kernels broken on
# purpose (no lo terms, nonzero padding) do not.
. "$KF_ROOT/tests/lib.sh"

TOOLS="$KF_ROOT/tests/tools"
E="$KF_BUILD/tests/builtin_emit"
NUMS="50 54 55 56 59 60 62 63 66 67 76 80 87"
if [ ! -d "$KF_ROOT/problems/level1" ]; then
	skip "no problems/ in this tree"
	exit 0
fi
need_emulator

spec_of() { ls "$1"/problems/level1/"$(printf %03d "$2")"_*/spec.json; }

got=""
for n in $(seq 1 100); do
	"$E" render "$(spec_of "$KF_ROOT" "$n")" conv_tc >/dev/null 2>&1 && got="$got $n"
done
check "conv_tc applies to exactly$got" test "$got" = " $NUMS"
for n in 57 82 86; do
	expect_exit 1 "conv_tc refuses problem $n (transposed, depthwise, separable)" \
		"$E" render "$(spec_of "$KF_ROOT" "$n")" conv_tc
	contains "saying it does not apply" "$T_TMP/err" "does not apply"
done

# Tilings beyond the defaults: BM > NT (two pixels a thread), NT > BM (8
# threads share a pixel), BK 16, a 96-wide channel tile.
ALT1='{"BM": 128, "BN": 32, "BK": 16, "WM": 1, "WN": 2}'
ALT2='{"BM": 32, "BN": 64, "BK": 16, "WM": 2, "WN": 4}'
ALT3='{"BM": 64, "BN": 96, "BK": 32, "WM": 4, "WN": 2}'
ALT4='{"BM": 128, "BN": 128, "BK": 32, "WM": 4, "WN": 2}'
alt() { # alt I: the (I mod 4)-th of them
	case $(($1 % 4)) in
	0) echo "$ALT1" ;;
	1) echo "$ALT2" ;;
	2) echo "$ALT3" ;;
	*) echo "$ALT4" ;;
	esac
}

# Full size: render (defaults, two of the tilings above in turn, the
# ideas), launch check, NVRTC.
mkdir -p full fix ideas
j=0
for n in $NUMS; do
	s=$(spec_of "$KF_ROOT" "$n")
	p=$(printf p%03d "$n")
	cp "$s" "fix/$p.json"
	i=0
	for par in '{}' "$(alt "$j")" "$(alt $((j + 1)))"; do
		{ echo "// problem: $p"; "$E" render "$s" conv_tc "$par"; } >"full/$p-$i.cu" ||
			nok "problem $n renders with $par"
		i=$((i + 1))
		# make test: the defaults, one tiling for every other problem
		if ! long_tier && { [ "$i" -eq 2 ] || [ $((j % 2)) -eq 1 ]; }; then break; fi
	done
	j=$((j + 1))
	# the ideas of every third problem (make test-long: all)
	every_nth "$j" 3 1 || continue
	rm -f ideas/*
	"$E" all "$s" ideas 2 1 >/dev/null 2>&1
	c=0
	for f in ideas/*-conv-3xtf32-* ideas/*-conv-tc-*; do
		[ -f "$f" ] || continue
		{ echo "// problem: $p"; cat "$f"; } >"full/$p-$(basename "$f")"
		c=$((c + 1))
	done
	check "problem $n: the conv_tc ideas render ($c kernels)" test "$c" -ge 3
done
# NVRTC: the tilings and ideas rendered above, the defaults of every other
# problem (make test-long: all; all of them are emulated below)
set --
j=0
for f in full/*.cu; do
	case "$f" in
	*-0.cu) every_nth "$j" 2 1 && set -- "$@" "$f"; j=$((j + 1)) ;;
	*) set -- "$@" "$f" ;;
	esac
done
total=$#
"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --fixtures fix --pool "$(par_jobs)" --timeout 120 --cpu 120 \
	"$@" >nvrtc.out 2>&1
good=$(grep -c '\.cu: ok' nvrtc.out)
check "$good of $total conv_tc kernels pass the launch check and compile with NVRTC" \
	test "$good" -eq "$total" -a "$total" -ge "$(long_tier && echo 40 || echo 20)"
grep '\.cu: ' nvrtc.out | grep -v '\.cu: ok' | head -n 5 | sed 's/^/# /'
lacks "and none spills registers" nvrtc.out 'spill_st [1-9][0-9]{2,}'

# Small sizes: emulate against the oracle (defaults and one alternative
# tiling per problem, in turn; make test: the tiling for every other problem).
# shellcheck disable=SC2086
python3 "$TOOLS/conv_small_root.py" "$KF_ROOT" small $NUMS
# Render them all, emulate them in parallel (emulate_jobs), read the results in order.
k=0 j=0
mkdir -p sm
: >sm.jobs
: >sm.desc
for n in $NUMS; do
	s=$(spec_of small "$n")
	for par in '{}' "$(alt "$j")"; do
		f=sm/$n-$k.cu
		"$E" render "$s" conv_tc "$par" >"$f"
		printf '%s\0' "emu/$k" small "$n" "$f" >>sm.jobs
		echo "$k $n $par" >>sm.desc
		k=$((k + 1))
		every_nth "$j" 2 1 || break
	done
	j=$((j + 1))
done
emulate_jobs sm.jobs
bad=0 k=0
while read -r i n par; do
	r=$(cat "emu/$i.res")
	k=$((k + 1))
	echo "# $n $par: $r"
	case $r in
	ok*) ;;
	*) bad=$((bad + 1)) ;;
	esac
done <sm.desc
check "$k emulated conv_tc kernels match the oracle ($bad failed)" test "$bad" -eq 0 -a "$k" -ge "$(long_tier && echo 26 || echo 20)"

# The checks have teeth: plain TF32 (the lo terms dropped) misses the fp32
# tolerance, and a padding tap read as 1 instead of 0 is seen.
s=$(spec_of small 80)
"$E" render "$s" conv_tc >good.cu
grep -v 'al\[i\], bh\[j\]\|ah\[i\], bl\[j\]' good.cu >nolo.cu
check "the broken kernel lost its lo terms" test "$(grep -c mma_sync nolo.cu)" -eq 1
sed 's/float v = 0\.0f;/float v = 1.0f;/' good.cu >pad.cu
printf '%s\0' emu/nolo small 80 nolo.cu emu/pad small 80 pad.cu >teeth.jobs
emulate_jobs teeth.jobs
r=$(cat emu/nolo.res)
echo "# without lo terms: $r"
# A mismatch, not a crash of the emulator: "not ok ... N elements, M bad" with M > 0.
mismatch() { echo "$1" | grep -Eq '^not ok .*[0-9]+ elements, [1-9][0-9]* bad'; }
if mismatch "$r"; then ok "a kernel without the lo terms fails the oracle"; else nok "a kernel without the lo terms fails the oracle"; fi
r=$(cat emu/pad.res)
echo "# padding read as 1: $r"
if mismatch "$r"; then ok "a kernel with nonzero padding fails the oracle"; else nok "a kernel with nonzero padding fails the oracle"; fi
