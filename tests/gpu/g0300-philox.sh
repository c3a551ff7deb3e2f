#!/bin/sh
# The input generator on the GPU (NVRTC-compiled fill kernels) gives the
# same bits as the CPU generator: records a fixture now and compares.
. "$KF_ROOT/tests/lib.sh"

expect_exit 0 "the GPU fills every fixture tensor" "$KF_BUILD/tests/record_philox_fixture"
cp "$T_TMP/out" "$T_TMP/fixture.json"
check "the fixture has the huge tensor's counters past 2^32" python3 -c "
import json,sys
f = json.load(open('$T_TMP/fixture.json'))
sys.exit(0 if any(i > 2**32 for i in f['tensors']['huge']['index']) else 1)"
KF_PHILOX_FIXTURE="$T_TMP/fixture.json" "$KF_BUILD/tests/test_philox" >"$T_TMP/cmp" 2>&1
check "CPU and GPU bits agree" grep -q '^ok 1 - test_gpu_fixture' "$T_TMP/cmp"
sed 's/^/# /' "$T_TMP/cmp" | grep -v '^# ok' | head -n 20
