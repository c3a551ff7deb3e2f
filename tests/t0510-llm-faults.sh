#!/bin/sh
# The LLM proposer when the server misbehaves: 429 with Retry-After, 500,
# a request that is never answered, a reset connection, malformed JSON, a
# reply without code, a reply over the size cap, a slow trickle, and a
# server that echoes the key. Each is retried or reported and recorded.
. "$KF_ROOT/tests/lib.sh"
. "$KF_ROOT/tests/llm-lib.sh"

script cfg '{"timeout_s": 1, "connect_timeout_s": 1, "retries": 2, "backoff_base_s": 0.01, "backoff_max_s": 3, "max_response_bytes": 65536, "low_speed_bytes": 100, "low_speed_time_s": 1}'
export KFORGE_LLM_CONFIG="$T_TMP/cfg.json"

# 429 with Retry-After: 1, then a normal reply
script s429 '{"steps": [{"mode": "429", "retry_after": 1}]}'
start_mock m429 --script "$T_TMP/s429.json"
llm r429 ideas
check "429: succeeds after a retry" test "$rc" -eq 0
check "429: one retry recorded" test "$(field r429 .record.retries)" -eq 1
check "429: waited for Retry-After" test "$(field r429 '.record.latency_ms | floor')" -ge 900
check "429: two requests" test "$(requests m429)" -eq 2
contains "429: retry logged" "$T_TMP/r429.err" 'HTTP 429.*retry 1 of 2'

# 500 every time: gives up after the retries, with the status
start_mock m500 --default 500
llm r500 ideas
check "500: fails" test "$rc" -eq 1
check "500: status recorded" test "$(field r500 .record.http_status)" -eq 500
check "500: retries recorded" test "$(field r500 .record.retries)" -eq 2
check "500: 1 + 2 requests" test "$(requests m500)" -eq 3
check "500: every attempt kept with its status, class and timing" test "$(field r500 '[.record.attempts[] | select(.http_status == 500 and .class == "http" and .ms >= 0 and (.error | startswith("HTTP 500")))] | length')" -eq 3
check "500: attempts numbered in order, later ones start later" test "$(field r500 '[.record.attempts[].n] == [1,2,3] and .record.attempts[2].start_ms > .record.attempts[1].start_ms')" = true
check "500: error recorded" test "$(field r500 '.record.error | startswith("HTTP 500")')" = true
check "500: server's response recorded" test "$(field r500 '.record.response_bytes')" -gt 0

# never answers, then answers: the timeout ends the first attempt
start_mock mto --mode timeout
llm rto --m 2 implement
check "timeout: succeeds on the retry" test "$rc" -eq 0
check "timeout: one retry" test "$(field rto .record.retries)" -eq 1
check "timeout: the first attempt recorded as a timeout of about 1 s" test "$(field rto '.record.attempts[0] | .class == "timeout" and .ms >= 900')" = true
contains "timeout: logged as a timeout" "$T_TMP/rto.err" 'Timeout was reached.*retry 1'

# connection reset, then a reply
start_mock mrst --mode reset
llm rrst repair
check "reset: succeeds on the retry" test "$rc" -eq 0
check "reset: one retry" test "$(field rrst .record.retries)" -eq 1
check "reset: both attempts kept" test "$(field rrst '.record.attempts | length')" -eq 2
check "reset: the first attempt ended by a TCP reset" test "$(field rrst '.record.attempts[0].class')" = reset
check "reset: the second attempt answered" test "$(field rrst '[.record.attempts[1].class, .record.attempts[1].http_status] | join(" ")')" = "ok 200"

# malformed JSON: not retried, recorded with the raw body
start_mock mbad --mode malformed
llm rbad ideas
check "malformed: fails" test "$rc" -eq 1
check "malformed: status 200 recorded" test "$(field rbad .record.http_status)" -eq 200
check "malformed: error says not JSON" test "$(field rbad '.record.error | startswith("response is not JSON")')" = true
check "malformed: raw response kept" test "$(field rbad '.record.response_bytes')" -gt 10
check "malformed: one request" test "$(requests mbad)" -eq 1

# a reply without a code block: a proposal with a format error, not a failure
start_mock mnc --default nocode
llm rnc implement
check "no code: call succeeds" test "$rc" -eq 0
check "no code: proposal has no source" test "$(field rnc '.proposals[0].source')" = null
check "no code: format error says why" test "$(field rnc '.proposals[0].format_error | contains("no ```cuda code block")')" = true
llm rnc2 ideas
check "no ideas: call succeeds" test "$rc" -eq 0
check "no ideas: recorded as an error" test "$(field rnc2 '.record.error')" = "no ideas could be read from the response"

# over the size cap: fails at once, no retry
script sbig '{"steps": [{"mode": "big", "bytes": 200000}]}'
start_mock mbig --script "$T_TMP/sbig.json"
llm rbig implement
check "big: fails" test "$rc" -eq 1
check "big: error names the cap" test "$(field rbig '.record.error | contains("max_response_bytes")')" = true
check "big: not retried" test "$(requests mbig)" -eq 1
check "big: kept at most the cap" test "$(field rbig .record.response_bytes)" -le 65536

# a slow trickle: the low-speed limit ends it (not the 30 s timeout), then a retry succeeds
script ctr '{"timeout_s": 30, "retries": 1, "backoff_base_s": 0.01, "low_speed_bytes": 2000, "low_speed_time_s": 1}'
script str '{"steps": [{"mode": "trickle", "interval_ms": 100}]}'
start_mock mtr --script "$T_TMP/str.json"
KFORGE_LLM_CONFIG="$T_TMP/ctr.json" llm rtr ideas
check "trickle: succeeds on the retry" test "$rc" -eq 0
check "trickle: one retry" test "$(field rtr .record.retries)" -eq 1
contains "trickle: ended as too slow" "$T_TMP/rtr.err" 'too slow'

# a long wait for the first byte (a thinking model) is not a trickle
start_mock mthink --delay-ms 1500
KFORGE_LLM_CONFIG="$T_TMP/ctr.json" llm rthink ideas
check "slow first byte: succeeds" test "$rc" -eq 0
check "slow first byte: not retried" test "$(field rthink .record.retries)" -eq 0

# nothing listening: connection refused is retried, then reported
stop_mock
llm rcr ideas
check "refused: fails" test "$rc" -eq 1
check "refused: retried" test "$(field rcr .record.retries)" -eq 2
check "refused: no status" test "$(field rcr .record.http_status)" -eq 0

# a server that echoes the key in its error: redacted, not retried
start_mock m401 --default unauthorized
llm r401 --record "$T_TMP/rec401.json" ideas
check "401: fails" test "$rc" -eq 1
check "401: not retried" test "$(requests m401)" -eq 1
check "401: key redacted in the error" test "$(field r401 '.record.error | contains("[REDACTED]")')" = true
contains "401: key redacted in the recorded response" "$T_TMP/rec401.json" 'REDACTED'

# the same with a 500: retried, and the retry's log line is redacted too
script secho '{"steps": [{"mode": "unauthorized", "status": 500}]}'
start_mock mecho --script "$T_TMP/secho.json"
llm recho ideas
check "echo 500: succeeds on the retry" test "$rc" -eq 0
contains "echo 500: the log line is redacted" "$T_TMP/recho.err" 'HTTP 500.*REDACTED.*retry 1'

# the key is in no file we wrote (records, logs, stderr)
if grep -rqF "$KFORGE_LLM_API_KEY" "$T_TMP"; then nok "API key found in $(grep -rlF "$KFORGE_LLM_API_KEY" "$T_TMP" | head -n 3)"; else ok "API key appears in no file"; fi
