#!/bin/sh
# The built-in transposed-convolution templates (convt, convt_igemm): every
# applicable idea of problems 57-81's transposed convolutions renders, passes
# the launch check at full size; a rotating sample compiles with NVRTC for
# sm_90 and matches kforge's CPU oracle when emulated at small extents
# (tests/tools/check_convt.py). Forward convolutions get no convt idea.
. "$KF_ROOT/tests/lib.sh"

NUMS="57 58 61 64 65 68 69 70 71 72 73 74 75 77 78 79 81"
need_emulator
# shellcheck disable=SC2086
python3 "$KF_ROOT/tests/tools/check_convt.py" "$KF_BUILD" "$KF_ROOT" "$T_TMP/ct" --impls 1 \
	--every "$(long_tier && echo 8 || echo 16)" --nvrtc-every "$(long_tier && echo 8 || echo 16)" $NUMS >out 2>err
check "check_convt.py exits 0" test $? -eq 0
contains "no kernel failed" out "^[0-9]+ kernels, 0 failed$"
grep '^not ok' out | head -n 10 | sed 's/^/# /'
for n in $NUMS; do
	nnn=$(printf '%03d' "$n")
	check "problem $nnn: kernels were checked" grep -q "^ok $nnn-convt" out
done
check "stride-1 problem 057 gets the implicit-GEMM template" grep -q "^ok 057-convt-implicit-gemm" out
check "strided problem 081 does not" sh -c "! grep -q '^ok 081-convt-i' out"
check "strided problem 081 gets the phase-ordered direct kernel" grep -q "^ok 081-convt-phase-lanes" out
"$KF_BUILD/tests/builtin_emit" ideas "$(ls -d "$KF_ROOT"/problems/level1/063_*)/spec.json" 20 1 >fwd 2>&1
lacks "forward conv 063 gets no convt idea" fwd "^convt"
