#!/bin/sh
# kforge problems list/show/check/inputs over the committed problem suite,
# and over a scratch root with a broken spec.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"

expect_exit 0 "the committed problems are what problems/gen/level1/gen_a.py generates" \
	sh -c "cd '$KF_ROOT' && python3 problems/gen/level1/gen_a.py --check"
check "every reference.py is Python with Model, get_inputs, get_init_inputs" python3 -c "
import ast, glob, sys
bad = []
for f in sorted(glob.glob('$KF_ROOT/problems/level1/*/reference.py')):
    t = ast.parse(open(f).read(), f)
    names = {n.name for n in t.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    if not {'Model', 'get_inputs', 'get_init_inputs'} <= names:
        bad.append(f)
print(bad)
sys.exit(1 if bad else 0)"
expect_exit 0 "list exits 0" "$KFORGE" problems list
contains "list shows softmax with its sizes" "$T_TMP/out" "^level1/023_Softmax +batch_size=4096 dim=393216"
contains "list shows GFLOP and minimal MB" "$T_TMP/out" "^level1/019_ReLU .* 1\.611 +12884\.9 "
n=$(grep -c '^level1/' "$T_TMP/out")
check "list shows at least the 42 probsA problems" test "$n" -ge 42
check "list is sorted by number" sh -c "grep '^level1/' '$T_TMP/out' | cut -c8-10 | sort -c"
expect_exit 0 "list --level 1 --json" "$KFORGE" problems list --level 1 --json
check "JSON has ids, GFLOP and sizes" python3 -c "
import json,sys
r = json.load(open('$T_TMP/out'))
s = [p for p in r if p['id'] == 'level1/097_ScaledDotProductAttention'][0]
sys.exit(0 if s['sizes']['sequence_length'] == 512 and abs(s['gflop'] - 4*32*32*512*512*1024/1e9) < 1e-6 else 1)"
expect_exit 0 "list with peaks shows the roofline floor" "$KFORGE" problems list --gbps 3000 --gflops 60000
contains "ReLU floor = 12.88 GB / 3000 GB/s" "$T_TMP/out" "^level1/019_ReLU .* 4\.2950$"
# the GPU's measured peaks from the store (the engine writes the gpus row)
"$KFORGE" store init >/dev/null
sqlite3 "$KFORGE_DB" "INSERT INTO gpus(name, peak_bw_gbs, peak_fp32_tflops, first_seen) VALUES ('NVIDIA H100 80GB HBM3', 3000, 60, 'now')"
expect_exit 0 "list takes the floor from the store's measured peaks" "$KFORGE" problems list
contains "ReLU floor from the store" "$T_TMP/out" "^level1/019_ReLU .* 4\.2950$"
contains "names the GPU" "$T_TMP/out" "from NVIDIA H100 80GB HBM3's measured peaks"
expect_exit 1 "list --gpu of an unknown GPU fails" "$KFORGE" problems list --gpu "Voodoo 2"
# a merged store: two GPUs' peaks; without a GPU here the caller picks one
sqlite3 "$KFORGE_DB" "INSERT INTO gpus(name, peak_bw_gbs, peak_fp32_tflops, first_seen) VALUES ('NVIDIA H200', 4000, 60, 'now')"
if ! "$KFORGE" gpu-info >/dev/null 2>&1; then
	expect_exit 0 "list with two GPUs' peaks and no GPU here" "$KFORGE" problems list
	contains "no floor without a choice" "$T_TMP/out" "^level1/019_ReLU .* -$"
	contains "names both GPUs and --gpu" "$T_TMP/out" "needs --gpu NAME: the store has the peaks of NVIDIA H100 80GB HBM3, NVIDIA H200$"
fi
expect_exit 0 "list --gpu picks one of them" "$KFORGE" problems list --gpu "NVIDIA H200"
contains "H200 floor = 12.88 GB / 4000 GB/s" "$T_TMP/out" "^level1/019_ReLU .* 3\.2212$"
rm -f "$KFORGE_DB"
expect_exit 0 "list --level 3" "$KFORGE" problems list --level 3
check "lists every level-3 problem (problems/gen/level3/gen.py)" test "$(grep -c '^level3/' "$T_TMP/out")" -eq \
	"$(ls -d "$KF_ROOT"/problems/level3/*/ | wc -l)"
expect_exit 2 "bad --level is a usage error" "$KFORGE" problems list --level x

expect_exit 0 "show by number" "$KFORGE" problems show 33
contains "show names the problem" "$T_TMP/out" "^level1/033_BatchNorm"
contains "show has the memory plan total" "$T_TMP/out" "^total +13153993216 bytes"
contains "show has the PyTorch text" "$T_TMP/out" "nn.BatchNorm2d"
contains "show lists the params" "$T_TMP/out" "^param +weight"
expect_exit 0 "show by name, as JSON" "$KFORGE" problems show Softmax --json
check "JSON show has spec and memory" python3 -c "
import json,sys
r = json.load(open('$T_TMP/out'))
sys.exit(0 if r['spec']['number'] == 23 and r['memory_bytes'] > 3 * 6442450944 else 1)"
# Issue 36: KernelBench's names name problems; an unknown one is a usage
# error (2) with one line and a did-you-mean when something is close.
for q in 19_ReLU 19_ReLU.py level1/19_ReLU level1/19_ReLU.py 19 level1/019_ReLU relu; do
	expect_exit 0 "show $q" "$KFORGE" problems show "$q"
	contains "is level1/019_ReLU" "$T_TMP/out" "^level1/019_ReLU  \(19_ReLU.py\)"
done
for q in level2/12_Gemm_Multiply_LeakyReLU.py 12_Gemm_Multiply_LeakyReLU level2/12; do
	expect_exit 0 "show $q" "$KFORGE" problems show "$q"
	contains "is level2/012_Gemm_Multiply_LeakyReLU" "$T_TMP/out" "^level2/012_Gemm_Multiply_LeakyReLU "
done
expect_exit 0 "KernelBench's trailing underscores" "$KFORGE" problems show 1_Square_matrix_multiplication_.py
contains "name problem 1" "$T_TMP/out" "^level1/001_Square_matrix_multiplication "
expect_exit 0 "a name that begins with a digit" "$KFORGE" problems show 3D_tensor_matrix_multiplication
contains "is problem 10" "$T_TMP/out" "^level1/010_3D_tensor_matrix_multiplication "
expect_exit 2 "show of an unknown problem is a usage error" "$KFORGE" problems show NoSuchProblem
check "one line naming it, no suggestion" test "$(cat "$T_TMP/err")" = "kforge: unknown problem 'NoSuchProblem'"
expect_exit 2 "19_Softmax: number and name disagree" "$KFORGE" problems show 19_Softmax
check "one line with a suggestion" test "$(cat "$T_TMP/err")" = \
	"kforge: unknown problem '19_Softmax'; did you mean 'level1/023_Softmax'?"
expect_exit 2 "a misspelt name" "$KFORGE" problems show 19_ReLu_x.py
contains "suggests ReLU" "$T_TMP/err" "did you mean 'level1/019_ReLU'\?$"
expect_exit 2 "the wrong level" "$KFORGE" problems show level2/19_ReLU
contains "suggests level 1's" "$T_TMP/err" "did you mean 'level1/019_ReLU'\?$"
expect_exit 2 "check --cpu of an unknown problem checks none" "$KFORGE" problems check --cpu 19 19_Softmax
check "one line" test "$(cat "$T_TMP/err")" = "kforge: unknown problem '19_Softmax'; did you mean 'level1/023_Softmax'?"
expect_exit 2 "a name two problems share" "$KFORGE" problems show Gemm_Scale_BatchNorm
contains "names both" "$T_TMP/err" "ambiguous \(level2/033_Gemm_Scale_BatchNorm, level2/039_Gemm_Scale_BatchNorm\)"
expect_exit 2 "show without ID is a usage error" "$KFORGE" problems show

# without the engine linked: "needs the engine" (2); with it, no GPU here (3)
"$KFORGE" problems check 19 >"$T_TMP/out" 2>"$T_TMP/err"; rc=$?
if [ "$rc" -eq 2 ]; then
	contains "check says it needs the engine" "$T_TMP/err" "needs the engine"
elif "$KFORGE" gpu-info >/dev/null 2>&1; then
	skip "a GPU is visible: check is exercised by make test-gpu"
else
	check "check without a GPU exits 3" test "$rc" -eq 3
	contains "check says there is no GPU" "$T_TMP/err" "no (CUDA driver|GPU)"
fi
expect_exit 0 "check --cpu computes the oracle sample" "$KFORGE" problems check --cpu --samples 16 19 47 92
contains "oracle sample for ReLU" "$T_TMP/out" "^level1/019_ReLU +y +16 samples"
contains "oracle sample for exclusive cumsum starts at 0" "$T_TMP/out" "^level1/092_cumsum_exclusive .* first 0 "

# a scratch root: one small good problem, one broken spec
mkdir -p root/problems/level1/005_Matrix_scalar_multiplication root/problems/level1/019_ReLU root/templates
cp "$KF_ROOT"/problems/level1/019_ReLU/* root/problems/level1/019_ReLU/
sed -e 's/"batch_size": 4096/"batch_size": 2/' -e 's/"dim": 393216/"dim": 3/' \
	"$KF_ROOT/problems/level1/019_ReLU/spec.json" >root/problems/level1/019_ReLU/spec.json
sed -i -e 's/^batch_size = 4096/batch_size = 2/' -e 's/^dim = 393216/dim = 3/' root/problems/level1/019_ReLU/reference.py
cp "$KF_ROOT"/problems/level1/005_Matrix_scalar_multiplication/* root/problems/level1/005_Matrix_scalar_multiplication/
sed -i 's/"dtype": "float32"/"dtype": "float33"/' root/problems/level1/005_Matrix_scalar_multiplication/spec.json
export KFORGE_ROOT="$T_TMP/root"
expect_exit 4 "list with a broken spec lists it as BROKEN and exits 4" "$KFORGE" problems list
contains "the good problem is still listed" "$T_TMP/out" "^level1/019_ReLU"
contains "the error names file and field" "$T_TMP/err" "005_Matrix_scalar_multiplication/spec.json: field \"inputs\[0\]\.dtype\": unknown dtype \"float33\""

expect_exit 0 "inputs writes .npy files" "$KFORGE" problems inputs 19 --out dump --seed 7
check "npy header and values readable" python3 -c "
import json,struct,sys
b = open('dump/inputs/x.npy','rb').read()
assert b[:6] == b'\x93NUMPY'
hl = b[8] | b[9] << 8
hdr = b[10:10+hl].decode()
assert \"'descr': '<f4'\" in hdr and '(2, 3)' in hdr, hdr
assert (10 + hl) % 64 == 0
v = struct.unpack('<6f', b[10+hl:])
assert all(0 <= x < 1 for x in v) and len(set(v)) == 6, v
assert json.load(open('dump/spec.json'))['seed'] == 7"
check "oracle sample is relu of the written inputs" python3 -c "
import json,struct,sys
b = open('dump/inputs/x.npy','rb').read()
hl = b[8] | b[9] << 8
x = struct.unpack('<6f', b[10+hl:])
o = json.load(open('dump/oracle/y.json'))
assert o['index'] == list(range(6)), o
assert all(abs(v - max(x[i], 0)) < 1e-12 for i, v in zip(o['index'], o['value'])), (x, o)"
cp dump/inputs/x.npy first.npy
"$KFORGE" problems inputs 19 --out dump --seed 7 >/dev/null
check "same seed, same bytes" cmp -s first.npy dump/inputs/x.npy
"$KFORGE" problems inputs 19 --out dump --seed 8 >/dev/null
check_fail "another seed, other bytes" cmp -s first.npy dump/inputs/x.npy
expect_exit 2 "inputs without --out is a usage error" "$KFORGE" problems inputs 19
expect_exit 0 "inputs --inputs-only" "$KFORGE" problems inputs 19 --out only --seed 7 --inputs-only
check "--inputs-only: the same inputs" cmp -s first.npy only/inputs/x.npy
check "--inputs-only: spec.json, no oracle sample" sh -c 'test -s only/spec.json && test ! -e only/oracle'
expect_exit 2 "--inputs-only with --gpu-reference is a usage error" "$KFORGE" problems inputs 19 --out only --inputs-only --gpu-reference

# NVRTC (the CUDA toolkit, no GPU): the GPU fill kernels and every reference compile
if [ -e /usr/local/cuda/lib64/libnvrtc.so ] || ldconfig -p 2>/dev/null | grep -q libnvrtc; then
	expect_exit 0 "NVRTC compiles the fill kernels and the references" \
		"$KF_BUILD/tests/record_philox_fixture" --compile-only "$KF_ROOT"/problems/level1/*/reference.cu
	n=$(grep -c '^ok .*reference.cu' "$T_TMP/out")
	m=$(ls "$KF_ROOT"/problems/level1/*/reference.cu | wc -l)
	check "every reference.cu compiled ($n of $m)" test "$n" -eq "$m"
else
	skip "NVRTC not installed: fill kernels and references not compiled"
fi

# The GPU fill kernels run on the host (threads as a block, a barrier as
# __syncthreads): their bits equal the CPU generator's for every fixture tensor.
if command -v c++ >/dev/null 2>&1; then
	if c++ -std=c++17 -O1 -ffp-contract=off -pthread -I"$KF_ROOT" -o emu "$KF_ROOT/tests/tools/emulate_fill.cpp" 2>emu.err; then
		ok "the fill kernels build for host emulation"
		python3 "$KF_ROOT/tests/tools/emulate_fixture.py" ./emu "$KF_ROOT/tests/fixtures/philox_spec.json" >emu.json
		KF_PHILOX_FIXTURE="$T_TMP/emu.json" "$KF_BUILD/tests/test_philox" >emu.out 2>&1
		contains "emulated GPU kernels give the CPU generator's bits" emu.out "^ok 1 - test_gpu_fixture"
	else
		nok "the fill kernels build for host emulation"; sed 's/^/# /' emu.err | head -n 10
	fi
else
	skip "no C++ compiler: fill kernels not emulated"
fi

# References run on the host (CUDA emulated) at small sizes match the CPU
# oracle element for element; all 42: tests/tools/emulate_refs.py KFORGE ROOT DIR
if command -v c++ >/dev/null 2>&1; then
	mkdir emr
	python3 "$KF_ROOT/tests/tools/emulate_refs.py" "$KFORGE" "$KF_ROOT" "$T_TMP/emr" 23 33 35 92 95 97 100 >emr.out 2>&1
	for n in 023 033 035 092 095 097 100; do
		contains "emulated reference $n matches the oracle" emr.out "^ok ${n}_"
	done
else
	skip "no C++ compiler: references not emulated"
fi

# PyTorch itself (CPU, small sizes) agrees with the oracle, through
# tools/torch_crosscheck.py, where a Python with torch and numpy exists
PYT=""
for p in python3 /usr/bin/python3; do
	if "$p" -c "import torch, numpy" 2>/dev/null; then PYT=$p; break; fi
done
if [ -n "$PYT" ]; then
	nums="5 $(seq 19 40) 47 48 49 51 52 53 $(seq 88 100)"
	# F.scaled_dot_product_attention came with torch 2.0
	"$PYT" -c "import torch.nn.functional as F; F.scaled_dot_product_attention" 2>/dev/null ||
		nums=$(echo $nums | tr ' ' '\n' | grep -vx 97)
	mkdir ts
	expect_exit 0 "PyTorch agrees with the oracle on every probsA problem (small sizes)" \
		"$PYT" "$KF_ROOT/tests/tools/torch_small.py" "$KFORGE" "$KF_ROOT" "$T_TMP/ts" $nums
	n=$(grep -c ' ok ' "$T_TMP/out")
	check "each of them checked ($n)" test "$n" -eq "$(echo $nums | wc -w)"
	# tools/torch_baseline.py on the CPU (a smoke test: layout and import)
	expect_exit 0 "torch_baseline.py writes KernelBench's layout" "$PYT" "$KF_ROOT/tools/torch_baseline.py" \
		--root "$T_TMP/ts/root" --device cpu --problems 19,95 --trials 3 --flush-mb 1 --out "$T_TMP/bl"
	check "both problems timed with every field" "$PYT" -c "
import json,sys
d = json.load(open('$T_TMP/bl/cpu/baseline_time_torch.json'))['level1']
sys.exit(0 if sorted(d) == ['19_ReLU.py', '95_CrossEntropyLoss.py'] and all(
    set(e) >= {'mean','std','min','max','median','num_trials','hardware','device'} and e['num_trials'] == 3
    for e in d.values()) else 1)"
	KFORGE_ROOT="$T_TMP/ts/root" expect_exit 0 "kforge baselines import reads it" \
		"$KFORGE" baselines import "$T_TMP/bl/cpu/baseline_time_torch.json" --gpu cpu --variant eager
	contains "two imported" "$T_TMP/out" "imported 2 eager"
else
	skip "no Python with torch and numpy: PyTorch cross-check at small sizes not run"
fi
