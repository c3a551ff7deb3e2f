#!/bin/sh
# The built-in loss and attention templates (94-100): every applicable
# catalogue idea renders, passes the launch check at full size, compiles
# with NVRTC for sm_90 and matches the CPU oracle when emulated at small
# sizes.
. "$KF_ROOT/tests/lib.sh"

need_emulator
# (make test: every other rendered kernel compiles, turning with the problem;
# make test-long: all)
python3 "$KF_ROOT/tests/tools/check_templates.py" "$KF_BUILD" "$KF_ROOT" "$T_TMP/ct" --impls 1 --every 2 --nvrtc-every "$(long_tier && echo 1 || echo 2)" \
	94 95 96 97 98 99 100 >"$T_TMP/out" 2>&1
contains "no built-in loss/attention kernel failed" "$T_TMP/out" "^[0-9]+ kernels, 0 failed$"
grep '^not ok' "$T_TMP/out" | head -n 10 | sed 's/^/# /'
for n in 094 095 096 097 098 099 100; do
	check "at least one kernel of $n was checked" grep -q "^ok $n-" "$T_TMP/out"
done
