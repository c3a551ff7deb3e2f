#!/bin/sh
# The CPU side of the checks where every input, parameter and step matters
# (docs/engine.md: "The alive draw", "Sensitivity trials"; the GPU side is
# tests/gpu/g0465-sensitivity.sh):
# - `kforge problems sensitivity` (the CPU oracle): on PyTorch's draw the
#   first 128 of 512 steps and the initial cell state c0 do not reach an
#   LSTM's h_n (level3/36), on the alive draw they do; a linear's bias
#   before a training-mode BatchNorm reaches nothing (level2/33), the norm's
#   own constant-initialised weight does when redrawn; every spec's
#   no_influence claim holds and `problems show` prints it;
# - the truncated recurrence (tests/candidates/adversarial/42, the built-in
#   LSTM computing only the last 64 steps), emulated on the host at full
#   size, matches the oracle on PyTorch's draw and not on the alive draw:
#   the checks of the old protocols pass it, the alive draw rejects it
#   (make test-long, about 50 CPU-seconds a run, with the pass on PyTorch's
#   draw, 43, the zero initial state, and 44, the honest kernel; make test
#   shows through the oracle above why it fails, the first 128 steps reach
#   h_n on the alive draw, and make test-gpu rejects it: g0465).
# The no_influence claims: under make test the first of each tensor's
# (conv_bias: 017, gemm_bias: 033, matmul_bias: 097; the other four are
# a bias right before a training-mode BatchNorm, as 033's), all under
# make test-long (each is a sampled oracle run of 1 to 20 CPU-seconds).
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"

sens() { "$KFORGE" problems sensitivity "$@" 2>&1; }
{
	sens level3/36 --only steps
	sens level3/36 --only steps --alive
	sens level3/36 --only c0
	sens level3/36 --only c0 --alive
} >s36.txt
sed 's/^/# /' s36.txt
check "four trials" test "$(wc -l <s36.txt)" -eq 4
check "spec draw: the first 128 steps do not reach h_n" sh -c "sed -n 1p s36.txt | grep -q '^no influence x\[time steps 0..128 of 512\]: 0 of '"
check "alive draw: they do" sh -c "sed -n 2p s36.txt | grep -q '^influence x\[time steps 0..128 of 512\]: [1-9]'"
check "spec draw: c0 does not reach h_n" sh -c "sed -n 3p s36.txt | grep -q '^no influence c0: 0 of '"
check "alive draw: it does" sh -c "sed -n 4p s36.txt | grep -q '^influence c0: [1-9]'"
expect_exit 1 "--alive on a problem without an alive draw is refused" "$KFORGE" problems sensitivity level2/33 --alive
contains "saying why" "$T_TMP/err" "no alive draw"
sens level2/33 --json >s33.txt
sed 's/^/# /' s33.txt
check "level2/33: a trial per tensor (6)" test "$(wc -l <s33.txt)" -eq 6
contains "the linear's bias cannot reach the output (BatchNorm subtracts it)" s33.txt '"tensor": "gemm_bias", "draw": "spec", "influence": false'
contains "the norm's weight, 1 as PyTorch initialises it, is redrawn around 1 and does" s33.txt '"tensor": "bn_weight", "draw": "spec", "influence": true'
contains "x does" s33.txt '"tensor": "x", "draw": "spec", "influence": true'

# every spec's no_influence claim (problems/gen/level2/gen.py NO_INFLUENCE) holds
: >claims.txt
python3 - "$KF_ROOT"/problems/level*/*/spec.json >claims.list <<'PY'
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    for k in d.get("no_influence", {}):
        print(d["id"], k)
PY
check "the level-2 specs claim some (7)" test "$(wc -l <claims.list)" -eq 7
: >claims.run
while read -r id t; do
	{ long_tier || ! grep -q " $t\$" claims.run; } && echo "$id $t" >>claims.run
done <claims.list
while read -r id t; do
	sens "$id" --only "$t" --samples 16 >>claims.txt
done <claims.run
sed 's/^/# /' claims.txt
check "every claim tried ($(wc -l <claims.run) of 7) is confirmed by the oracle" \
	test "$(grep -c '^no influence ' claims.txt)" -eq "$(wc -l <claims.run)"
"$KFORGE" problems show level2/33 >show.txt 2>&1
contains "problems show says it" show.txt "^ +no influence: added per feature right before the training-mode BatchNorm"

# the truncated recurrence, emulated at full size (about 1 CPU-minute a run)
if ! command -v c++ >/dev/null 2>&1; then
	skip "c++ missing: the candidates cannot be emulated"
	exit 0
fi
A="$KF_ROOT/tests/candidates/adversarial"
EMU="$KF_ROOT/tests/tools/sens_emulate.py"
# shellcheck disable=SC2086
emu() { python3 "$EMU" "$KFORGE" emu level3/36 "$A/$1" ${2:-} 2>&1; }
# make test: the rejection (the alive draw); make test-long: also that
# PyTorch's draw lets it through, and the other two candidates.
if ! long_tier; then
	skip "the truncated recurrence emulated at full size: make test-long (about 50 CPU-seconds)"
	exit 0
fi
{
	emu 42_truncated_recurrence.cu --alive
	if long_tier; then
		emu 42_truncated_recurrence.cu
		emu 43_ignores_initial_state.cu
		emu 43_ignores_initial_state.cu --alive
		emu 44_honest_lstm_hn.cu --alive
	fi
} >e.txt
sed 's/^/# /' e.txt
check "the truncated recurrence fails the alive draw" sh -c "sed -n 1p e.txt | grep -q '^fail level3/36 alive'"
if long_tier; then
	check "the truncated recurrence passes PyTorch's draw" sh -c "sed -n 2p e.txt | grep -q '^pass level3/36 spec'"
	check "the zero initial state passes PyTorch's draw" sh -c "sed -n 3p e.txt | grep -q '^pass level3/36 spec'"
	check "and fails the alive draw" sh -c "sed -n 4p e.txt | grep -q '^fail level3/36 alive'"
	check "the honest LSTM passes the alive draw" sh -c "sed -n 5p e.txt | grep -q '^pass level3/36 alive'"
fi
