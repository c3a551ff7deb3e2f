#!/bin/sh
# The first built-in templates (elementwise, row softmax, reductions, matmul:
# problems 1-32, 47-53, 88): every applicable
# catalogue idea renders, passes the launch check at full size, compiles
# with NVRTC for sm_90 and matches the CPU oracle when emulated at small
# sizes.
. "$KF_ROOT/tests/lib.sh"

need_emulator
# Emulated at small sizes: every size capped (KF_EMU_CAP; 4D products at 16
# so the oracle covers every output).
CT="$KF_ROOT/tests/tools/check_templates.py"
# (make test: every other rendered kernel compiles, turning with the problem;
# make test-long: all)
KF_EMU_CAP=70 python3 "$CT" "$KF_BUILD" "$KF_ROOT" "$T_TMP/ct" --impls 1 --every "$(long_tier && echo 5 || echo 12)" \
	--nvrtc-every "$(long_tier && echo 1 || echo 2)" \
	$(seq 1 10) $(seq 12 32) 47 48 49 51 52 53 88 >"$T_TMP/out" 2>&1
contains "no built-in elementwise/softmax/reduce/matmul kernel failed" "$T_TMP/out" "^[0-9]+ kernels, 0 failed$"
grep '^not ok' "$T_TMP/out" | head -n 10 | sed 's/^/# /'
# The reduce template's slab layout with several column blocks per outer index (inner wider
# than block x slab), which the capped sizes above never reach.
KF_EMU_SIZES='{"dim2": 1100, "dim1": 37, "batch_size": 3}' python3 "$CT" "$KF_BUILD" "$KF_ROOT" "$T_TMP/cts" \
	--impls 3 --no-nvrtc 51 >"$T_TMP/outs" 2>&1
contains "no reduction kernel failed at 1100 columns" "$T_TMP/outs" "^[0-9]+ kernels, 0 failed$"
check "the slab layout was checked at 1100 columns" grep -q "^ok 051-red-slab-2" "$T_TMP/outs"
KF_EMU_CAP=16 python3 "$CT" "$KF_BUILD" "$KF_ROOT" "$T_TMP/ct11" --impls 1 --every 3 11 >"$T_TMP/out11" 2>&1
contains "no built-in kernel of the 4D tensor product failed" "$T_TMP/out11" "^[0-9]+ kernels, 0 failed$"
cat "$T_TMP/out11" >>"$T_TMP/out"
for n in $(seq -w 1 32 | sed "s/^/0/") 047 048 049 051 052 053 088; do
	check "at least one kernel of $n was checked" grep -q "^ok $n-" "$T_TMP/out"
done
