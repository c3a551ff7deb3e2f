#!/bin/sh
# The built-in norm templates (kernels/builtin_norm.c): every applicable
# catalogue idea of problems 33-40 renders, passes the full-size launch
# check, compiles with NVRTC for sm_90 and, emulated on the host at small
# sizes, matches kforge's double-precision oracle.
. "$KF_ROOT/tests/lib.sh"

need_emulator

# (make test: every other rendered kernel compiles, turning with the problem;
# make test-long: all)
python3 "$KF_ROOT/tests/tools/check_templates.py" "$KF_BUILD" "$KF_ROOT" "$T_TMP/ct" \
	--impls 1 --every 2 --nvrtc-every "$(long_tier && echo 1 || echo 2)" 33 34 35 36 37 38 39 40 >"$T_TMP/out" 2>&1
check "check_templates exits 0" test $? -eq 0
contains "no kernel failed" "$T_TMP/out" "^[0-9]+ kernels, 0 failed$"
for n in 033 034 035 036 037 038 039 040; do
	check "problem $n has a checked kernel" grep -q "^ok $n-" "$T_TMP/out"
done
grep '^not ok' "$T_TMP/out" | head -n 10 | sed 's/^/# /'
