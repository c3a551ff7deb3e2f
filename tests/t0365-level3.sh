#!/bin/sh
# KernelBench level 3 (problems/gen/level3/gen.py): the committed files are what the
# generator writes (and level 2's still are), the specs are well formed,
# faketorch names an unmodelled call and its line and its decompositions
# match their definitions, every reference.cu
# compiles with NVRTC (a third at full size; all at small size on the host),
# and at small sizes every reference.cu, run on the host (CUDA emulated,
# launch-block loops included), agrees element by element with the
# pure-Python graph evaluator (problems/gen/level2/graph_eval.py), and, where torch
# is installed, the graphs agree with KernelBench's modules run in PyTorch.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
GEN="$KF_ROOT/problems/gen/level3/gen.py"

if ! command -v python3 >/dev/null 2>&1; then
	skip "python3 missing: level-3 generator checks"
	exit 0
fi
check "generated files are current (gen.py --check)" python3 "$GEN" --check
check "and from the committed reference.py files (--committed)" python3 "$GEN" --check --committed
check "level 2's files are unchanged by the shared code" python3 "$KF_ROOT/problems/gen/level2/gen.py" --check
expect_exit 0 "the specs are well formed" python3 "$KF_ROOT/tests/tools/check_level3.py" "$KF_ROOT"
contains "all of them" "$T_TMP/out" "^checked [1-9][0-9]* specs, 0 problems$"
NP=$(ls -d "$KF_ROOT"/problems/level3/*/ | wc -l)
# every KernelBench level-3 model is generated or listed as not yet expressible
check "problems + NOT_YET = 50" python3 -c "
import sys; sys.path.insert(0, '$KF_ROOT/problems/gen/level3'); import gen
sys.exit(0 if $NP + len(gen.NOT_YET) == 50 else print('#', $NP, sorted(gen.NOT_YET)) or 1)"

# faketorch: an unmodelled call fails naming the call and the module's line
cat >bad.py <<'EOF'
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.fft.fft(self.fc(x))

def get_inputs():
    return [torch.rand(2, 4)]

def get_init_inputs():
    return []
EOF
expect_exit 1 "an unmodelled call fails" python3 -c "
import sys; sys.path.insert(0, '$KF_ROOT/problems/gen/level3'); sys.path.insert(0, '$KF_ROOT/problems/gen/level2')
import faketorch
try:
    faketorch.trace(open('bad.py').read())
except faketorch.TraceError as e:
    print(e); sys.exit(1)"
contains "naming the call and its line" "$T_TMP/out" "^line 10: .*torch.fft.* is not modelled"

# faketorch's decompositions (einsum, rearrange, unfold, indexing, the causal
# mask, F.normalize, nn.MultiheadAttention) against index loops
expect_exit 0 "decompositions agree with their definitions" python3 "$KF_ROOT/tests/tools/check_faketorch.py"
contains "all of them" "$T_TMP/out" "^checked [0-9]+ decompositions, 0 failed$"

# NVRTC: every sixth reference at full size (the small trees below emulate
# most of them on the host); make test-long compiles every one
if ! have_nvrtc; then
	skip "NVRTC not available: level-3 references not compiled"
else
	set --
	k=0
	for d in "$KF_ROOT"/problems/level3/*/; do
		if every_nth "$k" 6 1; then set -- "$@" "$d/reference.cu"; fi
		k=$((k + 1))
	done
	"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --pool "$(par_jobs)" "$@" >cc.txt 2>&1
	check "kfcompile ran" test $? -eq 0
	check "every one compiles" test "$(grep -c ': ok ' cc.txt)" -eq $#
	grep -v ': ok ' cc.txt | head -n 5 | cut -c1-300 | sed 's/^/# /'
fi
# the launch plans against the engine's rules (sm_90 limits, every loop
# iteration), as the engine builds them; no compile
if "$KFORGE" problems show level3/035_LSTM >/dev/null 2>&1; then
	"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --refs --launch-only "$KF_ROOT"/problems/level3/*/ >lp.txt 2>&1
	check "every launch plan passes the check" test "$(grep -c ': launch_ok$' lp.txt)" -eq "$NP"
	grep -v ': launch_ok$' lp.txt | head -n 5 | cut -c1-300 | sed 's/^/# /'
	mkdir -p bad/035_LSTM && cp "$KF_ROOT"/problems/level3/035_*/* bad/035_LSTM/
	sed -i '0,/(x, lstm_weight_ih_l0/s//(x + 99999999, lstm_weight_ih_l0/' bad/035_LSTM/reference.cu
	"$KF_BUILD/tests/kfcompile" --exe "$KFORGE" --refs --launch-only bad/035_LSTM/ >lp2.txt 2>&1
	contains "an offset past the input fails the check" lp2.txt "format_error: .*element offset 99999999 is outside .x."
else
	skip "kforge does not load level-3 specs (tensor and launch limits): launch plans not checked"
fi

# small sizes: emulated references against the graph evaluator
if ! command -v c++ >/dev/null 2>&1; then
	skip "c++ missing: no host emulation"
	exit 0
fi
expect_exit 0 "gen.py --small writes the small tree" python3 "$GEN" --small small
check "one small problem per problem" test "$(ls -d small/problems/level3/*/ | wc -l)" -eq "$NP"
# make test: every other problem (the recurrent ones, whose time loops are the
# new launch-block path, all); make test-long: every one
set --
k=0
for d in small/problems/level3/*/; do
	n=$(basename "$d" | cut -c1-3)
	case $n in 03[3-9] | 04[0-2]) set -- "$@" "$n" ;; *) every_nth "$k" 2 1 && set -- "$@" "$n" ;; esac
	k=$((k + 1))
done
NE=$#
expect_exit 0 "$NE small reference.cu files agree with the graph evaluator" \
	python3 "$KF_ROOT/tests/tools/emulate_level3.py" -j "$(par_jobs)" small emu "$@"
contains "all emulated" "$T_TMP/out" "^emulated $NE problems, 0 failed$"
grep '^not ok' "$T_TMP/out" | head -n 5 | sed 's/^/# /'
# where a Python with torch exists (Debian's python3-torch): every small graph
# against KernelBench's module itself, in float64, training mode
PYT=""
for p in python3 /usr/bin/python3; do
	if "$p" -c "import torch, numpy" 2>/dev/null; then PYT=$p; break; fi
done
if [ -z "$PYT" ]; then
	skip "no Python with torch and numpy: level-3 graphs not checked against PyTorch"
else
	expect_exit 0 "every small graph agrees with PyTorch (float64)" "$PYT" "$KF_ROOT/problems/gen/level3/torch_check.py" small
	contains "all of them" "$T_TMP/out" "^torch-checked $NP problems, 0 mismatching$"
	grep '^not ok' "$T_TMP/out" | head -n 5 | sed 's/^/# /'
	# it can fail: a causal mask one diagonal off
	mkdir -p off/problems/level3 && cp -r small/problems/level3/043_* off/problems/level3/
	sed -i 's/"diagonal": 1,/"diagonal": 2,/' off/problems/level3/043_*/spec.json
	expect_exit 1 "a graph with the mask one diagonal off fails" "$PYT" "$KF_ROOT/problems/gen/level3/torch_check.py" off
	contains "names the problem" "$T_TMP/out" "^not ok 043_MinGPTCausalAttention .*max err"
fi

# intermediates past the declared scratch buffers live in one arena per type
# (`arena + OFFSET` arguments): forced with 2 buffers on DenseNet and Inception
expect_exit 0 "gen.py --small --scratch 2" python3 "$GEN" --small arena --scratch 2 7 14
check "the references use the arena" grep -q "arena + [0-9]" arena/problems/level3/014_*/reference.cu
expect_exit 0 "and agree with the graph evaluator" python3 "$KF_ROOT/tests/tools/emulate_level3.py" -j "$(par_jobs)" arena emu4
contains "both" "$T_TMP/out" "^emulated 2 problems, 0 failed$"
# the comparison can fail: a small MLP whose bias is subtracted
f=$(ls small/problems/level3/001_*/reference.cu)
sed -i 's/ + (double)bias\[n\]);/ - (double)bias[n]);/' "$f"
check "(the edit took)" grep -q ' - (double)bias\[n\]' "$f"
expect_exit 1 "a reference with a wrong sign fails" python3 "$KF_ROOT/tests/tools/emulate_level3.py" small emu2 1
contains "names the problem" "$T_TMP/out" "^not ok 001_MLP .*python: [1-9][0-9]* bad"
# and a small LSTM whose forget gate reads the input gate's sums
f=$(ls small/problems/level3/035_*/reference.cu)
sed -i 's/fg = 1.0 \/ (1.0 + exp(-(gx\[1\] + gh\[1\])))/fg = 1.0 \/ (1.0 + exp(-(gx[0] + gh[0])))/' "$f"
check "(the edit took)" grep -q 'fg = 1.0 / (1.0 + exp(-(gx\[0\]' "$f"
expect_exit 1 "a reference with a wrong gate fails" python3 "$KF_ROOT/tests/tools/emulate_level3.py" small emu3 35
contains "names the problem" "$T_TMP/out" "^not ok 035_LSTM .*python: [1-9][0-9]* bad"
# and a small GRU whose state update reads gate 0's hidden sums for every gate
# (the step's gate threads meet in shared memory)
f=$(ls small/problems/level3/039_*/reference.cu)
sed -i 's/gh\[q\] = sgh\[q\]\[u\];/gh[q] = sgh[0][u];/' "$f"
check "(the edit took)" grep -q 'gh\[q\] = sgh\[0\]\[u\];' "$f"
expect_exit 1 "a step that reads the wrong gate's slot fails" python3 "$KF_ROOT/tests/tools/emulate_level3.py" small emu5 39
contains "names the problem" "$T_TMP/out" "^not ok 039_GRU .*python: [1-9][0-9]* bad"
