#!/bin/sh
# The LLM proposer against a loopback chat-completions server: ideas with
# categories, implementations (launch block inline or in its own fence),
# repair, token accounting, concurrency, budget, response cache and replay.
. "$KF_ROOT/tests/lib.sh"
. "$KF_ROOT/tests/llm-lib.sh"

script fast '{"concurrency": 4, "timeout_s": 5, "retries": 1, "backoff_base_s": 0.01}'
export KFORGE_LLM_CONFIG="$T_TMP/fast.json"
start_mock normal

llm ideas --k 4 --record "$T_TMP/rec-ideas.json" ideas
check "ideas: call succeeds" test "$rc" -eq 0
check "ideas: four ideas" test "$(field ideas '.ideas | length')" -eq 4
check "ideas: model labels kept" test "$(field ideas '.ideas[0].categories | join(",")')" = "memory,parallelism"
check "ideas: labels say model" test "$(field ideas '.ideas[0].method')" = model
check "ideas: unlabelled idea classified by keywords" test "$(field ideas '.ideas[3].method')" = keyword
check "ideas: keyword category" test "$(field ideas '.ideas[3].categories | join(",")')" = precision
check "ideas: http status recorded" test "$(field ideas '.record.http_status')" -eq 200
check "ideas: prompt tokens recorded" test "$(field ideas '.record.prompt_tokens')" -gt 0
check "ideas: reasoning tokens recorded" test "$(field ideas '.record.reasoning_tokens')" -eq 5
check "ideas: model recorded" test "$(field ideas '.record.model')" = mock-model
contains "ideas: history is in the prompt" "$T_TMP/normal.log" 'Use shared memory tiling.*best speedup over PyTorch eager: 1.50x'
contains "ideas: asks for 4" "$T_TMP/normal.log" 'Propose 4 new optimization ideas'
contains "ideas: the PyTorch reference is in the prompt" "$T_TMP/normal.log" 'return torch.relu'
contains "ideas: the GPU is in the prompt" "$T_TMP/normal.log" 'NVIDIA H100 80GB HBM3'
sha=$(printf %s "$KFORGE_LLM_API_KEY" | sha256sum | cut -d' ' -f1)
contains "the bearer token arrived" "$T_TMP/normal.log" "\"auth_sha256\":\"$sha\""
check "request hash is the SHA-256 of the recorded request" test \
	"$(jq -j '.[0].record.request' "$T_TMP/rec-ideas.json" | sha256sum | cut -d' ' -f1)" = "$(field ideas '.record.request_sha256')"

llm impl --m 3 implement
check "implement: call succeeds" test "$rc" -eq 0
check "implement: three proposals" test "$(field impl '[.proposals[] | select(.source != null)] | length')" -eq 3
check "implement: launch fence appended as a launch block" test \
	"$(field impl '.proposals[1].source | test("\n/\\*@launch\nrelu_v1<<<.*\n@\\*/\n$")')" = true
check "implement: rationale kept as note" test "$(field impl '.proposals[0].note')" = "Variant 0 uses blocks of 128 threads for coalesced loads."
contains "implement: prompt teaches the format with an example" "$T_TMP/normal.log" 'A worked example.*relu_f32<<<'
contains "implement: seed kernel with its time" "$T_TMP/normal.log" 'kernel_r0_ref \(1.25 ms, 0.90x'

llm repair repair
check "repair: call succeeds" test "$rc" -eq 0
check "repair: one proposal" test "$(field repair '.proposals[0].source | contains("relu_v7")')" = true
contains "repair: the failure is in the prompt" "$T_TMP/normal.log" 'What went wrong: compile_error.*identifier'

# many calls from many threads, at most 4 in flight
n0=$(requests normal)
llm conc --calls 8 --threads 8 implement
check "concurrent calls all succeed" test "$rc" -eq 0
check "concurrent calls: 8 results" test "$(grep -c '"rc":0' "$T_TMP/conc.out")" -eq 8
check "concurrent calls: 8 requests" test $(( $(requests normal) - n0 )) -eq 8
check "distinct seeds make distinct requests" test "$(jq -r .record.request_sha256 "$T_TMP/conc.out" 2>/dev/null | sort -u | wc -l)" -eq 8

# token budget: the first call spends it, the rest are refused without a request
n0=$(requests normal)
llm budget --budget 10 --calls 3 ideas
check "budget: exit 3" test "$rc" -eq 3
check "budget: first call done" test "$(sed -n 1p "$T_TMP/budget.out" | jq .rc)" -eq 0
check "budget: later calls refused" test "$(sed -n 3p "$T_TMP/budget.out" | jq .rc)" -eq -2
contains "budget: says why" "$T_TMP/budget.out" 'token budget of 10 spent'
check "budget: one request sent" test $(( $(requests normal) - n0 )) -eq 1

# cache and replay
mkdir -p "$T_TMP/cache"
llm rec1 --m 2 --seed 7 --cache "$T_TMP/cache" implement
check "recording run succeeds" test "$rc" -eq 0
check "response stored under the request hash" test -f "$T_TMP/cache/$(field rec1 .record.request_sha256).json"
stop_mock
llm rep1 --m 2 --seed 7 --cache "$T_TMP/cache" --replay implement
check "replay succeeds with no server" test "$rc" -eq 0
check "replay is served from the cache" test "$(field rep1 .record.cached)" -eq 1
check "replay gives the same kernels" test "$(field rec1 '.proposals')" = "$(field rep1 '.proposals')"
check "replay counts the recorded tokens" test "$(field rep1 .record.prompt_tokens)" = "$(field rec1 .record.prompt_tokens)"
llm rep2 --m 2 --seed 8 --cache "$T_TMP/cache" --replay implement
check "replay miss fails" test "$rc" -eq 1
contains "replay miss says so" "$T_TMP/rep2.out" 'replay: no recorded response'
llm rep3 --m 2 --seed 7 --replay implement
check "replay without a cache fails" test "$rc" -eq 1

# the key is in no file we wrote
if grep -rqF "$KFORGE_LLM_API_KEY" "$T_TMP"; then nok "API key found in $(grep -rlF "$KFORGE_LLM_API_KEY" "$T_TMP" | head -n 3)"; else ok "API key appears in no file"; fi
