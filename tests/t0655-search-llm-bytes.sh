#!/bin/sh
# Texts that are not UTF-8 never reach the store: a response with bytes
# that are not UTF-8 is a recorded failed call whose response and error
# the store keeps as UTF-8 (U+FFFD in their place), so the dataset packs
# it as JSON; a compile log cut inside a character (the eval detail keeps
# its first 4000 bytes) is recorded, not an SQL error.
. "$KF_ROOT/tests/lib.sh"
. "$KF_ROOT/tests/llm-lib.sh"
export KFORGE_ROOT="$KF_ROOT"
need_nvrtc "compile-only searches cannot run"
q() { sqlite3 "$1" "$2"; }
printf '{"retries": 0, "backoff_base_s": 0}\n' >llm.json
export KFORGE_LLM_CONFIG="$T_TMP/llm.json"
ARGS="--compile-only --rounds 1 -k 1 -m 3 --proposer llm --no-reference"

# Every text of every table is UTF-8 (python reads the bytes).
all_utf8() {
	python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.text_factory = bytes
bad = []
for (t,) in c.execute("select name from sqlite_master where type = 'table'"):
    cols = [r[1] for r in c.execute("pragma table_info(%s)" % t.decode())]
    for row in c.execute("select * from %s" % t.decode()):
        for k, v in zip(cols, row):
            if isinstance(v, bytes):
                try:
                    v.decode("utf-8")
                except UnicodeDecodeError:
                    bad.append("%s.%s" % (t.decode(), k))
print(" ".join(sorted(set(bad))))
sys.exit(1 if bad else 0)
PY
}

start_mock bad --default badutf8
expect_exit 1 "a response that is not UTF-8 is a failed call" \
	"$KFORGE" --db b.db search --problems 19 $ARGS
lacks "not an SQL error" "$T_TMP/err" "syntax error|prepare"
check "the call is recorded with its error" test "$(q b.db "select count(*) from llm_calls where error like 'response is not JSON%'")" = 1
check "its response is kept, U+FFFD for the bytes" test "$(q b.db "select instr(response, 'caf' || char(65533) || ' ' || char(65533, 65533, 65533)) > 0 from llm_calls")" = 1
check "every text in the store is UTF-8" all_utf8 b.db
expect_exit 0 "the store packs" "$KFORGE" --db b.db pack --version 0.0.1 -o dist
mkdir x && tar -C x --zstd -xf dist/kforge-kernelbench-0.0.1.tar.zst
check "every line of llm_calls.jsonl is JSON" python3 -c "
import json, sys
n = 0
for line in open('x/data/llm_calls.jsonl', encoding='utf-8'):
    json.loads(line); n += 1
sys.exit(0 if n == 1 else 1)"
stop_mock

# Three kernels that fail to compile, each echoed in the log with 1300
# three-byte characters after the error: one of the three cuts falls
# inside a character whatever NVRTC's prefix.
content=$(python3 - <<'PY'
import json
out = []
for pad in range(3):
    out.append("```cuda\n__device__ int f() { return undefined%s; } // %s\n"
               "extern \"C\" __global__ void relu_f32(const float* x, float* y, long long n) { }\n"
               "/*@launch\nrelu_f32<<<ceil_div(batch_size * dim, 256), 256>>>(x, y, batch_size * dim);\n@*/\n```\n"
               % ("x" * pad, "\u20ac" * 1300))
print(json.dumps({"steps": [{"mode": "ok"}, {"mode": "ok", "content": "\n".join(out)}]}))
PY
)
script cut "$content"
start_mock cut --script "$T_TMP/cut.json"
expect_exit 0 "a search whose compile logs hold multibyte characters" \
	"$KFORGE" --db c.db search --problems 19 $ARGS
lacks "no SQL error" "$T_TMP/err" "syntax error|prepare"
check "three compile errors recorded" test "$(q c.db "select count(*) from candidates where status = 'compile_error'")" = 3
check "with the log in their detail" test "$(q c.db "select count(*) from candidates where detail like '%undefined%' || char(8364, 8364, 8364) || '%'")" = 3
check "every text in the store is UTF-8" all_utf8 c.db
stop_mock
