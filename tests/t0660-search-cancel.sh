#!/bin/sh
# SIGTERM or SIGINT during an LLM call: the search stops within seconds
# (not after the call's timeouts and retries), records the call as
# cancelled with its attempts, and the store resumes to a finished run.
. "$KF_ROOT/tests/lib.sh"
. "$KF_ROOT/tests/llm-lib.sh"
export KFORGE_ROOT="$KF_ROOT"
need_nvrtc "compile-only searches cannot run"
ARGS="--problems 19 --compile-only --rounds 1 -k 1 -m 1 --proposer llm --no-reference --jobs 1"
q() { sqlite3 "$1" "$2"; }
now_ms() { date +%s%3N; }

# interrupt NAME SIGNAL: starts a search on NAME.db, waits until the mock
# has received its first request, sends SIGNAL, and sets $secs (tenths of
# a second from the signal to the exit) and $rc.
interrupt() {
	"$KFORGE" --db "$1.db" search $ARGS >"$1.out" 2>&1 &
	_pid=$!
	_w=0
	while [ ! -s "$T_TMP/$1.log" ] && [ $_w -lt 300 ]; do sleep 0.05; _w=$((_w + 1)); done
	sleep 0.3 # inside the transfer (or the back-off wait)
	_t0=$(now_ms)
	kill -"$2" "$_pid"
	_w=0
	while kill -0 "$_pid" 2>/dev/null && [ $_w -lt 600 ]; do sleep 0.05; _w=$((_w + 1)); done
	secs=$((($(now_ms) - _t0) / 100))
	kill -9 "$_pid" 2>/dev/null
	wait "$_pid"
	rc=$?
}

# The server never answers; the defaults would wait 600 s per attempt, 5 times.
start_mock hang --default timeout
interrupt hang TERM
check "SIGTERM during a call: exits within 2 s (took ${secs}0 ms)" test "$secs" -lt 20
check "exit 1 (stopped, resumable)" test "$rc" -eq 1
contains "says how to resume" hang.out "search stopped; run 'kforge search' again to resume"
check "the call is recorded as cancelled" test "$(q hang.db "select error from llm_calls")" = cancelled
check "with its one attempt, cancelled" test "$(q hang.db "select json_extract(attempts, '\$[0].class') || ' ' || json_array_length(attempts) from llm_calls")" = "cancelled 1"
check "the run is stopped" test "$(q hang.db "select status from runs")" = stopped
check "the stopped invocation recorded its session (issue 42)" test \
	"$(q hang.db "select count(*)||' '||status||' '||(gpu_name is null)||' '||levels from search_sessions")" = "1 stopped 1 [1]"
check "the store is sound" test "$(q hang.db 'PRAGMA integrity_check')" = ok
ID=$(q hang.db "select id from llm_calls")
start_mock good
expect_exit 0 "resumed against a good server, the search finishes" "$KFORGE" --db hang.db search
check "the cancelled call was retried and answered" test "$(q hang.db "select attempt || ' ' || http_status || ' ' || coalesce(error, '-') from llm_calls where id = '$ID'")" = "2 200 -"
check "the cancelled attempt is kept as ID#1" test "$(q hang.db "select error from llm_calls where id = '$ID#1'")" = cancelled
check "kernels were made" test "$(q hang.db "select count(*) from candidates")" -gt 0
check "the resumed invocation recorded a second session, finished, with the candidates" test \
	"$(q hang.db "select group_concat(status || ':' || candidates, ' ') from (select * from search_sessions order by started_at, status desc)")" = \
	"stopped:0 finished:$(q hang.db "select count(*) from candidates")"

# In a back-off wait: a 429 asking for 60 s, then SIGINT.
script wait '{"steps": [{"mode": "429", "retry_after": 60}], "default": {"mode": "timeout"}}'
start_mock bo --script "$T_TMP/wait.json"
interrupt bo INT
check "SIGINT during a back-off wait: exits within 2 s (took ${secs}0 ms)" test "$secs" -lt 20
check "exit 1" test "$rc" -eq 1
check "the call is recorded as cancelled, after its 429 attempt" test "$(q bo.db "select error || ' ' || json_extract(attempts, '\$[0].http_status') || ' ' || json_array_length(attempts) from llm_calls")" = "cancelled 429 1"
check "one request only" test "$(requests bo)" -eq 1
check "the invocation stopped by SIGINT recorded its session" test "$(q bo.db "select count(*)||' '||status from search_sessions")" = "1 stopped"
stop_mock
