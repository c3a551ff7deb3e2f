#!/bin/sh
# The matmul/conv/pool problems against PyTorch itself (CPU, float64): the
# committed reference.py modules have the spec's params, and small variants
# agree with the C oracle to 1e-9 (problems/gen/level1/torch_check.py). Skipped
# without torch (Debian: apt-get install python3-torch).
. "$KF_ROOT/tests/lib.sh"

PY=""
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c "import torch" >/dev/null 2>&1; then PY=$p; break; fi
done
ORACLE="$KF_BUILD/tests/oracle_b_eval"
if [ -z "$PY" ]; then
	skip "torch not importable: PyTorch cross-check of the matmul/conv/pool problems"
elif [ ! -x "$ORACLE" ]; then
	nok "$ORACLE is built (make test-build)"
else
	expect_exit 0 "PyTorch agrees with the oracle and the specs" "$PY" \
		"$KF_ROOT/problems/gen/level1/torch_check.py" --oracle "$ORACLE"
	contains "all 58 checked" "$T_TMP/out" "checked 58 problems against PyTorch, 0 disagree"
fi
