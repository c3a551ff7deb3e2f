#!/bin/sh
# Level-2 PyTorch tools where torch is missing: what they would check and
# write (--dry-run), their argument errors, scripts/compare_baselines.py
# on synthetic JSON, and tools/gpu_level2.sh's problems-check step with a
# stub kforge (the GPU run itself: tools/gpu_level2.sh on a GPU machine).
. "$KF_ROOT/tests/lib.sh"
T="$KF_ROOT/tools"
command -v python3 >/dev/null 2>&1 || { skip "no python3"; exit 0; }

# torch_crosscheck.py: level-2 and level-3 IDs as kforge takes them
printf '#!/bin/sh\necho "$*"\n' >"$T_TMP/argv.sh"
chmod +x "$T_TMP/argv.sh"
expect_exit 0 "crosscheck --level 2 --dry-run" python3 "$T/torch_crosscheck.py" --level 2 --dump d --dry-run
check "lists the 100 level-2 problems" test "$(grep -c '^level2/[0-9][0-9][0-9]_[^ ]* d/[0-9][0-9][0-9]_' "$T_TMP/out")" -eq 100
expect_exit 0 "a filter" python3 "$T/torch_crosscheck.py" --level 2 --dump d --dry-run --problems 66,Dropout
check "66 and 83 (name) only" test "$(cut -d' ' -f1 "$T_TMP/out" | tr '\n' ' ')" = \
	"level2/066_Matmul_Dropout_Softmax level2/083_Conv3d_GroupNorm_Min_Clamp_Dropout "
expect_exit 0 "level 1 keeps bare names" python3 "$T/torch_crosscheck.py" --dump d --dry-run --problems 19
contains "019_ReLU" "$T_TMP/out" "^019_ReLU d/019_ReLU$"
expect_exit 0 "level 3 lists its problems" python3 "$T/torch_crosscheck.py" --level 3 --dump d --dry-run
check "all of problems/level3" test "$(grep -c '^level3/[0-9][0-9][0-9]_[^ ]* d/[0-9][0-9][0-9]_' "$T_TMP/out")" -eq \
	"$(ls -d "$KF_ROOT"/problems/level3/*/ | wc -l)"
expect_exit 2 "level 4 is refused" python3 "$T/torch_crosscheck.py" --level 4 --dump d --dry-run
contains "saying so" "$T_TMP/err" "only levels 1, 2, 3"
expect_exit 0 "crosscheck_all.sh GPU_REF=1 passes --gpu-reference on" env DRY_RUN=1 GPU_REF=1 \
	PYTHON="$T_TMP/argv.sh" sh "$T/crosscheck_all.sh" --level 3 /tmp/kfx 35
contains "to torch_crosscheck.py" "$T_TMP/out" "--level 3 .*--gpu-reference"
expect_exit 2 "a filter matching nothing is an error" python3 "$T/torch_crosscheck.py" --level 2 --dump d --dry-run --problems 999
expect_exit 0 "crosscheck_all.sh --level 2 (DRY_RUN)" env DRY_RUN=1 sh "$T/crosscheck_all.sh" --level 2 /tmp/kfx 12
contains "passes level and filter on" "$T_TMP/out" "^level2/012_Gemm_Multiply_LeakyReLU /tmp/kfx/012_"
expect_exit 2 "crosscheck_all.sh: an unknown option" sh "$T/crosscheck_all.sh" --levle 2

# torch_baseline.py: one file per variant, KernelBench's level key
expect_exit 0 "baseline --dry-run, all variants" python3 "$T/torch_baseline.py" --level 2 --variant all \
	--gpu G --out bl --problems 66 --dry-run
contains "eager" "$T_TMP/out" "^level2/066_Matmul_Dropout_Softmax bl/G/baseline_time_torch.json level2/66_Matmul_Dropout_Softmax.py$"
contains "eager_notf32" "$T_TMP/out" " bl/G/baseline_time_torch_notf32.json level2/66_"
contains "compile" "$T_TMP/out" " bl/G/baseline_time_torch_compile_inductor_default.json level2/66_"
expect_exit 0 "a comma list" python3 "$T/torch_baseline.py" --level 2 --variant eager_notf32,eager --gpu G --out bl --problems 66 --dry-run
check "two files, in eager, eager_notf32 order" test "$(awk '{print $2}' "$T_TMP/out" | tr '\n' ' ')" = \
	"bl/G/baseline_time_torch.json bl/G/baseline_time_torch_notf32.json "
expect_exit 2 "an unknown variant" python3 "$T/torch_baseline.py" --variant fast --gpu G --dry-run
contains "names it" "$T_TMP/err" "unknown variant 'fast'"
expect_exit 2 "a negative time budget" python3 "$T/torch_baseline.py" --time-budget -1 --gpu G --dry-run
# --warm-jobs: the problems dealt into N compile-only, untimed child runs, each once
expect_exit 0 "a warm pass of 3 jobs" python3 "$T/torch_baseline.py" --level 2 --variant eager,compile \
	--gpu G --problems 1-7,66 --warm-jobs 3 --dry-run
check "three children, every problem in exactly one" python3 -c "
import re, sys
lines = [l for l in open('$T_TMP/out') if l.startswith('warm: ')]
shares = [re.search(r'--problems (\\S+)', l).group(1).split(',') for l in lines]
flat = sorted(int(x) for s in shares for x in s)
ok = len(lines) == 3 and flat == [1, 2, 3, 4, 5, 6, 7, 66]
ok = ok and all(' --variant compile --trials 1 ' in l and ' --level 2 ' in l for l in lines)
sys.exit(0 if ok else 1)"
expect_exit 0 "more jobs than problems" python3 "$T/torch_baseline.py" --level 2 --variant compile \
	--gpu G --problems 12,66 --warm-jobs 8 --dry-run
check "one child a problem" test "$(grep -c '^warm: ' "$T_TMP/out")" = 2
expect_exit 0 "no warm pass without compile" python3 "$T/torch_baseline.py" --level 2 --variant eager \
	--gpu G --problems 1-7 --warm-jobs 3 --dry-run
check "no child" test "$(grep -c '^warm: ' "$T_TMP/out")" = 0
expect_exit 2 "too many warm jobs" python3 "$T/torch_baseline.py" --warm-jobs 65 --gpu G --dry-run
expect_exit 2 "a zero warm timeout" python3 "$T/torch_baseline.py" --warm-jobs 2 --warm-timeout 0 --gpu G --dry-run
# a child that dies says so: here python3 lacks torch, so both children crash at its import
if ! python3 -c "import torch" 2>/dev/null; then
	expect_exit 1 "warm children without torch" python3 "$T/torch_baseline.py" --level 2 --problems 1,2,3 \
		--variant compile --warm-jobs 2 --out wj
	contains "the warm pass counts them" "$T_TMP/out" "^warm: 2 jobs, .* 0 compiled, 0 failed, 0 killed at the time limit, 2 crashed$"
	contains "and names each one's last words" "$T_TMP/out" "^warm: job 1 exit 1: ModuleNotFoundError: No module named 'torch'$"
fi

# compare_baselines.py: ratios measured / KernelBench and their geomeans
mkdir meas kb
cat >meas/baseline_time_torch.json <<'JSON'
{"level2": {"1_Conv2D_ReLU_BiasAdd.py": {"mean": 2.0}, "12_Gemm_Multiply_LeakyReLU.py": {"mean": 8.0},
 "66_Matmul_Dropout_Softmax.py": {"mean": 1.0}}, "level1": {"1_X.py": {"mean": 5.0}}}
JSON
echo '{"level2": {"1_Conv2D_ReLU_BiasAdd.py": {"mean": 3.0}}}' >meas/baseline_time_torch_notf32.json
echo '{"level2": {"1_Conv2D_ReLU_BiasAdd.py": {"mean": 1.0}}}' >meas/baseline_time_torch_compile_inductor_default.json
echo '{"level2": {"1_Conv2D_ReLU_BiasAdd.py": {"mean": 1.0}, "12_Gemm_Multiply_LeakyReLU.py": {"mean": 2.0}}}' \
	>kb/H100_Modal_baseline_time_torch.json
echo '{"level2": {"1_Conv2D_ReLU_BiasAdd.py": {"mean": 4.0}}}' >kb/H100_Modal_baseline_time_torch_compile_inductor_default.json
expect_exit 0 "compare_baselines.py" python3 "$KF_ROOT/scripts/compare_baselines.py" meas --kernelbench kb -o cmp.md
# eager/KB 2 and 4 (geomean sqrt 8), notf32/KB 3, notf32/eager 1.5, compile/KB 0.25, compile/eager 0.5
contains "problem 1's row" cmp.md '^\| 1 \| Conv2D_ReLU_BiasAdd \| 2 \| 3 \| 1 \| 1 \| 4 \| 2\.000 \| 3\.000 \| 1\.500 \| 0\.250 \| 0\.500 \|$'
contains "a problem KernelBench lacks: dashes" cmp.md '^\| 66 \| Matmul_Dropout_Softmax \| 1 \| — \| — \| — \| — \| — \| — \| — \| — \| — \|$'
contains "geomeans with their counts" cmp.md '^\| \| \*\*geomean\*\* \(problems\) \| \| \| \| \| \| \*\*2\.828\*\* \(2\) \| \*\*3\.000\*\* \(1\) \| \*\*1\.500\*\* \(1\) \| \*\*0\.250\*\* \(1\) \| \*\*0\.500\*\* \(1\) \|$'
lacks "level 1 left out" cmp.md '1_X'
check "rows in problem order" test "$(grep -Eo '^\| [0-9]+ ' cmp.md | tr -d '| ' | tr '\n' ' ')" = "1 12 66 "
expect_exit 0 "--level 1" python3 "$KF_ROOT/scripts/compare_baselines.py" meas --kernelbench kb --level 1
contains "reads that level" "$T_TMP/out" '^\| 1 \| X \| 5 \|'
mkdir bad
echo '{"level2": ' >bad/baseline_time_torch.json
expect_exit 1 "malformed JSON fails" python3 "$KF_ROOT/scripts/compare_baselines.py" bad --kernelbench kb
contains "naming the file" "$T_TMP/err" "bad/baseline_time_torch.json"
expect_exit 1 "no measurements fail" python3 "$KF_ROOT/scripts/compare_baselines.py" kb --kernelbench kb
contains "saying so" "$T_TMP/err" "no level-2 baselines in kb"

# gpu_level2.sh: arguments, and the check step with a stub kforge
expect_exit 2 "gpu_level2.sh without arguments" sh "$T/gpu_level2.sh"
expect_exit 2 "a non-numeric limit" sh "$T/gpu_level2.sh" out 10m
expect_exit 2 "an unknown step" sh "$T/gpu_level2.sh" out 600 check,bake
cat >stub <<'STUB'
#!/bin/sh
case "$*" in
--version) echo "kforge stub" ;;
*"problems check level2/001_"*) echo checked; exit 0 ;;
*"problems check level2/002_"*) echo "1 output(s) differ" >&2; exit 4 ;;
*"problems check level2/003_"*) exec sleep 30 ;;
*) exit 1 ;;
esac
STUB
chmod +x stub
expect_exit 0 "gpu_level2.sh check step" env KFORGE="$T_TMP/stub" PROBLEMS=1-3 CHECK_TIMEOUT=2 \
	sh "$T/gpu_level2.sh" g2 120 check
check "one row per problem" test "$(cut -f2 g2/check.tsv | tr '\n' ' ')" = "ok differs timeout "
contains "the summary counts them and names the bad ones" "$T_TMP/out" "^check: 3 of 3: differs 1, ok 1, timeout 1; not ok: 002 003 "
contains "it is written beside the results" g2/summary.txt "^check: 3 of 3"
contains "the log keeps kforge's words" g2/check.log "1 output\(s\) differ"
# the compile step warms inductor's caches in WARM_JOBS processes (default 4); eager does not
expect_exit 0 "gpu_level2.sh compile step" env KFORGE="$T_TMP/stub" PYTHON="$T_TMP/argv.sh" \
	sh "$T/gpu_level2.sh" g3 120 compile
contains "with four warm jobs" g3/baselines-compile.log "torch_baseline.py .*--variant compile .*--warm-jobs 4$"
expect_exit 0 "WARM_JOBS=2, compile and eager steps" env KFORGE="$T_TMP/stub" PYTHON="$T_TMP/argv.sh" \
	WARM_JOBS=2 sh "$T/gpu_level2.sh" g4 120 eager,compile
contains "two for compile" g4/baselines-compile.log "--warm-jobs 2$"
check "none for eager" sh -c "grep -q -- '--variant eager,eager_notf32' g4/baselines-eager.log && ! grep -q warm g4/baselines-eager.log"

# Where a Python with torch exists: the cross-check and the baselines run on
# the CPU at small sizes (problems/gen/level2/gen.py --small).
PYT=""
for p in python3 /usr/bin/python3; do
	if "$p" -c "import torch, numpy" 2>/dev/null; then PYT=$p; break; fi
done
if [ -z "$PYT" ]; then
	skip "no Python with torch and numpy: level-2 cross-check and baselines not run"
	exit 0
fi
expect_exit 0 "gen.py --small writes the small tree" "$PYT" "$KF_ROOT/problems/gen/level2/gen.py" --small small
# 11: BatchNorm in training mode; 26: a parameter forward never reads; 28: two
# inputs; 66, 83: dropout through the mask; 3: a 0-dim parameter
expect_exit 0 "cross-check of six level-2 problems on the CPU" env KFORGE="$KFORGE" KFORGE_ROOT="$T_TMP/small" \
	PYTHON="$PYT" DEVICE=cpu sh "$T/crosscheck_all.sh" --level 2 --json xc.json dump 3,11,26,28,66,83
contains "all agree" "$T_TMP/out" "^6 checked, 0 failed$"
check "the report has them" "$PYT" -c "import json,sys; r=json.load(open('xc.json')); sys.exit(0 if len(r)==6 and all(x['status']=='ok' for x in r) else 1)"
check "no dump left" sh -c "! ls dump/0* 2>/dev/null"
# --float64: the module in double agrees with the double references far
# below the fp32 tolerance (how 014's full-size fp32 mismatch was told apart)
expect_exit 0 "cross-check in float64" env KFORGE_ROOT="$T_TMP/small" "$PYT" "$T/torch_crosscheck.py" \
	--root small --level 2 --dump dump64 --device cpu --kforge "$KFORGE" --float64 --json x64.json --problems 14,28
check "to 1e-9" "$PYT" -c "import json,sys; r=json.load(open('x64.json')); sys.exit(0 if len(r)==2 and all(o['max_abs']<1e-9 for x in r for o in x['outputs']) else 1)"
# the check fails: the graph's dropout p differs from the module's
sed -i 's/"p": 0.2$/"p": 0.25/' small/problems/level2/066_*/spec.json
expect_exit 1 "a dropout p unlike the module's fails" env KFORGE_ROOT="$T_TMP/small" \
	"$PYT" "$T/torch_crosscheck.py" --root small --level 2 --dump dump --device cpu --kforge "$KFORGE" --problems 66
contains "saying why" "$T_TMP/out" "^level2/066_Matmul_Dropout_Softmax +error +RuntimeError: dropout p 0.2, the graph's 0.25"
# a mask the module's dropout does not use shows in the values
sed -i 's/"p": 0.25$/"p": 0.2/' small/problems/level2/066_*/spec.json
expect_exit 1 "an inverted mask fails" env KFORGE_ROOT="$T_TMP/small" \
	"$PYT" -c "
import sys, os
sys.path.insert(0, '$T')
import kfproblems, torch_crosscheck
real = kfproblems.MaskedDropout.__init__
def other_mask(self, spec, tensors):
    real(self, spec, tensors)
    self.masks = [(~m, p) for m, p in self.masks]
kfproblems.MaskedDropout.__init__ = other_mask
sys.argv = ['x', '--root', 'small', '--level', '2', '--dump', 'dump', '--device', 'cpu', '--kforge', '$KFORGE', '--problems', '66']
sys.exit(torch_crosscheck.main())"
contains "the inverted mask fails the check" "$T_TMP/out" "^level2/066_Matmul_Dropout_Softmax +FAIL"

expect_exit 0 "baselines eager and eager_notf32 on the CPU" "$PYT" "$T/torch_baseline.py" --root small --level 2 \
	--device cpu --variant eager,eager_notf32 --problems 1,66 --trials 2 --warmup 1 --flush-mb 1 --out bl \
	--record rec.json
check "both files in KernelBench's layout" "$PYT" -c "
import json, sys
e = json.load(open('bl/cpu/baseline_time_torch.json'))['level2']
n = json.load(open('bl/cpu/baseline_time_torch_notf32.json'))['level2']
ok = sorted(e) == sorted(n) == ['1_Conv2D_ReLU_BiasAdd.py', '66_Matmul_Dropout_Softmax.py']
ok = ok and all(v['num_trials'] == 2 and v['mean'] > 0 for v in list(e.values()) + list(n.values()))
sys.exit(0 if ok else 1)"
check "the record: four done, finished" "$PYT" -c "
import json, sys
r = json.load(open('rec.json'))
sys.exit(0 if len(r['done']) == 4 and not r['failed'] and not r['not_run'] and r['stopped'] == 'finished' else 1)"
expect_exit 0 "the notf32 file imports as eager_notf32" "$KFORGE" --db bl.db baselines import \
	bl/cpu/baseline_time_torch_notf32.json --gpu cpu --variant eager_notf32
contains "both problems" "$T_TMP/out" "imported 2 eager_notf32"
expect_exit 0 "a spent time budget stops cleanly" "$PYT" "$T/torch_baseline.py" --root small --level 2 \
	--device cpu --variant eager --problems 1,2,3 --trials 2 --warmup 1 --flush-mb 1 --out bl2 \
	--time-budget 0.001 --record rec2.json
contains "saying so" "$T_TMP/out" "stopped: time budget"
check "the record lists what was not run" "$PYT" -c "
import json, sys
r = json.load(open('rec2.json'))
sys.exit(0 if not r['done'] and len(r['not_run']) == 3 and r['stopped'].startswith('time budget') else 1)"
# TF32 settings that cannot be restored stop the run: eager would be timed without TF32
expect_exit 1 "a failed TF32 restore stops the baselines" "$PYT" -c "
import sys
sys.path.insert(0, '$T')
import kfproblems, torch_baseline
def bad_exit(self, *exc):
    raise kfproblems.TF32RestoreError('TF32 settings not restored: test')
kfproblems.NoTF32.__exit__ = bad_exit
sys.argv = ['x', '--root', 'small', '--level', '2', '--device', 'cpu', '--variant', 'eager,eager_notf32',
            '--problems', '1,66', '--trials', '2', '--warmup', '1', '--flush-mb', '1', '--out', 'bl3', '--record', 'rec3.json']
sys.exit(torch_baseline.main())"
check "the record: eager of 1 done, its notf32 failed, 66 not run" "$PYT" -c "
import json, sys
r = json.load(open('rec3.json'))
sys.exit(0 if [d['variant'] for d in r['done']] == ['eager'] and len(r['failed']) == 1
         and [x['id'][7:10] for x in r['not_run']] == ['066'] and r['stopped'].startswith('TF32 settings not restored') else 1)"

# kforge problems inputs: the sample's source; --gpu-reference needs a GPU
# (where there is none it says so and writes no sample)
expect_exit 0 "problems inputs writes the oracle sample" "$KFORGE" problems inputs level2/012 --out inp --samples 16
check "marked as the CPU oracle's" grep -q '"source":"cpu oracle"' inp/oracle/out.json
if ! "$KFORGE" gpu-info >/dev/null 2>&1; then
	expect_exit 1 "--gpu-reference without a GPU fails" "$KFORGE" problems inputs level2/012 --out inp2 \
		--gpu-reference --samples 16
	contains "saying why" "$T_TMP/err" "no CUDA driver|no GPU"
	check "and writes no sample" test ! -e inp2/oracle/out.json
fi
