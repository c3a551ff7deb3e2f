#!/bin/sh
# Hostile LLM servers (issue 39): a server that echoes the API key in
# encodings that decode to it (JSON \u escapes, %XX, base64) never gets it
# into the store, logs, site or tarball; absurd token usage is recorded as
# unknown and never breaks `kforge site`/`report`; a gzip reply over the
# size cap is a failed call that keeps no body; a server's error text with
# terminal controls reaches the terminal inert.
. "$KF_ROOT/tests/lib.sh"
. "$KF_ROOT/tests/llm-lib.sh"
export KFORGE_ROOT="$KF_ROOT"
need_nvrtc "compile-only searches cannot run"
q() { sqlite3 "$1" "$2"; }
printf '{"retries": 1, "backoff_base_s": 0.01}\n' >llm.json
export KFORGE_LLM_CONFIG="$T_TMP/llm.json"
ARGS="--problems 19 --compile-only --rounds 2 -k 2 -m 2 --proposer llm --no-reference"

# 1. The key, echoed in every encoding, in idea texts and kernel sources.
script echo '{"default": {"mode": "ok", "echo_key": true}}'
start_mock echo --script "$T_TMP/echo.json"
"$KFORGE" --db e.db search $ARGS >search.out 2>search.err
check "search against a key-echoing server runs" grep -q 'finished' search.out
check "the echoes reached the ideas, redacted" test "$(q e.db "select count(*) from ideas where text like '%[REDACTED]%'")" -gt 0
check "... and the kernels, redacted" test "$(q e.db "select count(*) from kernels where source like '%[REDACTED]%'")" -gt 0
stop_mock
"$KFORGE" --db e.db site -o site >site.out 2>site.err
check "site of that store" test -s site/index.html
"$KFORGE" --db e.db pack --version 0.0.1 -o dist >pack.out 2>pack.err
check "pack of that store" test -s dist/kforge-kernelbench-0.0.1.tar.zst
"$KFORGE" --db e.db report 19 >report.out 2>report.err
q e.db .dump >e.dump
zstd -dc dist/kforge-kernelbench-0.0.1.tar.zst >dist.tar
# Every form of the key: plain, \u escapes (lower and upper hex), %XX, and
# the base64 characters that depend on the key alone, at each alignment.
check "the key in no form in the store, logs, site or tarball" python3 - "$T_TMP" <<'PY'
import base64, os, sys
key = os.environ["KFORGE_LLM_API_KEY"].encode()
forms = {"plain": key,
         "json": b"".join(b"\\u%04x" % c for c in key),
         "JSON": b"".join(b"\\u%04X" % c for c in key),
         "url": b"".join(b"%%%02X" % c for c in key),
         "url-lower": b"".join(b"%%%02x" % c for c in key)}
for a in range(3):
    enc = base64.b64encode(b"\0" * a + key + b"\0\0")
    lo, hi = -(-8 * a // 6), (8 * a + 8 * len(key)) // 6
    forms["b64-%d" % a] = enc[lo:hi]
bad = []
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        p = os.path.join(root, f)
        data = open(p, "rb").read()
        for name, v in forms.items():
            if v in data:
                bad.append("%s in %s" % (name, os.path.relpath(p, sys.argv[1])))
print("\n".join("# " + b for b in bad[:20]))
sys.exit(1 if bad else 0)
PY

# 2. Token usage: INT64_MAX, negative, 1e300, fractional, a string.
big='{\"prompt_tokens\":9223372036854775807,\"completion_tokens\":-5,\"total_tokens\":1e300}'
huge='{\"prompt_tokens\":9223372036854775807,\"completion_tokens\":1e300,\"completion_tokens_details\":{\"reasoning_tokens\":-1}}'
odd='{\"prompt_tokens\":12.5,\"completion_tokens\":\"many\"}'
script usage "{\"steps\": [{\"mode\": \"ok\", \"usage\": \"$big\"}, {\"mode\": \"ok\", \"usage\": \"$huge\"}, {\"mode\": \"ok\", \"usage\": \"$odd\"}, {\"mode\": \"ok\", \"usage\": \"$huge\"}]}"
start_mock usage --script "$T_TMP/usage.json"
"$KFORGE" --db u.db search $ARGS >search.out 2>usage.err
check "search against absurd usage runs" grep -q 'finished' search.out
check "no count outside 0..1e9 is stored" test "$(q u.db "select count(*) from llm_calls where prompt_tokens not between 0 and 1000000000 or completion_tokens not between 0 and 1000000000 or reasoning_tokens not between 0 and 1000000000")" = 0
check "the absurd counts are unknown (NULL)" test "$(q u.db "select count(*) from llm_calls where prompt_tokens is null")" -ge 3
contains "and flagged in the log" usage.err 'token usage out of range'
stop_mock
expect_exit 0 "site of that store" "$KFORGE" --db u.db site -o usite
expect_exit 0 "report of that store" "$KFORGE" --db u.db report 19
# whatever the store holds (an older kforge, a merged store): the site adds it up
q u.db "update llm_calls set prompt_tokens = 9223372036854775807, completion_tokens = 9223372036854775807"
expect_exit 0 "site with INT64_MAX tokens in every row" "$KFORGE" --db u.db site -o usite2
lacks "... and no overflow" "$T_TMP/err" 'overflow'
expect_exit 0 "report with INT64_MAX tokens in every row" "$KFORGE" --db u.db report

# 3. gzip: 300 kB of reply in a few kB on the wire; the cap counts decoded bytes.
python3 - "$T_TMP/big.gz" <<'PY'
import gzip, json, sys
c = "```cuda\n" + "// padding padding padding padding\n" * 9000 + "```\n"
b = json.dumps({"choices": [{"message": {"role": "assistant", "content": c}}]}).encode()
open(sys.argv[1], "wb").write(gzip.compress(b))
PY
script capcfg '{"retries": 2, "backoff_base_s": 0.01, "max_response_bytes": 65536}'
script gz "{\"default\": {\"mode\": \"raw\", \"body_file\": \"$T_TMP/big.gz\", \"headers\": \"Content-Encoding: gzip\"}}"
start_mock gz --script "$T_TMP/gz.json"
KFORGE_LLM_CONFIG="$T_TMP/capcfg.json" llm rgz --record "$T_TMP/recgz.json" implement
check "gzip over the cap: fails" test "$rc" -eq 1
check "... as response_too_large" test "$(field rgz '.record.error | startswith("response_too_large")')" = true
check "... keeping no body" test "$(field rgz .record.response_bytes)" -eq 0
check "... not retried" test "$(requests gz)" -eq 1
check "the compressed body was small" test "$(wc -c <"$T_TMP/big.gz")" -lt 65536

# 5. An error body with terminal controls: ESC[2J, an OSC 8 hyperlink, BEL, U+202E.
script ctl '{"default": {"mode": "raw", "status": 500, "body": "{\"error\": \"\u001b[2J\u001b]8;;http://127.0.0.1/x\u0007click\u001b]8;;\u0007 \u202egnp.exe\r\nforged line\"}"}}'
start_mock ctl --script "$T_TMP/ctl.json"
"$KFORGE" --db c.db search $ARGS >ctl.out 2>ctl.err
check "the retry warning quotes the server" grep -q 'HTTP 500.*retry 1 of 1' ctl.err
check "... with ESC, BEL and the override escaped" grep -qF '\x1b[2J\x1b]8;;http://127.0.0.1/x\x07click' ctl.err
check "no control character or bidi override reaches the terminal" python3 - ctl.err ctl.out <<'PY'
import re, sys
bad = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")
sys.exit(1 if any(bad.search(open(f, "rb").read()) for f in sys.argv[1:]) else 0)
PY
check "the stored error is inert too" test "$(q c.db "select count(*) from llm_calls where error like '%' || char(27) || '%'")" = 0
stop_mock
