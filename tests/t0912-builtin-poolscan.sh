#!/bin/sh
# The built-in pooling (41-46) and scan (89-93) templates: every applicable
# catalogue idea renders, passes the full-size launch check and compiles
# with NVRTC for sm_90 (check_templates.py), and a sample is emulated on the
# CPU against the oracle: scans at emulate_refs.py's small sizes, and both
# families at small sizes of check_poolscan_small.py (pooling specs cannot
# be shrunk by emulate_refs.py; scan rows of 1102 span several tiles).
. "$KF_ROOT/tests/lib.sh"

T="$KF_ROOT/tests/tools"
need_emulator

# per_problem FILE NUMBERS...: every number has an ok line in FILE
per_problem() {
	f=$1
	shift
	for n in "$@"; do
		grep -q "^ok 0*$n-" "$f" || return 1
	done
}

# (make test: every other rendered kernel compiles, turning with the problem;
# make test-long: all)
python3 "$T/check_templates.py" "$KF_BUILD" "$KF_ROOT" "$T_TMP/pool" --impls 1 --no-emulate --nvrtc-every "$(long_tier && echo 1 || echo 2)" \
	41 42 43 44 45 46 >pool.out 2>&1
contains "pool kernels render, launch-check and compile at full size" pool.out "^[1-9][0-9]* kernels, 0 failed$"
check "each pool problem has a checked kernel" per_problem pool.out 41 42 43 44 45 46

python3 "$T/check_templates.py" "$KF_BUILD" "$KF_ROOT" "$T_TMP/scan" --impls 1 --every 4 --nvrtc-every "$(long_tier && echo 1 || echo 2)" \
	89 90 91 92 93 >scan.out 2>&1
contains "scan kernels compile at full size and emulate" scan.out "^[1-9][0-9]* kernels, 0 failed$"
check "each scan problem has a checked kernel" per_problem scan.out 89 90 91 92 93

python3 "$T/check_poolscan_small.py" "$KF_BUILD" "$KF_ROOT" "$T_TMP/small" --impls 1 --no-nvrtc \
	--every 3 41 42 43 44 45 46 89 90 91 92 93 >small.out 2>&1
contains "pool and scan kernels match the oracle at small sizes" small.out "^[1-9][0-9]* kernels, 0 failed$"
check "each problem has a kernel emulated at small sizes" per_problem small.out 41 42 43 44 45 46 89 90 91 92 93
grep '^not ok' pool.out scan.out small.out | head -n 10 | sed 's/^/# /'
