#!/bin/sh
# The built-in forward-convolution templates (kernels/builtin_conv.c):
# every applicable catalogue idea renders for each problem; a sample of the
# kernels compiles with NVRTC for sm_90 and passes the launch check at full
# size; kernels of every problem, emulated on the CPU over specs shrunk by
# tests/tools/conv_small_root.py, match kforge's oracle.
. "$KF_ROOT/tests/lib.sh"

TOOLS="$KF_ROOT/tests/tools"
NUMS="50 54 55 56 59 60 62 63 66 67 76 80 82 83 84 85 86 87"
if [ ! -d "$KF_ROOT/problems/level1" ]; then
	skip "no problems/ in this tree"
	exit 0
fi

# Transposed convolutions belong to builtin_convt.c: refused, not crashed on.
for t in conv conv_igemm conv_dw; do
	"$KF_BUILD/tests/builtin_emit" render "$KF_ROOT"/problems/level1/057_*/spec.json $t '{}' \
		>/dev/null 2>err.txt
	check "$t does not apply to a transposed convolution (exit $?)" test $? -eq 1
done

if command -v c++ >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	python3 "$TOOLS/conv_small_root.py" "$KF_ROOT" small $NUMS
	# shellcheck disable=SC2086
	python3 "$TOOLS/check_templates.py" "$KF_BUILD" small emu --impls 1 --every 10 \
		--no-nvrtc $NUMS >emu.out 2>&1
	check "emulated conv kernels match the oracle" grep -q ' 0 failed$' emu.out
	grep '^not ok' emu.out | head -n 10 | sed 's/^/# /'
	for n in $NUMS; do
		c=$(grep -c "^ok $(printf %03d "$n")-" emu.out)
		check "problem $n: its kernels render and the first is emulated ($c rendered)" test "$c" -ge 1
	done
else
	skip "no c++ or python3: conv kernels not emulated"
fi

need_nvrtc "conv kernels not compiled"
# 2-D with bias and stride; depthwise-separable (all three templates).
python3 "$TOOLS/check_templates.py" "$KF_BUILD" "$KF_ROOT" nvrtc --impls 1 --no-emulate \
	50 86 >nvrtc.out 2>&1
check "conv kernels compile with NVRTC and pass the launch check" grep -q ' 0 failed$' nvrtc.out
grep '^not ok' nvrtc.out | head -n 10 | sed 's/^/# /'
