#!/bin/sh
# KernelBench level 2: the operator graphs agree with PyTorch itself. At small
# sizes (problems/gen/level2/gen.py --small) every problem's reference.py runs in
# float64 on the CPU with kforge's inputs and parameters (dropout through its
# mask input) and is compared with problems/gen/level2/graph_eval.py
# (problems/gen/level2/torch_check.py). Needs a Python with torch and numpy.
. "$KF_ROOT/tests/lib.sh"

PYT=""
for p in python3 /usr/bin/python3; do
	if "$p" -c "import torch, numpy" 2>/dev/null; then PYT=$p; break; fi
done
if [ -z "$PYT" ]; then
	skip "no Python with torch and numpy: level-2 graphs not checked against PyTorch"
	exit 0
fi
expect_exit 0 "gen.py --small writes the small tree" "$PYT" "$KF_ROOT/problems/gen/level2/gen.py" --small small
expect_exit 0 "PyTorch agrees with every level-2 graph" "$PYT" "$KF_ROOT/problems/gen/level2/torch_check.py" \
	"$KFORGE" small work
contains "all 100" "$T_TMP/out" "^torch-checked 100 problems, 0 mismatching$"
grep '^not ok' "$T_TMP/out" | head -n 5 | sed 's/^/# /'
# the check can fail: a graph whose LeakyReLU slope differs from the module's
sed -i 's/"negative_slope": 0.1$/"negative_slope": 0.25/' small/problems/level2/012_*/spec.json
expect_exit 1 "a graph that differs from the module fails" "$PYT" "$KF_ROOT/problems/gen/level2/torch_check.py" \
	"$KFORGE" small work2 12
contains "names the problem" "$T_TMP/out" "^not ok 012_Gemm_Multiply_LeakyReLU"
