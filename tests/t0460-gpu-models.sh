#!/bin/sh
# A host with GPUs of two models (issue 43), with tests/helpers/fake_worker
# standing in for the GPU workers (KFORGE_WORKER_TEST_GPUS names the
# devices' models, KFORGE_WORKER_EXE runs the stand-in): gpu-info --models
# lists each model once; search and eval run on one model (device 0's, or
# --gpu-model, or KFORGE_GPU_MODEL; the option wins) and record their
# evaluations under it; verify verifies on each model in turn (its own
# verdicts, its sanitizer child on the same model) unless one is named; an
# unknown model is a usage error naming the models present.
. "$KF_ROOT/tests/lib.sh"
export KFORGE_ROOT="$KF_ROOT"
C="$KF_ROOT/tests/candidates"
DB="$KFORGE_DB"
q() { sqlite3 "${2:-$DB}" "$1"; }

need_nvrtc "the engine compiles the kernels"
export KFORGE_WORKER_TEST_GPUS="Fake A,Fake B,Fake A" FAKE_WORKER_NAMES="Fake A,Fake B,Fake A"
export KFORGE_WORKER_EXE="$KF_BUILD/tests/fake_worker"
unset KFORGE_GPU_MODEL

expect_exit 0 "gpu-info --models exits 0" "$KFORGE" gpu-info --models
check "gpu-info --models: each model once, GPU 0's first" test "$(cat "$T_TMP/out")" = "$(printf 'Fake A\nFake B')"
expect_exit 0 "gpu-info --models --json" "$KFORGE" gpu-info --models --json
check "its GPUs per model" python3 -c "
import json, sys
d = json.load(open('$T_TMP/out'))
sys.exit(0 if d == [{'name': 'Fake A', 'devices': [0, 2]}, {'name': 'Fake B', 'devices': [1]}] else 1)"

# A search on the default model: GPU 0's.
expect_exit 0 "search on the default model" "$KFORGE" search --problems 19 --rounds 0 --ideas 1 --impls 1 --proposer builtin
contains "says which GPUs it leaves alone" "$T_TMP/err" "running on 2 GPUs of model 'Fake A' only; not used: 'Fake B' \(GPU 1\)"
check "its evaluations are Fake A's" test "$(q "select group_concat(distinct gpu_name) from evals")" = "Fake A"
check "so is its run" test "$(q "select gpu_name from runs")" = "Fake A"
cp "$DB" searched.db

# eval: --gpu-model, KFORGE_GPU_MODEL, the option over the variable.
expect_exit 0 "eval --gpu-model 'Fake B'" "$KFORGE" --db e.db eval 19 "$C/relu_ok.cu" --gpu-model "Fake B" --json
check "recorded under Fake B" test "$(q "select gpu_name from evals" e.db)" = "Fake B"
check "eval --json says Fake B" python3 -c "import json,sys; sys.exit(0 if json.load(open('$T_TMP/out'))['gpu'] == 'Fake B' else 1)"
expect_exit 0 "eval with KFORGE_GPU_MODEL='Fake A' and --gpu-model 'Fake B'" env KFORGE_GPU_MODEL="Fake A" "$KFORGE" --db e.db eval 19 "$C/relu_ok.cu" --gpu-model "Fake B" --json
check "the option wins: served from B's row" python3 -c "import json,sys; d=json.load(open('$T_TMP/out')); sys.exit(0 if d['gpu'] == 'Fake B' and d['cached'] else 1)"
expect_exit 0 "eval with KFORGE_GPU_MODEL='Fake A'" env KFORGE_GPU_MODEL="Fake A" "$KFORGE" --db e.db eval 19 "$C/relu_ok.cu"
check "the same kernel on A is an evaluation of its own" test "$(q "select count(distinct id) || ' ' || group_concat(gpu_name, ',') from (select id, gpu_name from evals order by gpu_name)" e.db)" = "2 Fake A,Fake B"
expect_exit 2 "eval on an unknown model exits 2" "$KFORGE" --db e.db eval 19 "$C/relu_ok.cu" --gpu-model "H100"
contains "naming the models present" "$T_TMP/err" "no GPU of model 'H100' here; this host has 'Fake A' \(GPUs 0, 2\), 'Fake B' \(GPU 1\)"
expect_exit 2 "search --check on an unknown model exits 2" env KFORGE_GPU_MODEL="H100" "$KFORGE" search --check --problems 19
contains "and says why" "$T_TMP/err" "no GPU of model 'H100' here"
expect_exit 2 "search on an unknown model exits 2" "$KFORGE" --db s.db search --problems 19 --rounds 0 --gpu-model "H100"
expect_exit 0 "search --gpu-model 'Fake B'" "$KFORGE" --db s.db search --problems 19 --rounds 0 --ideas 1 --impls 1 --proposer builtin --gpu-model "Fake B"
check "its evaluations and run are Fake B's" test "$(q "select (select group_concat(distinct gpu_name) from evals) || '/' || gpu_name from runs" s.db)" = "Fake B/Fake B"

# verify, no model named: each model in turn, with a sanitizer (a stand-in
# that logs its arguments and runs the child eval) on the model verified.
cat >san.sh <<EOF
#!/bin/sh
echo "ARGS \$*" >>"$T_TMP/san.log"
shift 6
"\$@" >>"$T_TMP/san.log" 2>&1
EOF
chmod +x san.sh
expect_exit 0 "verify on every model" "$KFORGE" verify --problems 19 --sanitizer "$T_TMP/san.sh"
contains "says it verifies each model" "$T_TMP/err" "verify: 2 GPU models here; verifying on each in turn"
contains "A's summary" "$T_TMP/out" "^1 verified .*, 0 failed on Fake A$"
contains "B's summary" "$T_TMP/out" "^1 verified .*, 0 failed on Fake B$"
check "a verdict per model" test "$(q "select group_concat(gpu_name, ',') from (select gpu_name from verifications order by gpu_name)")" = "Fake A,Fake B"
check "a verify-v4 evaluation per model" test "$(q "select group_concat(gpu_name, ',') from (select gpu_name from evals where protocol = 'verify-v4' order by gpu_name)")" = "Fake A,Fake B"
check "the verdicts hold their GPU's evaluation" test "$(q "select count(*) from verifications v join evals e on e.id = v.eval_id where e.gpu_name = v.gpu_name")" -eq 2
check "the sanitizer ran per model, on that model" test "$(grep -c '^ARGS .* --gpu-model Fake [AB]$' san.log)" -eq 4
contains "memcheck on A" san.log "^ARGS --tool memcheck .* --gpu-model Fake A$"
contains "memcheck on B" san.log "^ARGS --tool memcheck .* --gpu-model Fake B$"
contains "the sanitized eval ran on B" san.log "gpu: Fake B$"

# One model named: its verdicts only; the option over the variable.
cp searched.db b.db
expect_exit 0 "verify with KFORGE_GPU_MODEL='Fake B'" env KFORGE_GPU_MODEL="Fake B" "$KFORGE" --db b.db verify --problems 19 --no-sanitizer --json
check "--json: B's verdict only, with its GPU" python3 -c "
import json, sys
d = json.load(open('$T_TMP/out'))
sys.exit(0 if [x['gpu_name'] for x in d] == ['Fake B'] else 1)"
check "B's verification only" test "$(q "select group_concat(gpu_name) from verifications" b.db)" = "Fake B"
cp searched.db a.db
expect_exit 0 "verify --gpu-model 'Fake A' over KFORGE_GPU_MODEL='Fake B'" env KFORGE_GPU_MODEL="Fake B" "$KFORGE" --db a.db verify --problems 19 --no-sanitizer --gpu-model "Fake A"
check "A's verification only" test "$(q "select group_concat(gpu_name) from verifications" a.db)" = "Fake A"
lacks "one summary line" "$T_TMP/out" "failed on Fake B"
expect_exit 2 "verify on an unknown model exits 2" "$KFORGE" --db a.db verify --gpu-model "Fake C"
contains "naming the models present" "$T_TMP/err" "no GPU of model 'Fake C' here; this host has 'Fake A' \(GPUs 0, 2\), 'Fake B' \(GPU 1\)"

# One model (the common host): as before, one summary, nothing left alone.
cp searched.db one.db
expect_exit 0 "verify on a host of one model" env KFORGE_WORKER_TEST_GPUS=2 FAKE_WORKER_NAMES= "$KFORGE" --db one.db verify --problems 19 --no-sanitizer
check "one summary line" test "$(grep -c 'failed on' "$T_TMP/out")" -eq 1
contains "on its model" "$T_TMP/out" "failed on Fake GPU$"
lacks "no GPU left alone" "$T_TMP/err" "not used|GPU models here"

# Problems searched at once: by default 4, or twice the pool's GPUs where that is more (a
# problem's round 0 is one evaluation: 4 at once would leave most of 8 GPUs idle); --jobs wins.
for g in 8 1; do
	expect_exit 0 "search 18 problems on $g GPU(s) of one model" env KFORGE_WORKER_TEST_GPUS=$g FAKE_WORKER_NAMES= \
		"$KFORGE" --db jobs$g.db search --problems 19-36 --rounds 0 --ideas 1 --impls 1 --proposer builtin
done
check "  8 GPUs: 16 at once" test "$(q "select jobs from search_sessions" jobs8.db)" -eq 16
check "  1 GPU: 4 at once" test "$(q "select jobs from search_sessions" jobs1.db)" -eq 4
expect_exit 0 "search on 8 GPUs with --jobs 3" env KFORGE_WORKER_TEST_GPUS=8 FAKE_WORKER_NAMES= \
	"$KFORGE" --db jobs3.db search --problems 19-36 --rounds 0 --ideas 1 --impls 1 --proposer builtin --jobs 3
check "  --jobs wins" test "$(q "select jobs from search_sessions" jobs3.db)" -eq 3

# verify compiles the next kernel while the GPU checks and times the current one: every
# verification evaluation but the first takes its compile from that prefetch.
expect_exit 0 "verify 3 problems on one GPU" env KFORGE_WORKER_TEST_GPUS=1 FAKE_WORKER_NAMES= \
	"$KFORGE" --db jobs1.db verify --problems 19-21 --no-sanitizer
nv=$(q "select count(*) from evals where protocol = 'verify-v4'" jobs1.db)
np=$(q "select count(*) from evals where protocol = 'verify-v4' and json_extract(env, '\$.compile_prefetched')" jobs1.db)
check "  $np of its $nv evaluations took a prefetched compile (all but the first)" test "$nv" -ge 3 -a "$np" -eq $((nv - 1))
check "  the first compiled on its own" test "$(q "select json_extract(env, '\$.compile_prefetched') is null from evals where protocol = 'verify-v4' order by created_at, rowid limit 1" jobs1.db)" -eq 1
