# Helpers for the LLM proposer tests (t05NN): a scripted mockllm on
# loopback and llmcall, which drives the proposer. Sourced after lib.sh.
MOCKLLM="$KF_BUILD/tests/mockllm"
LLMCALL="$KF_BUILD/tests/llmcall"
FIXTURE="$KF_ROOT/tests/fixtures/llm/relu"
PROMPTS="$KF_ROOT/templates/prompts"
MOCK_PID=""
trap 'stop_mock; rm -rf "$T_TMP"' EXIT
# A key that must never land in a file; tests grep for it.
export KFORGE_LLM_API_KEY="sk-kforge-test-$$-c0ffee"
export KFORGE_LLM_MODEL="mock-model"
unset OPENAI_API_KEY KFORGE_LLM_CONFIG

# start_mock NAME [mockllm options...]: log in $T_TMP/NAME.log
start_mock() {
	_n=$1; shift
	stop_mock
	rm -f "$T_TMP/port"
	"$MOCKLLM" --port-file "$T_TMP/port" --log "$T_TMP/$_n.log" --max-seconds 60 "$@" >/dev/null 2>&1 &
	MOCK_PID=$!
	_i=0
	while [ ! -s "$T_TMP/port" ] && [ $_i -lt 100 ]; do sleep 0.05; _i=$((_i + 1)); done
	export KFORGE_LLM_BASE_URL="http://127.0.0.1:$(cat "$T_TMP/port")/v1"
}
stop_mock() {
	if [ -n "$MOCK_PID" ]; then kill "$MOCK_PID" 2>/dev/null; wait "$MOCK_PID" 2>/dev/null; fi
	MOCK_PID=""
}
# script NAME JSON: writes $T_TMP/NAME.json
script() { printf '%s\n' "$2" >"$T_TMP/$1.json"; }
# llm OUT [llmcall args...]: stdout to $T_TMP/OUT.out, stderr to .err; sets $rc
llm() {
	_o=$1; shift
	"$LLMCALL" --problem "$FIXTURE" --prompts "$PROMPTS" "$@" >"$T_TMP/$_o.out" 2>"$T_TMP/$_o.err"
	rc=$?
}
# field OUT JQ-EXPR: value from the first result line of OUT
field() { head -n 1 "$T_TMP/$1.out" | jq -r "$2"; }
# requests NAME: requests the mock received
requests() { wc -l <"$T_TMP/$1.log" | tr -d ' '; }
