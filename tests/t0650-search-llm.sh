#!/bin/sh
# The search end to end with the real engine (compile only, no GPU) and
# the LLM proposer against the loopback mock server: runs, is killed
# (SIGKILL) at random points and resumed to the rows of an uninterrupted
# run, replays with no network to the same kernels, records a failed
# call and goes on, and never writes the API key anywhere.
. "$KF_ROOT/tests/lib.sh"
. "$KF_ROOT/tests/llm-lib.sh"
export KFORGE_ROOT="$KF_ROOT"
DUMP="python3 $KF_ROOT/tests/tools/dbdump.py"
EXCL="--exclude runs.created_at --exclude runs.finished_at --exclude rounds.started_at
 --exclude rounds.finished_at --exclude llm_calls.created_at --exclude llm_calls.latency_ms --exclude llm_calls.attempts
 --exclude ideas.created_at --exclude candidates.created_at --exclude kernels.created_at
 --exclude compiles.created_at --exclude compiles.duration_ms --exclude compiles.log
 --exclude evals.created_at --exclude evals.env
 --exclude search_sessions"
need_nvrtc "compile-only searches cannot run"
ARGS="--problems 19,20,21 --compile-only --rounds 3 -k 2 -m 2 --proposer llm"
q() { sqlite3 "$1" "$2"; }

start_mock ref
expect_exit 0 "search of 3 problems against the mock LLM" "$KFORGE" --db ref.db search $ARGS
contains "finished" "$T_TMP/out" "finished: 3 problems, 39 kernels evaluated"
check "every kernel compiled and recorded as not_run" test "$(q ref.db "select count(*) from candidates where status = 'not_run'")" = 39
check "every call answered (HTTP 200), recorded with its request hash" \
	test "$(q ref.db "select count(*) from llm_calls where http_status = 200 and length(request_sha256) = 64")" = 27
check "ideas carry categories" test "$(q ref.db 'select count(*) from ideas where id not in (select idea_id from idea_categories)')" = 0
check "the model is recorded" test "$(q ref.db 'select count(distinct model) from llm_calls')" = 1

# Killed at random points, resumed each time. Starting kforge takes long
# next to this small search's steps, so a point is drawn as "after the
# store holds one more kernel, plus 0-30 ms".
total=$(q ref.db 'select count(*) from candidates')
kills=0; i=0; progressed=0; last=0
while [ "$kills" -lt 10 ] && [ "$i" -lt 40 ]; do
	i=$((i + 1))
	if [ "$(q k.db 'select count(*) from runs' 2>/dev/null)" = 1 ]; then A="--jobs 1"; else A="$ARGS --jobs 1"; fi
	"$KFORGE" --db k.db search $A >k.out 2>&1 &
	pid=$!
	set -- $(awk -v s="$i$$" 'BEGIN{srand(s); printf "%d %.3f", 1, rand() * 0.03}')
	target=$((last + $1)); w=0
	while kill -0 "$pid" 2>/dev/null && [ "$(q k.db 'select count(*) from candidates' 2>/dev/null || echo 0)" -lt "$target" ] && [ $w -lt 300 ]; do
		sleep 0.02; w=$((w + 1))
	done
	sleep "$2"
	kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
	wait "$pid" 2>/dev/null
	n=$(q k.db 'select count(*) from candidates' 2>/dev/null || echo 0)
	[ "${n:-0}" -gt "$last" ] && progressed=$((progressed + 1)); last=${n:-0}
	[ "$(q k.db 'select status from runs' 2>/dev/null)" = finished ] && break
done
"$KFORGE" --db k.db search >k.out 2>&1 || "$KFORGE" --db k.db search $ARGS --jobs 1 >k.out 2>&1
check "resumed search finishes" grep -q ' finished' k.out
if [ "$kills" -ge 10 ]; then ok "killed $kills times, $progressed of them after new kernels"; else nok "only $kills kills"; fi
$DUMP $EXCL ref.db >ref.txt
$DUMP $EXCL k.db >k.txt
if cmp -s ref.txt k.txt; then ok "same rows as the uninterrupted run"; else
	nok "rows differ"; diff ref.txt k.txt | cut -c1-200 | head -n 10 | sed 's/^/# /'; fi
check "integrity_check ok" test "$(q k.db 'PRAGMA integrity_check')" = ok
stop_mock

# Replay: no network (nothing listens on port 9), the same kernels.
KFORGE_LLM_BASE_URL=http://127.0.0.1:9/v1 expect_exit 0 "replay of the latest run with no network" \
	"$KFORGE" --db ref.db search --replay
check "every replayed call came from the store" \
	test "$(q ref.db "select count(*) from llm_calls where cached = 1 and error is null")" = 27
check "the replay made the same kernels" test -z "$(q ref.db "
	select problem_id, round, impl_index, kernel_hash from candidates where run_id = (select id from runs order by rowid limit 1)
	except select problem_id, round, impl_index, kernel_hash from candidates where run_id = (select id from runs order by rowid desc limit 1)")"
check "two runs" test "$(q ref.db 'select count(*) from runs')" = 2
KFORGE_LLM_BASE_URL=http://127.0.0.1:9/v1 expect_exit 0 "replay with explicit options is the same replay run" \
	"$KFORGE" --db ref.db search $ARGS --replay
contains "already finished" "$T_TMP/out" "finished: .*\(resumed\)"

# A call that fails after its retries is recorded, the search goes on,
# and the run ends "failed" so that resuming retries the call.
printf '{"retries": 0, "backoff_base_s": 0}\n' >llm.json
script fail '{"steps": [{"mode": "500"}]}'
start_mock fail --script "$T_TMP/fail.json"
KFORGE_LLM_CONFIG="$T_TMP/llm.json" expect_exit 1 "a search with a failing call ends failed" \
	"$KFORGE" --db f.db search --problems 19 --compile-only --rounds 2 -k 2 -m 1 --proposer llm --no-reference
contains "saying how to retry" "$T_TMP/err" "1 proposer calls failed; run kforge search again"
check "the failed call is recorded with its error" test "$(q f.db "select count(*) from llm_calls where error is not null")" = 1
check "later rounds went on" test "$(q f.db "select count(*) from candidates where round = 2")" -gt 0
check "the round of the failed call stays open" test "$(q f.db "select status from rounds where round = 1")" = open
FAILED_ID=$(q f.db "select id from llm_calls where error is not null")
check "the run records the model it was started with" test "$(q f.db "select model || ' ' || json_extract(config, '\$.model') from runs")" = "mock-model mock-model"
# Resumed in another environment: the run's recorded model is used.
KFORGE_LLM_MODEL=other-model KFORGE_LLM_CONFIG="$T_TMP/llm.json" expect_exit 0 "resuming retries it and finishes" "$KFORGE" --db f.db search
check "the failed attempt is kept, as ID#1" test "$(q f.db "select id || ' ' || attempt || ' ' || retry_of from llm_calls where error is not null")" = "$FAILED_ID#1 1 $FAILED_ID"
check "the call's id holds the retry, attempt 2, answered" test "$(q f.db "select attempt || ' ' || http_status || ' ' || coalesce(error, '-') from llm_calls where id = '$FAILED_ID'")" = "2 200 -"
check "the resumed run asked with its recorded model, not the environment's" test "$(q f.db "select group_concat(distinct model) from llm_calls")" = mock-model
check "round 1 has its kernels now" test "$(q f.db "select count(*) from candidates where round = 1")" -gt 0
stop_mock

# The endpoint down: a problem stops after 3 failed calls in a row (the run
# is "failed", not "finished"); with the endpoint back, resuming retries
# the failed calls and finishes.
start_mock down --default 500
KFORGE_LLM_CONFIG="$T_TMP/llm.json" expect_exit 1 "a search with the endpoint down fails" \
	"$KFORGE" --db d.db search --problems 19 --compile-only --rounds 3 -k 2 -m 1 --proposer llm --no-reference
contains "and says why" "$T_TMP/err" "failed 3 times in a row"
check "the run can be resumed" test "$(q d.db 'select status from runs')" = failed
check "the failed calls are recorded" test "$(q d.db 'select count(*) from llm_calls where error is not null')" = 3
start_mock up
KFORGE_LLM_CONFIG="$T_TMP/llm.json" expect_exit 0 "resumed with the endpoint back, it finishes" "$KFORGE" --db d.db search
check "failed calls were retried" test "$(q d.db 'select count(*) from llm_calls where error is not null and retry_of is null')" = 0
check "every failed attempt is kept" test "$(q d.db 'select count(*) from llm_calls where error is not null and retry_of is not null')" = 3
check "all rounds have kernels" test "$(q d.db 'select count(distinct round) from candidates')" = 3
stop_mock

lacks_key() { ! grep -r -l -a -F "$KFORGE_LLM_API_KEY" "$T_TMP" >/dev/null 2>&1; }
check "the API key appears in no file written" lacks_key
