#!/bin/sh
# Every problem's trusted reference (problems/levelN/*/reference.cu) is a
# valid candidate: it passes the include scan and its launch block resolves
# against its own spec (sm_90 limits). A sample of them compiles with NVRTC.
. "$KF_ROOT/tests/lib.sh"

KFC="$KF_BUILD/tests/kfcompile"
set -- "$KF_ROOT"/problems/level*/[0-9]*_*
if [ ! -d "$1" ]; then
	skip "no problems/ in this tree"
	exit 0
fi
"$KFC" --refs --launch-only "$@" >"$T_TMP/out" 2>&1
check "the launch check ran over every problem" test $? -eq 0
total=$#
good=$(grep -c ': launch_ok$' "$T_TMP/out")
check "all $total references pass the format and launch checks ($good did)" test "$good" -eq "$total"
grep -v ': launch_ok$' "$T_TMP/out" | head -n 10 | sed 's/^/# /'

if "$KFC" --exe "$KFORGE" "$KF_ROOT/tests/candidates/relu_ok.cu" 2>&1 | grep -q ': ok '; then
	# One reference in every 10 (the families are spread over the numbers).
	sample=$(printf '%s\n' "$@" | awk 'NR % 10 == 1')
	# shellcheck disable=SC2086
	"$KFC" --exe "$KFORGE" --refs --pool 2 --timeout 120 --cpu 120 $sample >"$T_TMP/out" 2>&1
	n=$(printf '%s\n' $sample | wc -l)
	c=$(grep -c ': ok ' "$T_TMP/out")
	check "a sample of $n references compiles with NVRTC ($c did)" test "$c" -eq "$n"
	grep -v ': ok ' "$T_TMP/out" | head -n 10 | sed 's/^/# /'
else
	skip "NVRTC not available: reference compiles"
fi
